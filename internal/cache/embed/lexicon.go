package embed

//go:generate go run gen_lexicon.go -wordnet /usr/share/wordnet -out lexicon.txt.gz

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"io"
	"slices"
	"sync"
)

// lexiconGz is generated from WordNet 3.0 by gen_lexicon.go; see
// LICENSE.wordnet for its licence. Each line is
// "word<TAB>canonical<TAB>class pos" (no space between the last two),
// canonical empty when the word stands for itself, class the hex
// floor(log2(1+n)) of the canonical word's SemCor tag count n, and pos the
// part of speech of its first sense: n, v, a or r.
//
//go:embed lexicon.txt.gz
var lexiconGz []byte

// lexEntry is what the lexicon knows of one word.
type lexEntry struct {
	canon string // the word its first sense folds to; the word itself if none
	class uint8  // frequency class of canon: 0 is rare or untagged
	pos   byte   // part of speech of that sense: 'n', 'v', 'a' or 'r'
}

// lexiconData is the decoded lexicon.
type lexiconData struct {
	words map[string]lexEntry
	list  []string // the words in the file's (alphabetical) order
	// dels holds, sorted, for every word of minTypoLen to maxTypoLen
	// letters and each of its letters, the hash of the word with that letter
	// deleted, its low idxBits bits replaced by the word's index in list. It
	// serves to correct typos.
	dels []uint64
}

// Typo correction reads and writes only words of minTypoLen to maxTypoLen
// letters: shorter words are too often one edit from another word.
const (
	minTypoLen = 5
	maxTypoLen = 16
	idxBits    = 20 // room for 1M words
	idxMask    = 1<<idxBits - 1
)

var (
	lexOnce sync.Once
	lex     *lexiconData
)

// Warm decodes the lexicon now (about 100 ms and 15 MB, once per process),
// so that the first request that needs it does not wait for it.
func Warm() { lexicon() }

// lexicon returns the lexicon, decoding it on first use.
func lexicon() *lexiconData {
	lexOnce.Do(func() { lex = newLexiconData(parseLexicon(lexiconGz)) })
	return lex
}

// newLexiconData indexes the deletions of words.
func newLexiconData(words map[string]lexEntry, list []string) *lexiconData {
	n := 0
	for _, w := range list {
		if len(w) >= minTypoLen && len(w) <= maxTypoLen {
			n += len(w)
		}
	}
	dels := make([]uint64, 0, n)
	for idx, w := range list[:min(len(list), idxMask+1)] {
		if len(w) < minTypoLen || len(w) > maxTypoLen {
			continue
		}
		for i := range len(w) {
			h := hashString(hashString(seedTypo, w[:i]), w[i+1:])
			dels = append(dels, h&^idxMask|uint64(idx))
		}
	}
	return &lexiconData{words: words, list: list, dels: sortHashes(dels)}
}

// sortHashes sorts hs, returning the sorted slice: a counting sort on the
// top 16 bits, then a sort of each bucket, several times faster than
// slices.Sort on the 700k hashes of the lexicon.
func sortHashes(hs []uint64) []uint64 {
	var count [1<<16 + 1]int
	for _, h := range hs {
		count[h>>48+1]++
	}
	for i := 1; i < len(count); i++ {
		count[i] += count[i-1]
	}
	out := make([]uint64, len(hs))
	next := count
	for _, h := range hs {
		out[next[h>>48]] = h
		next[h>>48]++
	}
	for b := range 1 << 16 {
		slices.Sort(out[count[b]:count[b+1]])
	}
	return out
}

func hashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

// correct returns the entry of a word one edit (a letter deleted, inserted,
// changed, or two swapped) from the lower-case ASCII word w, which is not in
// the lexicon, and whether there is one. Of several, the most frequent wins,
// then the alphabetically first.
func (l *lexiconData) correct(w []byte) (lexEntry, bool) {
	if len(w) < minTypoLen || len(w) > maxTypoLen+1 {
		return lexEntry{}, false
	}
	for _, c := range w {
		if c < 'a' || c > 'z' {
			return lexEntry{}, false
		}
	}
	var (
		best     lexEntry
		bestWord string
		found    bool
	)
	consider := func(word string) {
		e := l.words[word]
		if !found || e.class > best.class || e.class == best.class && word < bestWord {
			best, bestWord, found = e, word, true
		}
	}
	// A letter left out: w is a deletion of a word.
	l.each(hashBytesSeed(seedTypo, w), len(w)+1, consider)
	var buf [maxTypoLen + 1]byte
	for i := range w {
		b := append(append(buf[:0], w[:i]...), w[i+1:]...)
		// A letter too many: w less one letter is a word.
		if len(b) >= minTypoLen && len(b) <= maxTypoLen {
			if _, ok := l.words[string(b)]; ok {
				consider(string(b))
			}
		}
		// A letter changed, or two swapped: w and a word of its length
		// share a deletion.
		l.each(hashBytesSeed(seedTypo, b), len(w), consider)
	}
	return best, found
}

// each calls fn with every word of length n that has a deletion hashing to
// h, in alphabetical order.
func (l *lexiconData) each(h uint64, n int, fn func(word string)) {
	h &^= idxMask
	i, _ := slices.BinarySearch(l.dels, h)
	for ; i < len(l.dels) && l.dels[i]&^idxMask == h; i++ {
		if w := l.list[l.dels[i]&idxMask]; len(w) == n {
			fn(w)
		}
	}
}

// parseLexicon decodes the gzipped lexicon, returning its words also as a
// list in the file's order. The embedded data is fixed and
// tested, so a corrupt file yields an empty map rather than an error.
func parseLexicon(gz []byte) (map[string]lexEntry, []string) {
	zr, err := gzip.NewReader(bytes.NewReader(gz))
	if err != nil {
		return map[string]lexEntry{}, nil
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return map[string]lexEntry{}, nil
	}
	data := string(raw) // keys and values below share this one allocation
	n := bytes.Count(raw, []byte{'\n'})
	m := make(map[string]lexEntry, n)
	list := make([]string, 0, n)
	for len(data) > 0 {
		line := data
		if i := indexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = ""
		}
		t1 := indexByte(line, '\t')
		if t1 < 0 {
			continue
		}
		rest := line[t1+1:]
		t2 := indexByte(rest, '\t')
		if t2 < 0 || t2+3 != len(rest) {
			continue
		}
		word, canon := line[:t1], rest[:t2]
		if canon == "" {
			canon = word
		}
		m[word] = lexEntry{canon: canon, class: hexDigit(rest[t2+1]), pos: rest[t2+2]}
		list = append(list, word)
	}
	return m, list
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}

func hexDigit(c byte) uint8 {
	if c >= 'a' {
		return c - 'a' + 10
	}
	return c - '0'
}

// detachments are WordNet's morphological rules ("morphy"): suffixes to
// replace, in order, to find the base form of an inflected word not in the
// lexicon itself.
var detachments = [...]struct{ suf, repl string }{
	{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"},
	{"shes", "sh"}, {"men", "man"}, {"ies", "y"}, {"es", "e"}, {"es", ""},
	{"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}, {"er", ""},
	{"est", ""}, {"er", "e"}, {"est", "e"},
}

// lookup returns the lexicon entry for the lower-case word w, or for its base
// form when w is a regular inflection (a doubled final consonant undone:
// stopped, stopping), and whether there was one.
func lookup(lex map[string]lexEntry, w []byte) (lexEntry, bool) {
	if e, ok := lex[string(w)]; ok {
		return e, true
	}
	if len(w) < 4 || len(w) > 40 {
		return lexEntry{}, false
	}
	var buf [48]byte
	for _, d := range detachments {
		if !bytes.HasSuffix(w, []byte(d.suf)) || len(w)-len(d.suf) < 2 {
			continue
		}
		b := append(append(buf[:0], w[:len(w)-len(d.suf)]...), d.repl...)
		if e, ok := lex[string(b)]; ok {
			return e, true
		}
		if d.repl == "" && (d.suf == "ed" || d.suf == "ing") {
			if n := len(b); n >= 3 && b[n-1] == b[n-2] {
				if e, ok := lex[string(b[:n-1])]; ok {
					return e, true
				}
			}
		}
	}
	return lexEntry{}, false
}
