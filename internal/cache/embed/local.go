package embed

import (
	"bytes"
	"context"
	"math"
	"sync"
)

// LocalName is the name of Local's model. It changes whenever Local's
// vectors change, so that vectors stored by an older version are not compared
// with new ones.
const LocalName = "svc-lexical-v2"

// LocalDim is the length of Local's vectors.
const LocalDim = 512

// Feature weights, relative to a word's frequency weight, chosen on the
// paraphrase groups of eval_test.go and the labelled pairs of
// internal/cache/quality/testdata: its folded stem, its character n-grams
// of minGram to maxGram runes (all n-grams of a word together), the pair it
// forms with the next content word (in either order: "Python list" is "list
// in Python"), and that pair, in order, when a relation word such as "to"
// joins them ("string to integer" is not "integer to string").
const (
	unigramWeight  = 1.0
	charWeight     = 0.8
	bigramWeight   = 0.35
	relationWeight = 1.0
	minGram        = 3
	maxGram        = 5
	maxGramRunes   = 64 // n-grams are taken of a word's first 64 runes
)

// maxPooled is the largest text buffer (bytes) kept for reuse.
const maxPooled = 64 << 10

// A word of frequency class c weighs max(classFloor, 1-c/classSlope).
const (
	classSlope = 14
	classFloor = 0.4
)

// Local is the built-in lexical embedder: see the package documentation. Its
// zero value is not usable; call NewLocal. It is safe for concurrent use.
type Local struct {
	pool sync.Pool // of *scratch
}

// scratch is the per-call working memory of Local.
type scratch struct {
	buf   []byte  // lower-cased words of the text
	toks  []token // their ranges in buf
	stems []byte  // stems of the content words, back to back
	ends  []int   // end of each stem in stems
	wts   []float32
	rels  []byte // the relation word between each content word and the one before
	runes []int  // rune offsets of the word being split into n-grams
}

// NewLocal returns the built-in embedder. Its lexicon, shared by every Local,
// is decoded once, in the background from the first NewLocal on (about 100 ms
// of CPU, 15 MB of heap); an EmbedOne that comes sooner waits for it.
func NewLocal() *Local {
	go lexicon()
	return &Local{pool: sync.Pool{New: func() any { return new(scratch) }}}
}

// Name returns LocalName.
func (l *Local) Name() string { return LocalName }

// Dim returns LocalDim.
func (l *Local) Dim() int { return LocalDim }

// Embed returns EmbedOne of each text. It never fails, and ignores ctx: it
// computes, without waiting on anything.
func (l *Local) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = l.EmbedOne(t)
	}
	return out, nil
}

// EmbedOne returns text's vector, of length LocalDim and unit length, or the
// zero vector if text has no words (empty, or only punctuation and spaces).
// The zero vector has similarity 0 with every vector, so such a text matches
// nothing. A text made only of stop words ("how do I?") is embedded from
// those words.
func (l *Local) EmbedOne(text string) []float32 {
	v := make([]float32, LocalDim)
	s := l.pool.Get().(*scratch)
	s.features(text, v)
	if cap(s.buf) <= maxPooled {
		l.pool.Put(s) // a huge text's buffers are left to the collector
	}
	normalize(v)
	return v
}

// features adds text's weighted features to v.
func (s *scratch) features(text string, v []float32) {
	s.buf, s.toks = tokenize(text, s.buf[:0], s.toks[:0])
	s.stems, s.ends, s.wts, s.rels = s.stems[:0], s.ends[:0], s.wts[:0], s.rels[:0]
	lex := lexicon()
	content := 0
	for _, t := range s.toks {
		if !s.isStop(t) {
			content++
		}
	}
	var rel byte
	afterContent := false // the previous word was a content word
	for _, t := range s.toks {
		w := s.buf[t.start:t.end]
		if content > 0 && s.isStop(t) {
			if r := relation(w); r != 0 && afterContent {
				rel = r
			}
			afterContent = false
			if t.neg {
				s.addWord(lex, []byte(negation), token{}, 0)
			}
			continue
		}
		s.addWord(lex, w, t, rel)
		rel, afterContent = 0, true
		if t.neg {
			s.addWord(lex, []byte(negation), token{}, 0)
		}
	}
	prev := 0
	for i, end := range s.ends {
		st, wt := s.stems[prev:end], s.wts[i]
		addHashed(v, hashBytes(seedUnigram, st), wt*unigramWeight)
		s.addGrams(v, st, wt*charWeight)
		if i+1 < len(s.ends) {
			a, b := st, s.stems[end:s.ends[i+1]]
			if s.rels[i+1] == 0 && bytes.Compare(a, b) > 0 {
				a, b = b, a // without a relation word, a pair has no order
			}
			h := hashBytes(hashByte(hashBytes(seedBigram, a), s.rels[i+1]), b)
			bw := float32(bigramWeight)
			if s.rels[i+1] != 0 {
				bw = relationWeight
			}
			addHashed(v, h, float32(math.Sqrt(float64(wt*s.wts[i+1])))*bw)
		}
		prev = end
	}
}

// isStop reports whether t is a stop word.
func (s *scratch) isStop(t token) bool {
	_, stop := stopWords[string(s.buf[t.start:t.end])]
	return stop || t.particle
}

// addWord appends the stem of the canonical form of w, the word of t, and its
// weight. A proper name is not folded, and weighs as a rare word; no
// capitalised word is taken for a typo.
func (s *scratch) addWord(lex *lexiconData, w []byte, t token, rel byte) {
	if a, ok := aliases[string(w)]; ok {
		w = []byte(a) // does not escape: copied below
	} else if n, ok := numberWords[string(w)]; ok {
		w = []byte(n)
	}
	class := uint8(0)
	e, ok := lookup(lex.words, w)
	if !ok && !t.upper {
		e, ok = lex.correct(w)
	}
	if ok && !t.proper {
		class = e.class
		if _, stop := stopWords[e.canon]; !stop {
			w = []byte(e.canon) // does not escape: copied below
		}
	}
	start := len(s.stems)
	s.stems = append(s.stems, w...)
	st := stem(s.stems[start:])
	s.stems = s.stems[:start+len(st)]
	s.ends = append(s.ends, len(s.stems))
	s.wts = append(s.wts, classWeight[min(int(class), len(classWeight)-1)])
	s.rels = append(s.rels, rel)
}

// addGrams adds the character n-grams of "<st>" to v with total weight wt:
// each of the k n-grams weighs wt/√k, so that a word's n-grams have as much
// weight as its unigram would at wt.
func (s *scratch) addGrams(v []float32, st []byte, wt float32) {
	s.runes = s.runes[:0]
	for i := range string(st) {
		if len(s.runes) == maxGramRunes {
			st = st[:i] // a long token (a hash, base64) is told apart by its unigram
			break
		}
		s.runes = append(s.runes, i)
	}
	n := len(s.runes) + 2 // with the boundary marks
	s.runes = append(s.runes, len(st))
	k := 0
	for g := minGram; g <= maxGram && g <= n; g++ {
		k += n - g + 1
	}
	if k == 0 {
		return
	}
	each := wt / float32(math.Sqrt(float64(k)))
	for g := minGram; g <= maxGram && g <= n; g++ {
		for i := 0; i+g <= n; i++ {
			// Positions i..i+g-1 of "<" + st + ">": 0 is '<', n-1 is '>'.
			h := uint64(seedGram) ^ uint64(g)
			if i == 0 {
				h = hashByte(h, '<')
			}
			lo, hi := max(i-1, 0), min(i+g-1, n-2)
			h = hashBytesSeed(h, st[s.runes[lo]:s.runes[hi]])
			if i+g == n {
				h = hashByte(h, '>')
			}
			addHashed(v, h, each)
		}
	}
}

// classWeight is the weight of a word of each frequency class c
// (floor(log2(1+n)) of its SemCor tag count n, 0 for words not in the
// lexicon): an inverse document frequency, log2(2^14/2^c)/14, floored, so
// that rare words weigh most.
var classWeight = func() [16]float32 {
	var w [16]float32
	for c := range w {
		w[c] = float32(max(classFloor, 1-float64(c)/classSlope))
	}
	return w
}()

// relation returns the code of a stop word that, right after a content word,
// gives the order of the content words around it a direction (convert X to
// Y, Y from X, X rather than Y), so that swapping them changes the pair's
// feature; 0 for other words.
func relation(w []byte) byte {
	switch string(w) {
	case "to", "into", "onto":
		return 't'
	case "from":
		return 'f'
	case "than":
		return 'c'
	}
	return 0
}

// Hash seeds, one per kind of feature.
const (
	seedUnigram = 14695981039346656037
	seedBigram  = seedUnigram ^ 0x9e3779b97f4a7c15
	seedGram    = seedUnigram ^ 0xc2b2ae3d27d4eb4f
	seedTypo    = seedUnigram ^ 0x165667b19e3779f9
)

const fnvPrime = 1099511628211

func hashByte(h uint64, c byte) uint64 { return (h ^ uint64(c)) * fnvPrime }

func hashBytesSeed(h uint64, b []byte) uint64 {
	for _, c := range b {
		h = (h ^ uint64(c)) * fnvPrime
	}
	return h
}

func hashBytes(seed uint64, b []byte) uint64 { return hashBytesSeed(seed, b) }

// addHashed adds ±w to the coordinate of v that h selects, after mixing h
// (FNV's low bits are weak): its low bits pick the coordinate, its top bit
// the sign.
func addHashed(v []float32, h uint64, w float32) {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	i := h & (LocalDim - 1)
	if h>>63 != 0 {
		w = -w
	}
	v[i] += w
}

var _ Embedder = (*Local)(nil)
