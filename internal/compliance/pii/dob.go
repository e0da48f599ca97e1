package pii

import (
	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// months maps month names and abbreviations (English, German, French,
// Spanish, Italian; lower case) to their number.
var months = map[string]int{
	"january": 1, "jan": 1, "february": 2, "feb": 2, "march": 3, "mar": 3, "april": 4, "apr": 4,
	"may": 5, "june": 6, "jun": 6, "july": 7, "jul": 7, "august": 8, "aug": 8, "september": 9,
	"sep": 9, "sept": 9, "october": 10, "oct": 10, "november": 11, "nov": 11, "december": 12, "dec": 12,
	"januar": 1, "jänner": 1, "februar": 2, "märz": 3, "maerz": 3, "mai": 5, "juni": 6, "juli": 7,
	"oktober": 10, "okt": 10, "dezember": 12, "dez": 12,
	"janvier": 1, "février": 2, "fevrier": 2, "mars": 3, "avril": 4, "juin": 6, "juillet": 7,
	"août": 8, "aout": 8, "septembre": 9, "octobre": 10, "novembre": 11, "décembre": 12, "decembre": 12,
	"enero": 1, "febrero": 2, "marzo": 3, "abril": 4, "mayo": 5, "junio": 6, "julio": 7, "agosto": 8,
	"septiembre": 9, "setiembre": 9, "octubre": 10, "noviembre": 11, "diciembre": 12,
	"gennaio": 1, "febbraio": 2, "aprile": 4, "maggio": 5, "giugno": 6, "luglio": 7, "settembre": 9,
	"ottobre": 10, "dicembre": 12,
}

// dobWindow is how far after a birth key word the date may start.
const dobWindow = 48

// dobAfter finds the date that follows a birth key word ("born on",
// "DOB:", "date of birth", "Geburtsdatum") within dobWindow bytes.
func dobAfter(text string, w *word, dst []detect.Finding) []detect.Finding {
	limit := min(len(text), w.end+dobWindow)
	for i := w.end; i < limit; i++ {
		c := text[i]
		if c == '\n' && i > w.end+2 {
			break
		}
		if !isDigit(c) && !isLetter(c) && c < 0x80 {
			continue
		}
		if i > 0 && isWordByte(text[i-1]) && i != w.end {
			continue
		}
		if end, ok := dateAt(text, i); ok {
			return append(dst, finding(detect.DateOfBirth, i, end, 0.9, "dob:context"))
		}
	}
	return dst
}

// dateAt parses a date that starts at i and returns its end: numeric
// (1984-03-05, 05.03.1984, 3/5/84) or with a month name (5 March 1984,
// March 5th, 1984, 5. März 1984, 5 de marzo de 1984). A year is required.
func dateAt(text string, i int) (int, bool) {
	if isDigit(text[i]) {
		if end, ok := numericDate(text, i); ok {
			return end, true
		}
		return dayMonthYear(text, i)
	}
	return monthDayYear(text, i)
}

// digitsAt returns the end of the digits at i and their value (-1 if more
// than max digits).
func digitsAt(text string, i, max int) (int, int) {
	j := i
	for j < len(text) && isDigit(text[j]) {
		j++
	}
	if j == i || j-i > max {
		return j, -1
	}
	return j, atoi(text[i:j])
}

func numericDate(text string, i int) (int, bool) {
	e1, a := digitsAt(text, i, 4)
	if a < 0 || e1 >= len(text) {
		return 0, false
	}
	sep := text[e1]
	if sep != '/' && sep != '-' && sep != '.' {
		return 0, false
	}
	e2, b := digitsAt(text, e1+1, 2)
	if b < 0 || e2 >= len(text) || text[e2] != sep {
		return 0, false
	}
	e3, c := digitsAt(text, e2+1, 4)
	if c < 0 || e3 < len(text) && isWordByte(text[e3]) {
		return 0, false
	}
	l1, l3 := e1-i, e3-e2-1
	switch {
	case l1 == 4:
		return e3, validYMD(a, b, c)
	case l1 <= 2 && (l3 == 4 || l3 == 2):
		y := c
		if l3 == 2 {
			y = 1900 + c
		}
		return e3, validYMD(y, b, a) || validYMD(y, a, b)
	}
	return 0, false
}

// monthAt reads a month name at i and returns its end and number.
func monthAt(text string, i int) (int, int) {
	if i >= len(text) || !startsLetter(text[i:]) {
		return i, 0
	}
	var w word
	e := readWord(text, i, &w)
	m := months[w.k()]
	if m == 0 {
		return i, 0
	}
	if e < len(text) && text[e] == '.' {
		e++
	}
	return e, m
}

// spaces skips spaces and the given punctuation.
func spaces(text string, i int, punct string) int {
	for i < len(text) {
		c := text[i]
		if c == ' ' || c == '\t' {
			i++
			continue
		}
		found := false
		for k := 0; k < len(punct); k++ {
			if punct[k] == c {
				found = true
			}
		}
		if !found {
			break
		}
		i++
	}
	return i
}

// ordinal skips an ordinal suffix (st, nd, rd, th, er, º, .) at i.
func ordinal(text string, i int) int {
	if i+2 <= len(text) {
		switch text[i : i+2] {
		case "st", "nd", "rd", "th", "er":
			if i+2 == len(text) || !isLetter(text[i+2]) {
				return i + 2
			}
		}
	}
	if i < len(text) && text[i] == '.' {
		return i + 1
	}
	return i
}

// skipWord skips one of the connecting words "of", "de", "del" at i.
func skipWord(text string, i int) int {
	for _, w := range []string{"of ", "de ", "del "} {
		if len(text)-i >= len(w) && text[i:i+len(w)] == w {
			return i + len(w)
		}
	}
	return i
}

// yearAt reads a four-digit year at i.
func yearAt(text string, i int) (int, bool) {
	e, y := digitsAt(text, i, 4)
	if e-i != 4 || y < 1000 || e < len(text) && isWordByte(text[e]) {
		return 0, false
	}
	return e, true
}

// dayMonthYear parses "5 March 1984", "5th of March, 1984", "5. März 1984",
// "5 de marzo de 1984".
func dayMonthYear(text string, i int) (int, bool) {
	e, d := digitsAt(text, i, 2)
	if d < 1 || d > 31 {
		return 0, false
	}
	e = ordinal(text, e)
	e = spaces(text, e, "")
	e = skipWord(text, e)
	e, m := monthAt(text, e)
	if m == 0 {
		return 0, false
	}
	e = spaces(text, e, ",")
	e = skipWord(text, e)
	return yearAt(text, e)
}

// monthDayYear parses "March 5, 1984", "Mar. 5th 1984".
func monthDayYear(text string, i int) (int, bool) {
	e, m := monthAt(text, i)
	if m == 0 {
		return 0, false
	}
	e = spaces(text, e, "")
	e2, d := digitsAt(text, e, 2)
	if d < 1 || d > 31 {
		return 0, false
	}
	e = ordinal(text, e2)
	e = spaces(text, e, ",")
	return yearAt(text, e)
}
