package pii

import (
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// labelled is a prompt with the values a redaction must remove.
var labelled = struct {
	text   string
	values map[string]detect.Type
}{
	text: `Hi John,

please update the customer record: Name: Maria Gonzalez; email maria.gonzalez+crm@example.com;
phone +44 20 7946 0958 (UK office) or (415) 555-0132; SSN 536-22-1234; DOB: 1984-03-05.
She pays with card 4242 4242 4242 4242 (exp 12/27) or the Amex 3782-822463-10005? no: 3782 822463 10005.
Refund to IBAN DE89 3704 0044 0532 0130 00. Passport number: X12345678. Driver's license D123-4567-8901.
The VPN logged her in from 203.0.113.7 and 2001:db8::8a2e:370:7334.

Best regards,
Anna Weber`,
	values: map[string]detect.Type{
		"John":                           detect.Person,
		"Maria Gonzalez":                 detect.Person,
		"maria.gonzalez+crm@example.com": detect.Email,
		"+44 20 7946 0958":               detect.Phone,
		"(415) 555-0132":                 detect.Phone,
		"536-22-1234":                    detect.SSN,
		"1984-03-05":                     detect.DateOfBirth,
		"4242 4242 4242 4242":            detect.CreditCard,
		"3782 822463 10005":              detect.CreditCard,
		"DE89 3704 0044 0532 0130 00":    detect.IBAN,
		"X12345678":                      detect.Passport,
		"D123-4567-8901":                 detect.DriversLicense,
		"203.0.113.7":                    detect.IPAddress,
		"2001:db8::8a2e:370:7334":        detect.IPAddress,
		"Anna Weber":                     detect.Person,
	},
}

// stripSeps removes the separators a value may be written with.
func stripSeps(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '-', '.', '(', ')', '/', '+', '\n':
			return -1
		}
		return r
	}, s)
}

func TestRedactLeavesNoValue(t *testing.T) {
	text := labelled.text
	fs := detect.Resolve(New().Detect(text, nil), len(text))
	red := detect.Redact(text, fs)
	bare := stripSeps(red)
	for v, typ := range labelled.values {
		if strings.Contains(red, v) {
			t.Errorf("%s %q survives redaction:\n%s", typ, v, red)
		}
		if s := stripSeps(v); len(s) >= 8 && strings.Contains(bare, s) {
			t.Errorf("%s %q survives redaction with its separators removed (%q)", typ, v, s)
		}
		if !strings.Contains(red, "["+string(typ)+"]") {
			t.Errorf("no [%s] placeholder in:\n%s", typ, red)
		}
	}
	// Each finding's type is the labelled one.
	for _, f := range fs {
		v := text[f.Start:f.End]
		if want, ok := labelled.values[v]; ok && want != f.Type {
			t.Errorf("%q found as %s, want %s", v, f.Type, want)
		}
	}
}

// TestRedactCompactForms checks that values written without separators are
// found too: the spaced and the compact form are one value.
func TestRedactCompactForms(t *testing.T) {
	for _, v := range []string{"4242 4242 4242 4242", "DE89 3704 0044 0532 0130 00", "+44 20 7946 0958", "3782 822463 10005"} {
		compact := strings.ReplaceAll(v, " ", "")
		text := "value: " + compact + " end"
		red := detect.Redact(text, detect.Resolve(New().Detect(text, nil), len(text)))
		if strings.Contains(red, compact) || strings.Contains(stripSeps(red), stripSeps(v)) {
			t.Errorf("%q survives redaction: %q", compact, red)
		}
	}
}

// TestConcurrentDetect runs one Detectors from several goroutines (the
// phone metadata is compiled lazily, once): run it with -race.
func TestConcurrentDetect(t *testing.T) {
	d := New()
	done := make(chan int)
	for g := 0; g < 8; g++ {
		go func() {
			n := 0
			for i := 0; i < 20; i++ {
				n = len(d.Detect(labelled.text, nil))
			}
			done <- n
		}()
	}
	want := -1
	for g := 0; g < 8; g++ {
		got := <-done
		if want < 0 {
			want = got
		}
		if got != want || got == 0 {
			t.Errorf("concurrent Detect found %d findings, another %d", got, want)
		}
	}
}
