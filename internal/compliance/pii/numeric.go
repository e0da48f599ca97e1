package pii

import (
	"strings"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// maxGroups bounds the digit groups of one run; a longer run is cut and the
// rest scanned as a new run.
const maxGroups = 32

// group is one maximal sequence of ASCII digits, text[start:end].
type group struct {
	start, end int
	// date marks a group that belongs to a date (2024-01-31, 31.01.2024,
	// 01/31/24) or a time of day (next to ':'): it can be part of no phone,
	// card or SSN.
	date bool
	// used marks a group of a card, an SSN or an IPv4 address found
	// before: the phone detector leaves it alone.
	used bool
}

// numRun is a sequence of digit groups joined by short separators (at most
// three of " -./()"): "+1 (415) 555-0100", "4111 1111 1111 1111",
// "10.0.0.1", "123-45-6789".
type numRun struct {
	g     [maxGroups]group
	n     int
	start int  // first byte: the first group's, or a '+' or '(' before it
	plus  bool // a '+' comes before the first group
	// gluedBefore and gluedAfter mark a run stuck to a word ("v1.2.3.4",
	// "SKU-1234-5678", "a716-446655440000", "123abc"): part of an
	// identifier, not a value of its own.
	gluedBefore, gluedAfter bool
	// afterAt marks a run right after "word@" (user@10.0.0.1,
	// pkg@1.2.3): an address may follow, no card, phone or SSN.
	afterAt bool
	// inIBAN marks a run inside an IBAN-shaped chain (a country code,
	// check digits, then groups): its digits belong to the IBAN, valid or
	// not.
	inIBAN bool
}

// use marks groups i..j of r used.
func (r *numRun) use(i, j int) {
	for k := i; k <= j; k++ {
		r.g[k].used = true
	}
}

func (r *numRun) digits(i, j int) int {
	n := 0
	for k := i; k <= j; k++ {
		n += r.g[k].end - r.g[k].start
	}
	return n
}

// sep is the separator between groups k-1 and k.
func (r *numRun) sep(text string, k int) string { return text[r.g[k-1].end:r.g[k].start] }

// glued reports whether the groups i..j of r are stuck to a word on either
// side, at the run's edges, or lie in an IBAN: they are no value of their
// own.
func (r *numRun) glued(i, j int) bool {
	return i == 0 && (r.gluedBefore || r.afterAt) || j == r.n-1 && r.gluedAfter || r.inIBAN
}

func isNumSep(c byte) bool {
	return c == ' ' || c == '-' || c == '.' || c == '/' || c == '(' || c == ')'
}

// uniSep is the length of the Unicode space or dash text starts with that
// word processors and typesetters put between digit groups (no-break,
// thin, narrow, figure, en, em and other fixed-width spaces; hyphen,
// non-breaking hyphen, figure and en dashes, the minus sign), 0 for none.
func uniSep(text string) int {
	if text == "" || text[0] < 0x80 {
		return 0
	}
	for _, sep := range uniSeps {
		if strings.HasPrefix(text, sep[0]) {
			return len(sep[0])
		}
	}
	return 0
}

// uniSeps are the Unicode separators uniSep knows, each with the ASCII
// separator it stands for.
var uniSeps = [][2]string{
	{"\u00a0", " "}, {"\u2009", " "}, {"\u202f", " "}, {"\u2007", " "}, {"\u2002", " "}, {"\u2003", " "},
	{"\u2004", " "}, {"\u2005", " "}, {"\u2006", " "}, {"\u2008", " "}, {"\u200a", " "}, {"\u205f", " "},
	{"\u3000", " "},
	{"\u2010", "-"}, {"\u2011", "-"}, {"\u2012", "-"}, {"\u2013", "-"}, {"\u2212", "-"},
}

// plainSep maps a separator's Unicode spaces to ' ' and dashes to '-'.
func plainSep(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return sepReplacer.Replace(s)
		}
	}
	return s
}

var sepReplacer = func() *strings.Replacer {
	var pairs []string
	for _, p := range uniSeps {
		pairs = append(pairs, p[0], p[1])
	}
	return strings.NewReplacer(pairs...)
}()

// scanNumbers finds the runs of digits in text and hands each to the
// numeric detectors that are on.
func (d *Detectors) scanNumbers(text string, dst []detect.Finding) []detect.Finding {
	var r numRun
	var ph phoneState
	ph.budget, ph.effort = phoneBudget(len(text)), phoneEffort(len(text))
	i := 0
	for i < len(text) {
		if !isDigit(text[i]) {
			i++
			continue
		}
		r.n, r.plus = 0, false
		r.start = i
		if i > 0 && text[i-1] == '(' {
			r.start = i - 1
		}
		if r.start > 0 && text[r.start-1] == '+' {
			r.start--
			r.plus = true
		}
		if !r.plus && i > 0 && text[i-1] == '(' && i > 1 && text[i-2] == '+' {
			r.start, r.plus = i-2, true
		}
		r.gluedBefore = gluedLeft(text, r.start)
		r.afterAt = r.start >= 2 && text[r.start-1] == '@' && isWordByte(text[r.start-2])
		r.inIBAN = inIBANChain(text, r.start)
		at := i
		for {
			e := at
			for e < len(text) && isDigit(text[e]) {
				e++
			}
			r.g[r.n] = group{start: at, end: e}
			r.n++
			i = e
			if r.n == maxGroups {
				break
			}
			k := e
			for units := 0; k < len(text) && units < 3; units++ {
				if isNumSep(text[k]) {
					k++
				} else if n := uniSep(text[k:]); n > 0 {
					k += n
				} else {
					break
				}
			}
			if k == e || k >= len(text) || !isDigit(text[k]) {
				break
			}
			at = k
		}
		r.gluedAfter = gluedRight(text, i)
		markDates(text, &r)
		dst = d.numeric(text, &r, &ph, dst)
	}
	return dst
}

// gluedLeft reports whether the run starting at start is stuck to a word
// before it: a word byte, or a '-', '_', '.' or '/' after one.
func gluedLeft(text string, start int) bool {
	if start == 0 {
		return false
	}
	c := text[start-1]
	if isWordByte(c) {
		return true
	}
	return (c == '-' || c == '_' || c == '.' || c == '/') && start >= 2 && isWordByte(text[start-2])
}

// inIBANChain reports whether the run starting at start continues an
// IBAN-shaped chain: walking back over letters, digits and single spaces
// (at most 40 bytes) reaches a registry country code and two check digits
// at the start of a word.
func inIBANChain(text string, start int) bool {
	i := start
	for i > 0 && start-i < 40 {
		c := text[i-1]
		if isAlnum(c) || c == ' ' && i >= 2 && isAlnum(text[i-2]) {
			i--
			if i+4 <= len(text) && isUpper(text[i]) && isUpper(text[i+1]) && isDigit(text[i+2]) && isDigit(text[i+3]) &&
				(i == 0 || !isWordByte(text[i-1])) {
				if _, ok := ibanLengths[text[i:i+2]]; ok {
					return true
				}
			}
			continue
		}
		break
	}
	return false
}

// gluedRight reports whether the run ending at end is stuck to a word
// after it ("123abc", "1234-AB"), leaving out a phone extension
// ("x204", "ext. 204") and ordinal or unit-free suffixes the detectors
// handle themselves.
func gluedRight(text string, end int) bool {
	if end >= len(text) {
		return false
	}
	c := text[end]
	if isWordByte(c) {
		return !isExtension(text, end)
	}
	if (c == '-' || c == '_') && end+1 < len(text) && isWordByte(text[end+1]) {
		return true
	}
	return false
}

// isExtension reports whether a phone extension starts at i: "x204",
// "ext204", "ext. 204".
func isExtension(text string, i int) bool {
	j := i
	switch {
	case j < len(text) && (text[j] == 'x' || text[j] == 'X'):
		j++
	case j+3 <= len(text) && (text[j:j+3] == "ext" || text[j:j+3] == "Ext" || text[j:j+3] == "EXT"):
		j += 3
		if j < len(text) && text[j] == '.' {
			j++
		}
		if j < len(text) && text[j] == ' ' {
			j++
		}
	default:
		return false
	}
	return j < len(text) && isDigit(text[j])
}

// markDates flags the groups of r that form a date or a time of day.
func markDates(text string, r *numRun) {
	for k := 0; k < r.n; k++ {
		r.g[k].date, r.g[k].used = false, false
	}
	for k := 0; k < r.n; k++ {
		g := r.g[k]
		// A time: a group next to ':' and a digit ("12:30", "09:15:00").
		if g.end+1 < len(text) && text[g.end] == ':' && isDigit(text[g.end+1]) ||
			g.start >= 2 && text[g.start-1] == ':' && isDigit(text[g.start-2]) {
			r.g[k].date = true
		}
		if k+2 < r.n && isDate(text, r, k) {
			r.g[k].date, r.g[k+1].date, r.g[k+2].date = true, true, true
		}
	}
}

// isDate reports whether groups k..k+2 of r are a date: Y-M-D, D.M.Y,
// D/M/Y or M/D/Y with one separator ('-', '.' or '/'), a four-digit year
// (or a two-digit one with '/' or '.').
func isDate(text string, r *numRun, k int) bool {
	s1, s2 := r.sep(text, k+1), r.sep(text, k+2)
	if len(s1) != 1 || s1 != s2 || (s1[0] != '-' && s1[0] != '.' && s1[0] != '/') {
		return false
	}
	a, b, c := r.g[k], r.g[k+1], r.g[k+2]
	la, lb, lc := a.end-a.start, b.end-b.start, c.end-c.start
	va, vb, vc := atoi(text[a.start:a.end]), atoi(text[b.start:b.end]), atoi(text[c.start:c.end])
	switch {
	case la == 4 && lb <= 2 && lc <= 2:
		return validYMD(va, vb, vc)
	case la <= 2 && lb <= 2 && (lc == 4 || lc == 2 && s1[0] != '-'):
		return validYMD(2000, vb, va) || validYMD(2000, va, vb)
	}
	return false
}

func validYMD(y, m, d int) bool {
	return y >= 1000 && y <= 2999 && m >= 1 && m <= 12 && d >= 1 && d <= 31
}

// numeric runs the numeric detectors over one run.
func (d *Detectors) numeric(text string, r *numRun, ph *phoneState, dst []detect.Finding) []detect.Finding {
	if d.ip {
		dst = ipv4InRun(text, r, dst)
	}
	if d.card {
		dst = cardsInRun(text, r, dst)
	}
	if d.ssn {
		dst = ssnsInRun(text, r, dst)
	}
	if d.phone {
		dst = phonesInRun(text, r, ph, dst)
	}
	return dst
}
