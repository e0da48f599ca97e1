package secrets

import (
	"regexp/syntax"
	"strings"
	"unicode"
	"unicode/utf8"
)

// This file reads a rule's parsed pattern to learn how it can be run
// cheaply: the literals every match starts with, the longest and shortest
// match, and the bytes a group can hold.

// maxPrefixes bounds the literal set prefixes works out.
const maxPrefixes = 16

// maxLen is the longest match of re in bytes, or -1 if unbounded.
func maxLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		if re.Flags&syntax.FoldCase != 0 {
			return utf8.UTFMax * len(re.Rune)
		}
		n := 0
		for _, r := range re.Rune {
			n += max(1, utf8.RuneLen(r))
		}
		return n
	case syntax.OpCharClass:
		if len(re.Rune) == 0 {
			return 0
		}
		return max(1, utf8.RuneLen(min(re.Rune[len(re.Rune)-1], unicode.MaxRune)))
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return utf8.UTFMax
	case syntax.OpCapture, syntax.OpQuest:
		return maxLen(re.Sub[0])
	case syntax.OpStar, syntax.OpPlus:
		return -1
	case syntax.OpRepeat:
		n := maxLen(re.Sub[0])
		if re.Max < 0 || n < 0 {
			return -1
		}
		return re.Max * n
	case syntax.OpConcat:
		sum := 0
		for _, s := range re.Sub {
			n := maxLen(s)
			if n < 0 {
				return -1
			}
			sum += n
		}
		return sum
	case syntax.OpAlternate:
		best := 0
		for _, s := range re.Sub {
			n := maxLen(s)
			if n < 0 {
				return -1
			}
			best = max(best, n)
		}
		return best
	}
	return 0 // empty-width operators, OpEmptyMatch, OpNoMatch
}

// minLen is the shortest match of re in bytes.
func minLen(re *syntax.Regexp) int {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune)
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1
	case syntax.OpCapture, syntax.OpPlus:
		return minLen(re.Sub[0])
	case syntax.OpRepeat:
		return re.Min * minLen(re.Sub[0])
	case syntax.OpConcat:
		sum := 0
		for _, s := range re.Sub {
			sum += minLen(s)
		}
		return sum
	case syntax.OpAlternate:
		best := -1
		for _, s := range re.Sub {
			if n := minLen(s); best < 0 || n < best {
				best = n
			}
		}
		return max(best, 0)
	}
	return 0
}

// charSet marks in set every byte a match of re can contain (a non-ASCII
// rune marks every byte from 0x80 up). It reports false if re can match any
// character.
func charSet(re *syntax.Regexp, set *[256]bool) bool {
	complete := true
	mark := func(r rune) {
		if r < utf8.RuneSelf {
			set[r] = true
		} else {
			markHigh(set)
		}
	}
	switch re.Op {
	case syntax.OpLiteral:
		for _, r := range re.Rune {
			mark(r)
			if re.Flags&syntax.FoldCase != 0 {
				for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
					mark(f)
				}
			}
		}
	case syntax.OpCharClass:
		for i := 0; i+1 < len(re.Rune); i += 2 {
			lo, hi := re.Rune[i], re.Rune[i+1]
			for r := lo; r <= hi && r < utf8.RuneSelf; r++ {
				set[r] = true
			}
			if hi >= utf8.RuneSelf {
				markHigh(set)
			}
		}
	case syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return false
	}
	for _, s := range re.Sub {
		if !charSet(s, set) {
			complete = false
		}
	}
	return complete
}

// prefixes works out a small set of literals one of which every match of re
// starts with. fold reports that the literals are lower case and are to be
// looked for in the lower-cased text; lead that the pattern opens with \b
// (every literal then starts with a word character, so the caller checks
// the boundary against the byte before). ok is false when there is no such
// set of literals of two bytes or more.
func prefixes(re *syntax.Regexp) (lits []string, fold, lead, ok bool) {
	seq := flatten(re)
	for len(seq) > 0 && (seq[0].Op == syntax.OpWordBoundary || seq[0].Op == syntax.OpEmptyMatch) {
		lead = lead || seq[0].Op == syntax.OpWordBoundary
		seq = flatten(&syntax.Regexp{Op: syntax.OpConcat, Sub: seq[1:]})
	}
	lits, fold, _ = expand(seq, []string{""})
	if len(lits) == 0 || len(lits) > maxPrefixes {
		return nil, false, false, false
	}
	for _, l := range lits {
		if len(l) < 2 || lead && !isWord(l[0]) {
			return nil, false, false, false
		}
	}
	if fold {
		for i := range lits {
			lits[i] = strings.ToLower(lits[i])
		}
	}
	return dedupe(lits), fold, lead, true
}

// flatten opens the captures and concatenations at the head of re into a
// sequence.
func flatten(re *syntax.Regexp) []*syntax.Regexp {
	switch re.Op {
	case syntax.OpCapture:
		return flatten(re.Sub[0])
	case syntax.OpConcat:
		if len(re.Sub) == 0 {
			return nil
		}
		head := flatten(re.Sub[0])
		return append(append([]*syntax.Regexp(nil), head...), re.Sub[1:]...)
	}
	return []*syntax.Regexp{re}
}

// expand extends each of pre by what seq must start with. complete reports
// that seq is wholly literal (pre then holds its every match).
func expand(seq []*syntax.Regexp, pre []string) (out []string, fold, complete bool) {
	for i := 0; i < len(seq); i++ {
		el := seq[i]
		switch el.Op {
		case syntax.OpEmptyMatch:
			continue
		case syntax.OpCapture, syntax.OpConcat:
			rest := append(flatten(el), seq[i+1:]...)
			o, f, c := expand(rest, pre)
			return o, fold || f, c
		case syntax.OpLiteral:
			s := string(el.Rune)
			if el.Flags&syntax.FoldCase != 0 {
				fold = true
			}
			pre = cross(pre, []string{s})
		case syntax.OpCharClass:
			var alts []string
			for j := 0; j+1 < len(el.Rune); j += 2 {
				for r := el.Rune[j]; r <= el.Rune[j+1] && len(alts) <= 8; r++ {
					alts = append(alts, string(r))
				}
			}
			if len(alts) == 0 || len(alts) > 8 || len(pre)*len(alts) > maxPrefixes {
				return pre, fold, false
			}
			pre = cross(pre, alts)
		case syntax.OpAlternate:
			var union []string
			all := true
			for _, b := range el.Sub {
				o, f, c := expand(flatten(b), []string{""})
				fold = fold || f
				all = all && c
				union = append(union, o...)
			}
			if len(pre)*len(union) > maxPrefixes {
				return pre, fold, false
			}
			pre = cross(pre, union)
			if !all {
				return pre, fold, false
			}
		default:
			return pre, fold, false
		}
		if len(pre) > maxPrefixes {
			return pre, fold, false
		}
	}
	return pre, fold, true
}

func cross(a, b []string) []string {
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return out
}

func dedupe(s []string) []string {
	seen := map[string]bool{}
	out := s[:0]
	for _, x := range s {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// isWord reports whether c is an ASCII word character (\w).
func isWord(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_'
}

func markHigh(set *[256]bool) {
	for b := utf8.RuneSelf; b < 256; b++ {
		set[b] = true
	}
}
