package pii

import (
	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// ibanLengths is the length of an IBAN per country, from the SWIFT IBAN
// registry (ISO 13616), release 97 and later additions (FK, HN, MN, YE).
var ibanLengths = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22,
	"BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DJ": 27,
	"DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18, "FK": 18, "FO": 18, "FR": 27,
	"GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HN": 28, "HR": 21, "HU": 28,
	"IE": 22, "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28,
	"LC": 32, "LI": 21, "LT": 20, "LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22,
	"MK": 19, "MN": 20, "MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23,
	"PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
	"SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25, "SV": 28,
	"TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20, "YE": 30,
}

var ibanWords = newWordSet("iban", "account", "acct", "bank", "konto", "kontonummer", "bankverbindung",
	"cuenta", "compte", "rib", "transfer", "wire", "sepa", "überweisung", "payee", "beneficiary")

// scanIBANs finds IBANs: a country code of the registry in capitals at the
// start of a word, two check digits, then letters and digits, in groups
// split by single spaces or not at all, up to the country's length exactly
// (the next byte may not continue the group), passing ISO 7064 mod 97-10.
func scanIBANs(text string, dst []detect.Finding) []detect.Finding {
	for i := 0; i+4 <= len(text); i++ {
		if !isUpper(text[i]) || !isUpper(text[i+1]) || !isDigit(text[i+2]) || !isDigit(text[i+3]) {
			continue
		}
		if i > 0 && isWordByte(text[i-1]) {
			continue
		}
		want, ok := ibanLengths[text[i:i+2]]
		if !ok {
			continue
		}
		end, n := i, 0
		for end < len(text) && n < want {
			c := text[end]
			switch {
			case isAlnum(c):
				n++
				end++
			case c == ' ' && end > i && end+1 < len(text) && isAlnum(text[end+1]) && text[end-1] != ' ':
				end++
			default:
				n = -1 - n // stop: too short
			}
			if n < 0 {
				break
			}
		}
		if n != want || end < len(text) && isWordByte(text[end]) {
			continue
		}
		if !ibanMod97(text[i:end]) {
			continue
		}
		score := 0.95
		if near(text, i, end, 40, ibanWords) {
			score = 0.99
		}
		dst = append(dst, finding(detect.IBAN, i, end, score, "iban:mod97"))
		i = end - 1
	}
	return dst
}

// ibanMod97 reports whether the IBAN s (letters, digits and spaces) passes
// the mod 97-10 check: the first four characters moved to the end, letters
// read as 10..35, the number mod 97 is 1.
func ibanMod97(s string) bool {
	rem := 0
	add := func(c byte) {
		switch {
		case isDigit(c):
			rem = (rem*10 + int(c-'0')) % 97
		case isUpper(c):
			rem = (rem*100 + int(c-'A') + 10) % 97
		case isLower(c):
			rem = (rem*100 + int(c-'a') + 10) % 97
		}
	}
	k := 0 // index past the first four alphanumerics
	for seen := 0; k < len(s) && seen < 4; k++ {
		if isAlnum(s[k]) {
			seen++
		}
	}
	for j := k; j < len(s); j++ {
		add(s[j])
	}
	for j := 0; j < k; j++ {
		add(s[j])
	}
	return rem == 1
}
