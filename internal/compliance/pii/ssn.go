package pii

import (
	"github.com/svc-gateway/svc/internal/compliance/detect"
)

var (
	ssnWords = newWordSet("ssn", "ssns", "social security", "social security number", "social sec", "ss#",
		"ss no", "ss number", "soc sec", "taxpayer", "itin", "ssa")
	notSSNWords = newWordSet("phone", "tel", "call", "fax", "order", "invoice", "tracking", "zip",
		"isbn", "serial", "ref", "part", "account", "routing", "case", "ticket")
)

// validSSN applies the SSA's rules: area not 000, 666 or 9xx; group not
// 00; serial not 0000. a, g and s are the digits of the three parts.
func validSSN(a, g, s string) bool {
	area, grp, ser := atoi(a), atoi(g), atoi(s)
	return len(a) == 3 && len(g) == 2 && len(s) == 4 &&
		area > 0 && area != 666 && area < 900 && grp > 0 && ser > 0
}

// ssnsInRun finds SSNs among the groups of r: 3-2-4 digits joined by one
// dash or space, not part of a longer chain; or nine bare digits with an
// SSN key word near them.
func ssnsInRun(text string, r *numRun, dst []detect.Finding) []detect.Finding {
	for i := 0; i < r.n; i++ {
		g := r.g[i]
		if g.date {
			continue
		}
		l := g.end - g.start
		// Nine bare digits, alone in their run (or joined by a separator
		// other than a dash or space).
		if l == 9 && !r.glued(i, i) && !r.plus && alone(text, r, i) {
			s := text[g.start:g.end]
			if validSSN(s[:3], s[3:5], s[5:]) && near(text, g.start, g.end, 40, ssnWords) {
				score := 0.85
				if before(text, g.start, 32, notSSNWords) {
					score = 0.4
				}
				dst = append(dst, finding(detect.SSN, g.start, g.end, score, "ssn:bare+context"))
			}
			continue
		}
		if l != 3 || i+2 >= r.n || r.glued(i, i+2) || r.g[i+1].date || r.g[i+2].date {
			continue
		}
		s1, s2 := r.sep(text, i+1), r.sep(text, i+2)
		if p := plainSep(s1); s1 != s2 || (p != "-" && p != " " && p != ".") {
			continue
		}
		g2, g3 := r.g[i+1], r.g[i+2]
		if g2.end-g2.start != 2 || g3.end-g3.start != 4 {
			continue
		}
		// Not a piece of a longer chain joined the same way.
		if i > 0 && r.sep(text, i) == s1 || i+3 < r.n && r.sep(text, i+3) == s1 {
			continue
		}
		if i == 0 && r.plus {
			continue
		}
		if !validSSN(text[g.start:g.end], text[g2.start:g2.end], text[g3.start:g3.end]) {
			continue
		}
		start, end := g.start, g3.end
		score, rule := 0.8, "ssn:dashed"
		switch s1 {
		case " ":
			score, rule = 0.6, "ssn:spaced"
		case ".":
			score, rule = 0.45, "ssn:dotted" // only with an SSN word
		}
		pos, neg := near(text, start, end, 40, ssnWords), before(text, start, 32, notSSNWords)
		switch {
		case pos && !neg:
			score = 0.95
		case neg && !pos:
			score -= 0.4
		}
		dst = append(dst, finding(detect.SSN, start, end, score, rule))
		r.use(i, i+2)
		i += 2
	}
	return dst
}

// alone reports whether group i of r is joined to no neighbour by a dash or
// a space.
func alone(text string, r *numRun, i int) bool {
	if i > 0 {
		if s := r.sep(text, i); s == "-" || s == " " {
			return false
		}
	}
	if i+1 < r.n {
		if s := r.sep(text, i+1); s == "-" || s == " " {
			return false
		}
	}
	return true
}
