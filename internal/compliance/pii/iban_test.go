package pii

import (
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// IBANs below are the examples of the SWIFT IBAN registry.
func TestIBAN(t *testing.T) {
	runTable(t, detect.IBAN, []tcase{
		{"de spaced", "IBAN: DE89 3704 0044 0532 0130 00.", []string{"DE89 3704 0044 0532 0130 00"}},
		{"de compact", "to DE89370400440532013000 today", []string{"DE89370400440532013000"}},
		{"gb letters", "GB82 WEST 1234 5698 7654 32", []string{"GB82 WEST 1234 5698 7654 32"}},
		{"fr letter in bban", "FR14 2004 1010 0505 0001 3M02 606", []string{"FR14 2004 1010 0505 0001 3M02 606"}},
		{"nl", "NL91ABNA0417164300", []string{"NL91ABNA0417164300"}},
		{"no shortest", "NO93 8601 1117 947", []string{"NO93 8601 1117 947"}},
		{"mt longest", "MT84MALT011000012345MTLCAST001S", []string{"MT84MALT011000012345MTLCAST001S"}},
		{"two", "DE89370400440532013000, CH9300762011623852957", []string{"DE89370400440532013000", "CH9300762011623852957"}},

		{"wrong check digit", "DE89 3704 0044 0532 0130 01", nil},
		{"wrong check digits", "DE88370400440532013000", nil},
		{"too short", "DE89 3704 0044 0532 0130", nil},
		{"too long", "DE893704004405320130001", nil},
		{"unknown country", "XX89370400440532013000", nil},
		{"inside a word", "ABDE89370400440532013000", nil},
		{"double space", "DE89  3704 0044 0532 0130 00", nil},
	})
}

func TestIBANMod97(t *testing.T) {
	for s, want := range map[string]bool{
		"GB82WEST12345698765432":      true,
		"GB82 WEST 1234 5698 7654 32": true,
		"gb82west12345698765432":      true,
		"GB83WEST12345698765432":      false,
		"":                            false,
	} {
		if got := ibanMod97(s); got != want {
			t.Errorf("ibanMod97(%q) = %v, want %v", s, got, want)
		}
	}
}
