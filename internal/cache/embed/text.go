package embed

import (
	"unicode"
	"unicode/utf8"
)

// token is one word of a text, lower-cased, as a range of a scratch buffer.
type token struct {
	start, end int
	neg        bool // a contraction ending in n't, standing for "not"
	upper      bool // capitalised
	proper     bool // capitalised, not at the start of a sentence: a name
	particle   bool // a hiragana character, mostly grammar: a stop word
}

// tokenize appends to buf the lower-cased words of text and returns buf and
// their ranges in it. A word is a run of letters, digits and combining marks;
// an apostrophe inside a word joins its parts, as does a hyphen after a single
// letter ("e-mail" is "email"), except that a clitic after an apostrophe is
// dropped ("what's" is "what") and n't marks the word as a negation, as do
// the same contractions written without the apostrophe (dont). A full stop or comma between digits
// stays, so 3.14 is one word. A word is marked proper when it starts with a
// capital letter but not a sentence. Scripts written without spaces (Han,
// hiragana, katakana) have one word per character, hiragana ones marked as
// particles.
func tokenize(text string, buf []byte, toks []token) ([]byte, []token) {
	inWord, upper, sentence := false, false, true
	proper := false
	start := len(buf)
	clitic := -1 // offset in buf of the last apostrophe of this word, or -1
	flush := func() {
		if !inWord {
			return
		}
		t := token{start: start, end: len(buf), upper: upper, proper: proper}
		if clitic >= 0 {
			suf := string(buf[clitic:t.end])
			switch suf {
			case "t":
				if clitic-start >= 2 && buf[clitic-1] == 'n' {
					t.neg = true
					t.end = clitic - 1
					if w := string(buf[start:t.end]); w == "ca" || w == "sha" {
						t.end = clitic // can't, shan't: keep the n (won't is wo)
					}
				}
			case "s", "re", "ve", "ll", "d", "m":
				t.end = clitic
			}
		}
		if _, ok := bareNegations[string(buf[t.start:t.end])]; ok {
			t.neg = true
		}
		if t.end > t.start {
			toks = append(toks, t)
		}
		inWord = false
		clitic = -1
	}
	for i := 0; i < len(text); {
		c := text[i]
		var r rune
		size := 1
		if c < utf8.RuneSelf {
			r = rune(c)
		} else {
			r, size = utf8.DecodeRuneInString(text[i:])
		}
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
			if !inWord {
				inWord, start, upper, proper, sentence = true, len(buf), false, false, false
			}
			buf = append(buf, c)
		case c >= 'A' && c <= 'Z':
			if !inWord {
				inWord, start, upper, proper, sentence = true, len(buf), true, !sentence, false
			}
			buf = append(buf, c+'a'-'A')
		case c < utf8.RuneSelf:
			if inWord && i+1 < len(text) && isJoiner(text, i, len(buf)-start) {
				switch c {
				case '\'':
					clitic = len(buf)
				case '.', ',':
					if c == ',' {
						break // 1,000 is 1000
					}
					buf = append(buf, c)
				}
				break
			}
			flush()
			switch c {
			case '.', '!', '?', ':', '\n':
				sentence = true
			}
		case r == '’' || r == '‘':
			if inWord && i+size < len(text) && isLetterAt(text, i+size) {
				clitic = len(buf)
				break
			}
			flush()
		case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana):
			flush()
			start := len(buf)
			buf = utf8.AppendRune(buf, r)
			toks = append(toks, token{start: start, end: len(buf), particle: unicode.Is(unicode.Hiragana, r)})
			sentence = false
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r):
			if !inWord {
				upper = unicode.IsUpper(r)
				inWord, start, proper, sentence = true, len(buf), upper && !sentence, false
			}
			buf = utf8.AppendRune(buf, unicode.ToLower(r))
		default:
			flush()
		}
		i += size
	}
	flush()
	return buf, toks
}

// isJoiner reports whether the ASCII punctuation text[i], inside a word of n
// bytes so far, joins it to what follows: an apostrophe before a letter, a
// hyphen between a single letter and a letter (e-mail, x-ray; but
// line-by-line is three words), a full stop or comma between digits.
func isJoiner(text string, i, n int) bool {
	switch text[i] {
	case '\'':
		return isLetterAt(text, i+1)
	case '-':
		return n == 1 && isLetterAt(text, i+1)
	case '.', ',':
		return i > 0 && isDigit(text[i-1]) && isDigit(text[i+1])
	}
	return false
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isLetterAt reports whether text[i:] starts with a letter.
func isLetterAt(text string, i int) bool {
	if i >= len(text) {
		return false
	}
	if c := text[i]; c < utf8.RuneSelf {
		return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	r, _ := utf8.DecodeRuneInString(text[i:])
	return unicode.IsLetter(r)
}
