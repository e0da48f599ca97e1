package compliance

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// Mask is the displayable form of a detected value: enough to recognise
// which one it was (the last four digits of a card or an account, the
// domain's top level of an e-mail, a key's public prefix), never enough to
// use it. Values of unknown shape keep nothing.
func Mask(t detect.Type, v string) string {
	switch t {
	case detect.CreditCard, detect.IBAN, detect.SSN, detect.Phone:
		return keepLastDigits(v, lastDigits(t))
	case detect.Email:
		if at := strings.LastIndexByte(v, '@'); at > 0 {
			dot := strings.LastIndexByte(v[at:], '.')
			tld := ""
			if dot > 0 {
				tld = v[at+dot:]
			}
			first, _ := utf8.DecodeRuneInString(v)
			return string(first) + "***@***" + tld
		}
	case detect.APIKey, detect.AWSAccessKey:
		// Public prefixes name the provider (sk-ant-, AKIA, ghp_): keep
		// at most four characters and only if the value is long.
		if len(v) >= 20 {
			return v[:4] + "…" + "[" + string(t) + "]"
		}
	}
	return "[" + string(t) + "]"
}

func lastDigits(t detect.Type) int {
	if t == detect.Phone {
		return 2
	}
	return 4
}

// keepLastDigits replaces every digit and letter but the last n digits by
// '*', keeping separators.
func keepLastDigits(v string, n int) string {
	keepFrom := len(v)
	for i := len(v) - 1; i >= 0 && n > 0; i-- {
		if '0' <= v[i] && v[i] <= '9' {
			n--
			keepFrom = i
		}
	}
	var b strings.Builder
	for i, r := range v {
		if i < keepFrom && (unicode.IsDigit(r) || unicode.IsLetter(r)) {
			b.WriteByte('*')
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
