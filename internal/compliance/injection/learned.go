package injection

import (
	_ "embed" // the build-time weights
	"encoding/binary"
	"errors"
	"math"
	"sync"
)

//go:generate go run ./gen -quality ../quality/testdata -sets testdata -out learned.bin

// The learned component: a logistic regression over hashed n-grams of the
// normalised text (the bytes the rules read: lower case, folded, zero-width
// characters removed) and the rule families' evidence, trained at build time
// (TrainLearned, through go generate) and embedded. Its logit is blended with
// the rules' logit by a fitted logistic combination:
//
//	score = sigmoid(a·logit(rules) + b·logit(classifier) + c)
//
// Features: word unigrams and bigrams (a bigram does not cross a sentence
// boundary) and character 3–5-grams of the normalised bytes (separators read
// as one space), hashed (FNV-1a, murmur3's finaliser, a seed per family) into
// learnedDim buckets shared by both families. A text's feature value of an
// n-gram is its count over the square root of the family's n-gram count, so
// that the logit is a sum computed in one pass with no allocation. The
// dense features are the rules' per-family best probability, their text
// logit, the trigger-word count, and whether a hit was discounted as
// discussion or matched over obfuscated characters.

//go:embed learned.bin
var learnedBin []byte

// Feature space. Part of the weights format: changing one needs go generate.
const (
	learnedBits = 17
	learnedDim  = 1 << learnedBits
	// Dense features after the per-family ones.
	denseLogit     = int(numFamilies)
	denseTriggers  = denseLogit + 1
	denseDiscussed = denseLogit + 2
	denseObf       = denseLogit + 3
	numDense       = denseLogit + 4
	// maxRuleLogit bounds the rules' logit as a feature and in the blend.
	maxRuleLogit = 8.0
	seedWord     = uint32(0x9e3779b9)
	seedBigram   = uint32(0x7f4a7c15)
	seedChar     = uint32(0x85ebca6b)
)

// learnedModel is the decoded learned.bin.
type learnedModel struct {
	w     []int16 // learnedDim hashed weights, in units of scale
	scale float64
	dense [numDense]float32
	bias  float32
	blend [3]float32 // a, b, c: see above
}

var (
	learnedOnce sync.Once
	learned     *learnedModel
)

// loadLearned decodes the embedded weights once; nil when they are missing
// or malformed (the detector then uses the rules alone).
func loadLearned() *learnedModel {
	learnedOnce.Do(func() {
		m, err := decodeLearned(learnedBin)
		if err == nil {
			learned = m
		}
	})
	return learned
}

// learnedMagic starts learned.bin.
const learnedMagic = "svc-inj-learned/1\n"

// learned.bin: magic, learnedBits (uint32), the hashed weights' scale
// (float32), learnedDim int16 weights (w = q·scale), numDense float32, the
// bias, the three blend parameters (float32), the SHA-256 of the training
// data; little-endian.
func learnedSize() int {
	return len(learnedMagic) + 4 + 4 + 2*learnedDim + 4*(numDense+1+3) + 32
}

var errLearnedFormat = errors.New("injection: learned.bin: bad format")

func decodeLearned(b []byte) (*learnedModel, error) {
	if len(b) != learnedSize() || string(b[:len(learnedMagic)]) != learnedMagic {
		return nil, errLearnedFormat
	}
	b = b[len(learnedMagic):]
	if binary.LittleEndian.Uint32(b) != learnedBits {
		return nil, errLearnedFormat
	}
	f32 := func(p []byte) (float32, bool) {
		v := math.Float32frombits(binary.LittleEndian.Uint32(p))
		return v, !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) && math.Abs(float64(v)) <= 1e3
	}
	scale, ok := f32(b[4:])
	if !ok {
		return nil, errLearnedFormat
	}
	b = b[8:]
	m := &learnedModel{w: make([]int16, learnedDim), scale: float64(scale)}
	for i := range m.w {
		m.w[i] = int16(binary.LittleEndian.Uint16(b[2*i:]))
	}
	b = b[2*learnedDim:]
	vals := make([]float32, 0, numDense+4)
	for i := 0; i < numDense+4; i++ {
		v, ok := f32(b[4*i:])
		if !ok {
			return nil, errLearnedFormat
		}
		vals = append(vals, v)
	}
	copy(m.dense[:], vals[:numDense])
	m.bias = vals[numDense]
	copy(m.blend[:], vals[numDense+1:])
	return m, nil
}

// fmix32 is murmur3's finaliser.
func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

const (
	fnvOffset = uint32(2166136261)
	fnvPrime  = uint32(16777619)
)

// eachGram calls fn for every hashed n-gram of the normalised bytes b: its
// bucket, whether it is a character n-gram, the offset in b it starts at.
func eachGram(b []byte, fn func(h uint32, char bool, at int)) {
	const mask = learnedDim - 1
	prev := uint32(0) // the previous word's hash in this sentence; 0: none
	for i := 0; i < len(b); {
		c := b[i]
		if c == sepSpace || c == sepSentence {
			if c == sepSentence {
				prev = 0
			}
			i++
			continue
		}
		start := i
		h := fnvOffset ^ seedWord
		for ; i < len(b) && b[i] != sepSpace && b[i] != sepSentence; i++ {
			h = (h ^ uint32(b[i])) * fnvPrime
		}
		h = fmix32(h)
		fn(h&mask, false, start)
		if prev != 0 {
			fn(fmix32(prev*31^h^seedBigram)&mask, false, start)
		}
		prev = h | 1
	}
	for i := 0; i+3 <= len(b); i++ {
		h := fnvOffset ^ seedChar
		for n := 0; n < 5 && i+n < len(b); n++ {
			c := b[i+n]
			if c == sepSentence {
				c = sepSpace
			}
			h = (h ^ uint32(c)) * fnvPrime
			if n >= 2 {
				fn(fmix32(h+uint32(n))&mask, true, i)
			}
		}
	}
}

// gramSum is the sums of a text's n-gram weights per family (in units of
// the weights' scale), and their counts.
type gramSum struct {
	words, chars int64
	nw, nc       int
}

// sumGrams sums the quantised weights w of b's n-grams.
func sumGrams(w []int16, b []byte) gramSum {
	var g gramSum
	eachGram(b, func(h uint32, char bool, _ int) {
		if char {
			g.chars += int64(w[h])
			g.nc++
		} else {
			g.words += int64(w[h])
			g.nw++
		}
	})
	return g
}

// logit is the n-grams' part of the classifier's logit, given the counts'
// inverse square roots.
func (g gramSum) logit(scale, iw, ic float64) float64 {
	return scale * (float64(g.words)*iw + float64(g.chars)*ic)
}

// invSqrt is 1/√n, 0 for n = 0.
func invSqrt(n int) float64 {
	if n == 0 {
		return 0
	}
	return 1 / math.Sqrt(float64(n))
}

// denseFeatures are the rules' evidence after scan, as the classifier reads
// it.
func (sc *scanner) denseFeatures(x *[numDense]float64) {
	*x = [numDense]float64{}
	for _, h := range sc.hits {
		if h.support {
			continue
		}
		f := h.fam
		x[f] = max(x[f], sigmoid(h.z))
		if h.z < h.z0-0.5 {
			x[denseDiscussed] = 1
		}
		if h.obf || h.fam == famEncoded {
			x[denseObf] = 1
		}
	}
	x[denseLogit] = ruleLogit(sc.score()) / maxRuleLogit
	x[denseTriggers] = float64(min(sc.trigrs, weakMax)) / weakMax
}

// ruleLogit is the logit of a rule score, bounded by maxRuleLogit.
func ruleLogit(p float64) float64 {
	p = min(max(p, 1e-9), 1-1e-9)
	return min(max(math.Log(p/(1-p)), -maxRuleLogit), maxRuleLogit)
}

// classifierLogit is the learned model's logit for the scanned text.
func (sc *scanner) classifierLogit(m *learnedModel) float64 {
	g := sumGrams(m.w, sc.n.b)
	z := float64(m.bias) + g.logit(m.scale, invSqrt(g.nw), invSqrt(g.nc))
	var x [numDense]float64
	sc.denseFeatures(&x)
	for i, v := range x {
		z += float64(m.dense[i]) * v
	}
	return z
}

// blended is the text's score with the learned model: the fitted logistic
// blend of the rules' logit and the classifier's.
func (sc *scanner) blended(m *learnedModel) float64 {
	zr := ruleLogit(sc.score())
	zc := sc.classifierLogit(m)
	return sigmoid(float64(m.blend[0])*zr + float64(m.blend[1])*zc + float64(m.blend[2]))
}

// bestSentence is the original-text span of the sentence of the scanned
// text that adds most to the classifier's logit.
func (sc *scanner) bestSentence(m *learnedModel) (int, int) {
	b := sc.n.b
	all := sumGrams(m.w, b)
	iw, ic := invSqrt(all.nw), invSqrt(all.nc)
	// Sum per sentence: word n-grams by their start, character n-grams by
	// their first byte. Two passes over the sentences keep it allocation
	// free: each sentence [s, e) is scored on its own.
	bestS, bestE, best := -1, -1, math.Inf(-1)
	for s := 0; s < len(b); {
		e := s
		for e < len(b) && b[e] != sepSentence {
			e++
		}
		sum := sumGrams(m.w, b[s:e]).logit(m.scale, iw, ic)
		if hasLetter(b[s:e]) && sum > best {
			best, bestS, bestE = sum, s, e
		}
		s = e + 1
	}
	if bestS < 0 {
		return 0, len(sc.text)
	}
	for bestS < bestE && b[bestS] == sepSpace {
		bestS++
	}
	for bestE > bestS && b[bestE-1] == sepSpace {
		bestE--
	}
	if bestS >= bestE {
		return 0, len(sc.text)
	}
	start := int(sc.n.off[bestS])
	last := int(sc.n.off[bestE-1])
	return start, last + runeLen(sc.text, last)
}

func hasLetter(b []byte) bool {
	for _, c := range b {
		if c != sepSpace && c != sepSentence {
			return true
		}
	}
	return false
}
