package wordvec

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxWordBytes bounds a word looked up; longer runs are skipped.
const maxWordBytes = 48

// eachWord calls fn with each word of text lower-cased into buf: a run of
// letters, with inner apostrophes and hyphens kept. fn must not keep the
// slice.
func eachWord(text string, buf []byte, fn func([]byte)) {
	word, skip := buf[:0], false
	flush := func() {
		for len(word) > 0 && (word[len(word)-1] == '\'' || word[len(word)-1] == '-') {
			word = word[:len(word)-1]
		}
		if len(word) > 0 && !skip {
			fn(word)
		}
		word, skip = word[:0], false
	}
	for _, r := range text {
		switch {
		case unicode.IsLetter(r):
			if len(word)+utf8.UTFMax > maxWordBytes {
				skip = true
				continue
			}
			word = utf8.AppendRune(word, unicode.ToLower(r))
		case (r == '\'' || r == '’' || r == '-') && len(word) > 0:
			if r == '’' {
				r = '\''
			}
			word = append(word, byte(r))
		default:
			flush()
		}
	}
	flush()
}

func isStopWord(w string) bool {
	_, ok := stopWords[w]
	return ok
}

// stopWords are English function words: they carry little meaning and
// their vectors pull every sentence toward one another.
var stopWords = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, w := range strings.Fields(`a an the of to and in on for is are was were be been being
		i me my mine we us our ours you your yours he him his she her hers it its they them their theirs
		this that these those what which who whom whose how when where why
		do does did done can could would should will shall may might must
		please about with from at by as or if not no nor so than then too very
		give tell based have has had am any some there here just also into onto
		out up down over under again further once all each both few more most other such own same
		s t don't i'm it's i've i'd i'll let's`) {
		m[w] = struct{}{}
	}
	return m
}()
