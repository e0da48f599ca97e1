package detect

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
// edge of s) on both sides, comparing ASCII letters case-insensitively in
// place (no lower-cased copy: Near runs for every candidate a detector
// weighs).
func hasWord(s string, words []string) bool {
	for _, w := range words {
		if w == "" {
			continue
		}
		for at := 0; at+len(w) <= len(s); at++ {
			if lowerASCII(s[at]) == w[0] && foldEqual(s[at:at+len(w)], w) && boundary(s, at-1) && boundary(s, at+len(w)) {
				return true
			}
		}
	}
	return false
}

// foldEqual reports whether s equals the lower-case w, ASCII letters of s
// folded.
func foldEqual(s, w string) bool {
	for i := 0; i < len(w); i++ {
		if lowerASCII(s[i]) != w[i] {
			return false
		}
	}
	return true
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
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
