package verify

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// numberRun accumulates a run of English number words ("twenty five",
// "one hundred and five", "a dozen").
type numberRun struct {
	active    bool
	total     float64 // of the completed scales: "two thousand" in "two thousand and five"
	cur       float64 // below the last scale
	onlyOne   bool    // the run is the single word "one"
	pendingA  bool    // the previous word was "a"/"an", which "hundred"/"dozen" may follow
	lastScale bool    // the previous word was a scale, which "and" may follow
}

// flush ends the run, recording its value.
func (n *numberRun) flush(x *extractor) {
	if n.active {
		if n.onlyOne {
			x.f.SoftOnes++
		} else {
			x.f.Numbers = append(x.f.Numbers, formatFloat(n.total+n.cur))
		}
	}
	*n = numberRun{}
}

// numberWord feeds a lowercase word to the number run and the qualifiers of
// the previous digit number; it reports whether the word was a number word.
func (x *extractor) numberWord(w string, lex *lexeme) bool {
	if lex == nil {
		lex = &noLexeme
	}
	n := &x.num
	if x.lastNum >= 0 {
		i := x.lastNum
		x.lastNum = -1
		switch w {
		case "percent", "pct", "percentage":
			x.percent1(i)
			return true
		}
		if s := lex.scale; s > 0 && !n.active {
			if v, err := strconv.ParseFloat(x.f.Numbers[i], 64); err == nil {
				x.f.Numbers[i] = formatFloat(v * s)
				return true
			}
		}
	}
	if n.active && (w == "percent" || w == "pct") {
		before := len(x.f.Numbers)
		n.flush(x)
		if len(x.f.Numbers) > before {
			x.percent1(before)
		}
		return true
	}
	if v := lex.num; lex.isNum {
		if w == "dozen" {
			if !n.active && !n.pendingA {
				return false // "dozens" is no number; "dozen" alone is vague
			}
			n.cur = max(n.cur, 1) * v
		} else {
			n.cur += v
		}
		n.onlyOne = false
		n.active, n.pendingA, n.lastScale = true, false, false
		if strings.HasSuffix(w, "th") || w == "third" {
			n.flush(x) // an ordinal ends the run
		}
		return true
	}
	if w == "one" {
		if !n.active {
			n.onlyOne = !n.pendingA // "one" alone may mean no number; "a one" is odd
		}
		n.cur++
		n.active, n.pendingA, n.lastScale = true, false, false
		return true
	}
	if s := lex.scale; s > 0 {
		if s == 100 {
			n.cur = max(n.cur, 1) * s
		} else {
			n.total += max(n.cur, 1) * s
			n.cur = 0
		}
		n.onlyOne = false
		n.active, n.pendingA, n.lastScale = true, false, true
		return true
	}
	if w == "and" && n.lastScale {
		n.lastScale = false
		return false
	}
	n.flush(x)
	n.pendingA = w == "a" || w == "an"
	return false
}

// noLexeme is the lexeme of words the lexicon does not know.
var noLexeme lexeme

// number parses a chunk that starts with a number: "1,000", "-2.5", "$30",
// "v1.2.3", "3rd", "5km", "10am", "50%", "2024-05-01".
func (x *extractor) number(c string) {
	x.num.flush(x)
	negative := x.prev == "minus" || x.prev == "negative"
	version, money := false, false
	i := 0
	for i < len(c) {
		r, n := utf8.DecodeRuneInString(c[i:])
		if r >= '0' && r <= '9' || r == '.' {
			break
		}
		switch r {
		case '-', '−':
			negative = true
		case 'v', 'V':
			version = true
		default:
			money = r != '+' && r != '.'
		}
		i += n
	}
	j := i
	for j < len(c) {
		b := c[j]
		if b >= '0' && b <= '9' {
			j++
			continue
		}
		if strings.IndexByte(",.:/-", b) >= 0 && j+1 < len(c) && c[j+1] >= '0' && c[j+1] <= '9' {
			j++
			continue
		}
		break
	}
	body, suffix := c[i:j], strings.ToLower(c[j:])
	canon, numeric := canonicalNumber(body, version)
	x.prev = ""
	switch {
	case suffix == "k" && numeric && money: // $10k; but 401k is no 401,000
		v, _ := strconv.ParseFloat(canon, 64)
		canon = formatFloat(v * 1000)
	case suffix == "am" || suffix == "a.m" || suffix == "pm" || suffix == "p.m":
		x.f.Poles = append(x.f.Poles, lexicon[suffix].poles...)
	}
	if negative && numeric {
		canon = "-" + canon
	}
	if strings.HasPrefix(suffix, "%") {
		canon += "%"
	}
	x.f.Numbers = append(x.f.Numbers, canon)
	x.lastNum = len(x.f.Numbers) - 1
	if suffix != "" && suffix != "%" {
		x.lastNum = -1
	}
}

// canonicalNumber returns the canonical form of the digits and separators of
// a number, and whether it is a plain number (not a version, date or time).
func canonicalNumber(body string, version bool) (string, bool) {
	if version || strings.ContainsAny(body, ":/-") || strings.Count(body, ".") > 1 {
		return body, false
	}
	intPart, frac, hasFrac := strings.Cut(body, ".")
	if strings.Contains(intPart, ",") {
		groups := strings.Split(intPart, ",")
		for k, g := range groups {
			if (k > 0 && len(g) != 3) || (k == 0 && (len(g) == 0 || len(g) > 3)) {
				return body, false // "1,5" or a list "1,2,3"
			}
		}
		intPart = strings.Join(groups, "")
	}
	intPart = strings.TrimLeft(intPart, "0")
	if intPart == "" {
		intPart = "0"
	}
	if hasFrac {
		return intPart + "." + frac, true
	}
	return intPart, true
}

// percent marks the last digit number as a percentage ("5 %").
func (x *extractor) percent() {
	if x.lastNum >= 0 {
		x.percent1(x.lastNum)
		x.lastNum = -1
	}
}

func (x *extractor) percent1(i int) {
	if !strings.HasSuffix(x.f.Numbers[i], "%") {
		x.f.Numbers[i] += "%"
	}
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
