package pii

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/nyaruka/phonenumbers"
)

// TestValidNSNMatchesLibrary checks that validNSN, built from
// phonenumbers' metadata, agrees with phonenumbers.IsValidNumber on
// numbers drawn at random (fixed seed) from the regions' example numbers
// with their last digits changed.
func TestValidNSNMatchesLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	regions := []string{"US", "CA", "GB", "DE", "FR", "ES", "IT", "NL", "AT", "CH", "BE", "PL", "PT",
		"SE", "NO", "DK", "FI", "IE", "IN", "AU", "NZ", "BR", "MX", "JP", "CN", "KR", "ZA", "NG", "RU", "TR"}
	checked, differ := 0, 0
	for _, reg := range regions {
		for _, typ := range []phonenumbers.PhoneNumberType{phonenumbers.FIXED_LINE, phonenumbers.MOBILE, phonenumbers.TOLL_FREE} {
			ex := phonenumbers.GetExampleNumberForType(reg, typ)
			if ex == nil {
				continue
			}
			base := strconv.FormatUint(ex.GetNationalNumber(), 10)
			for k := 0; k < 60; k++ {
				b := []byte(base)
				// Change up to the last four digits, and sometimes the length.
				for p := max(0, len(b)-4); p < len(b); p++ {
					b[p] = byte('0' + rng.IntN(10))
				}
				switch rng.IntN(6) {
				case 0:
					b = b[:len(b)-1]
				case 1:
					b = append(b, byte('0'+rng.IntN(10)))
				}
				nn, _ := strconv.ParseUint(string(b), 10, 64)
				cc := ex.GetCountryCode()
				pn := &phonenumbers.PhoneNumber{CountryCode: &cc, NationalNumber: &nn}
				want := phonenumbers.IsValidNumber(pn)
				_, got := validNSN(int(cc), []byte(strconv.FormatUint(nn, 10)))
				checked++
				if got != want {
					differ++
					t.Errorf("%s +%d %d: validNSN = %v, IsValidNumber = %v", reg, cc, nn, got, want)
				}
			}
		}
	}
	if checked < 1000 {
		t.Fatalf("checked only %d numbers", checked)
	}
	t.Logf("%d numbers checked, %d differ", checked, differ)
}
