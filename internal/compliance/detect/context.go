package detect

import "strings"

// Near reports whether any of words occurs as a whole word (ASCII
// case-insensitive) within window bytes before start or after end in text.
// words must be lower case; a word may hold spaces ("my name is"). Detectors
// use it to raise a match's confidence ("ssn", "card", "iban" nearby) or to
// lower it ("order", "tracking", "invoice").
func Near(text string, start, end, window int, words []string) bool {
	lo := max(0, start-window)
	hi := min(len(text), end+window)
	if start < lo || end > hi || start > end {
		return false
	}
	return hasWord(text[lo:start], words) || hasWord(text[end:hi], words)
}

// hasWord reports whether s holds one of words with a non-letter (or the
// edge of s) on both sides.
func hasWord(s string, words []string) bool {
	if s == "" {
		return false
	}
	low := strings.ToLower(s)
	for _, w := range words {
		for i := 0; ; {
			j := strings.Index(low[i:], w)
			if j < 0 {
				break
			}
			at := i + j
			if boundary(low, at-1) && boundary(low, at+len(w)) {
				return true
			}
			i = at + 1
		}
	}
	return false
}

// boundary reports whether position i of s is outside s or not an ASCII
// letter or digit.
func boundary(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return true
	}
	c := s[i]
	return !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9')
}
