package pii

import (
	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// idWindow is how far after a passport or licence key word the number may
// start.
const idWindow = 40

// idFiller are the words allowed between a key word and its number
// ("passport number is", "licence no.", "Führerschein-Nr.").
var idFiller = map[string]bool{"number": true, "no": true, "nr": true, "num": true, "nummer": true,
	"numéro": true, "número": true, "numero": true, "id": true, "is": true, "was": true, "of": true,
	"my": true, "the": true, "n°": true, "nº": true, "card": true, "license": true, "licence": true,
	"de": true, "du": true, "permis": true, "licencia": true, "reads": true, "it's": true, "id#": true}

// idAfter finds the document number after a passport or driver's-licence
// key word: within idWindow bytes, past filler words and punctuation, one
// token of capitals and digits. A passport number is 6–10 characters with
// at least five digits (US 9 digits or a letter and 8, UK 9, DE C01X00T47,
// FR 12AB34567); a licence number 5–20 characters, inner dashes allowed,
// with at least four digits (most US states, UK MORGA657054SM9IJ, Florida
// D123-456-78-901-0).
func idAfter(text string, from int, t detect.Type, dst []detect.Finding) []detect.Finding {
	limit := min(len(text), from+idWindow)
	i := from
	var w word
	for i < limit {
		c := text[i]
		switch {
		case c == ' ' || c == ':' || c == '#' || c == '.' || c == '-' || c == '\t' || c == '=' || c == '(' || c == ')':
			i++
			continue
		case isDigit(c) || isUpper(c):
			if end, ok := idToken(text, i, t); ok {
				score, rule := 0.85, "passport:context"
				if t == detect.DriversLicense {
					score, rule = 0.8, "licence:context"
				}
				return append(dst, finding(t, i, end, score, rule))
			}
		}
		if !startsLetter(text[i:]) {
			return dst
		}
		e := readWord(text, i, &w)
		if !idFiller[w.k()] {
			return dst
		}
		i = e
	}
	return dst
}

// idToken reads a document number at i.
func idToken(text string, i int, t detect.Type) (int, bool) {
	j, digits, n := i, 0, 0
	for j < len(text) {
		c := text[j]
		switch {
		case isDigit(c):
			digits++
			n++
		case isUpper(c):
			n++
		case c == '-' && t == detect.DriversLicense && j+1 < len(text) && isAlnum(text[j+1]) && j > i:
		default:
			goto done
		}
		j++
	}
done:
	if j < len(text) && (isWordByte(text[j]) || text[j] == '@') {
		return 0, false
	}
	if t == detect.Passport {
		return j, n >= 6 && n <= 10 && digits >= 5 && j-i == n
	}
	return j, n >= 5 && n <= 20 && digits >= 4
}
