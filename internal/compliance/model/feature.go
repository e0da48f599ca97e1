package model

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// Feature space bounds. They are part of the weights format: changing one
// needs newly trained weights (go generate) and leaves older snapshots
// unused.
const (
	// Dim is the number of features: a Vector's indices are below Dim.
	Dim = 1 << 18
	// denseSlots is the number of indices, at the top of the space, kept
	// for the detectors' features; the hashed n-grams use the rest.
	denseSlots = 64
	// HashedDim is the number of buckets the hashed n-grams fall into:
	// indices [0, HashedDim). Detector features use [HashedDim, Dim).
	HashedDim = Dim - denseSlots
	// MaxText is how much of a text Featurize reads, in bytes (cut back to
	// a rune boundary): the rest is ignored.
	MaxText = 16 << 10
	// MaxFeatures is the most distinct hashed n-gram features of a Vector.
	// Word features are taken first, then character n-grams in text order
	// until the cap is reached.
	MaxFeatures = 8192
	// MaxLen is the most entries a valid Vector has: MaxFeatures hashed
	// features and every detector slot.
	MaxLen = MaxFeatures + denseSlots
	// MaxValue bounds the absolute value of a valid Vector's entries.
	MaxValue = 64
	// quantum is the resolution of a Vector's values: Featurize rounds them
	// to multiples of 1/quantum, which Encode stores exactly.
	quantum = 1 << 16
)

// Vector is a sparse feature vector: Val[i] is the value of feature Idx[i].
// Idx is strictly increasing, every index below Dim. A Vector from
// Featurize also remembers the normalised (lower-cased, redacted) text its
// n-grams came from, so that Score can name them; Encode never writes it.
type Vector struct {
	Idx []uint32
	Val []float32
	// text is the normalised text (findings masked, digits folded to 0),
	// for naming features in explanations only.
	text string
}

// Len is the number of non-zero features.
func (v Vector) Len() int { return len(v.Idx) }

// denseTypes are the finding types with a count feature of their own, by
// slot: index HashedDim+i. Append only: a slot's meaning is part of the
// weights format.
var denseTypes = [...]detect.Type{
	detect.Email, detect.Phone, detect.SSN, detect.CreditCard, detect.IBAN,
	detect.IPAddress, detect.Person, detect.DateOfBirth, detect.Passport,
	detect.DriversLicense, detect.APIKey, detect.AWSAccessKey,
	detect.AWSSecretKey, detect.PrivateKey, detect.JWT, detect.DatabaseURL,
	detect.Secret, detect.PromptInjection, detect.Jailbreak,
}

// Detector feature slots after the per-type counts.
const (
	slotOtherType  = len(denseTypes)    // count of findings of any other type
	slotMaxScore   = slotOtherType + 1  // + category-1: max score per category
	denseUsed      = slotMaxScore + 3   // slots in use
	maxCountFeat   = 4                  // log2(1+count) is capped here
	hashWord       = uint32(0x9e3779b9) // seeds per n-gram family
	hashBigram     = uint32(0x7f4a7c15) //
	hashChar3      = uint32(0x85ebca6b) //
	hashChar4      = uint32(0xc2b2ae35) //
	hashChar5      = uint32(0x27d4eb2f) //
	fnvOffset      = uint32(2166136261) // FNV-1a, 32 bits
	fnvPrime       = uint32(16777619)   //
	maxPlaceholder = 32                 // longest type name written as a placeholder
)

// scratch holds Featurize's reusable buffers: the normalised text and its
// rune offsets, the n-grams' buckets (sorted and counted, rather than
// accumulated in a dense array, which costs a cache miss per n-gram), the
// masked spans.
type scratch struct {
	buf          []byte
	offs         []int32
	words, chars []uint32 // buckets, one per n-gram occurrence
	tmp          []uint32 // radix sort buffer
	wc, cc       []count  // distinct buckets with their counts
	spans        []span
}

// count is a bucket and how often it occurs.
type count struct{ idx, n uint32 }

type span struct {
	start, end int
	typ        detect.Type
}

var scratchPool = sync.Pool{New: func() any { return new(scratch) }}

// Featurize turns text and its findings into the model's feature vector.
//
// It reads the first MaxText bytes of text. The spans of PII and secret
// findings are replaced by their typed placeholder ("[ssn]") before any
// n-gram is taken, so no detected value reaches the features; the text is
// lower-cased, runs of white space become one space and ASCII digits become
// 0. The features are
//   - hashed word unigrams and bigrams (FNV-1a into HashedDim buckets),
//     their block L2-normalised;
//   - hashed character 3-, 4- and 5-grams (of runes, across word
//     boundaries), their block L2-normalised;
//   - per finding type (of denseTypes, others pooled) log2(1+count), capped
//     at 4; per category the highest finding score.
//
// At most MaxFeatures hashed features are kept: words first (at most half
// of them), then character n-grams; over a cap the most frequent buckets
// stay (ties to the lower index). Values are rounded to multiples of 2^-16,
// which Encode keeps exactly. Featurize is deterministic and safe for
// concurrent use; findings may be in any order, overlap or lie out of
// bounds (those are ignored).
func Featurize(text string, findings []detect.Finding) Vector {
	if len(text) > MaxText {
		cut := MaxText
		for cut > 0 && !utf8.RuneStart(text[cut]) {
			cut--
		}
		text = text[:cut]
	}
	s := scratchPool.Get().(*scratch)
	defer scratchPool.Put(s)
	s.normalise(text, findings)

	s.words = s.words[:0]
	eachWord(s.buf, func(h uint32, _, _ int) { s.words = append(s.words, h) })
	s.wc, s.tmp = countBuckets(s.words, s.tmp, s.wc[:0], MaxFeatures/2)
	s.chars = charBuckets(s.buf, s.offs, s.chars[:0])
	s.cc, s.tmp = countBuckets(s.chars, s.tmp, s.cc[:0], MaxFeatures-len(s.wc))
	wInv, cInv := invNorm(s.wc), invNorm(s.cc)

	var dense [denseUsed]float64
	denseFeatures(&dense, findings, len(text))
	n := len(s.wc) + len(s.cc) + denseUsed
	v := Vector{Idx: make([]uint32, 0, n), Val: make([]float32, 0, n)}
	add := func(idx uint32, x float64) {
		if q := quantise(x); q != 0 {
			v.Idx = append(v.Idx, idx)
			v.Val = append(v.Val, q)
		}
	}
	i, j := 0, 0
	for i < len(s.wc) || j < len(s.cc) {
		switch {
		case j == len(s.cc) || i < len(s.wc) && s.wc[i].idx < s.cc[j].idx:
			add(s.wc[i].idx, float64(float64(s.wc[i].n)*wInv))
			i++
		case i == len(s.wc) || s.cc[j].idx < s.wc[i].idx:
			add(s.cc[j].idx, float64(float64(s.cc[j].n)*cInv))
			j++
		default: // a word and a character n-gram share the bucket
			add(s.wc[i].idx, float64(float64(s.wc[i].n)*wInv)+float64(float64(s.cc[j].n)*cInv))
			i++
			j++
		}
	}
	for k, d := range dense {
		add(uint32(HashedDim+k), d)
	}
	v.text = string(s.buf)
	return v
}

// invNorm is 1 over the L2 norm of the counts (0 for none).
func invNorm(cs []count) float64 {
	sum := 0.0
	for _, c := range cs {
		sum += float64(c.n) * float64(c.n) // exact: counts are small
	}
	if sum == 0 {
		return 0
	}
	return 1 / math.Sqrt(sum)
}

// countBuckets sorts hs (using tmp) and appends to dst each distinct bucket
// with its count, in index order; when there are more than limit, only the
// limit most frequent (ties to the lower index). It returns dst and tmp.
func countBuckets(hs, tmp []uint32, dst []count, limit int) ([]count, []uint32) {
	tmp = radixSort18(hs, tmp)
	for i := 0; i < len(hs); {
		j := i + 1
		for j < len(hs) && hs[j] == hs[i] {
			j++
		}
		dst = append(dst, count{hs[i], uint32(j - i)})
		i = j
	}
	if len(dst) > limit {
		slices.SortFunc(dst, func(a, b count) int {
			if a.n != b.n {
				return int(b.n) - int(a.n)
			}
			return int(a.idx) - int(b.idx)
		})
		dst = dst[:max(limit, 0)]
		slices.SortFunc(dst, func(a, b count) int { return int(a.idx) - int(b.idx) })
	}
	return dst, tmp
}

// radixSort18 sorts a, whose values are below 2^18, in two passes of 9
// bits; tmp is grown to len(a) as needed and returned.
func radixSort18(a, tmp []uint32) []uint32 {
	if len(a) < 64 {
		slices.Sort(a)
		return tmp
	}
	if cap(tmp) < len(a) {
		tmp = make([]uint32, len(a), 2*len(a))
	}
	tmp = tmp[:len(a)]
	src, dst := a, tmp
	for shift := 0; shift < 18; shift += 9 {
		var pos [513]int
		for _, x := range src {
			pos[(x>>shift)&511+1]++
		}
		for i := 1; i < len(pos); i++ {
			pos[i] += pos[i-1]
		}
		for _, x := range src {
			k := (x >> shift) & 511
			dst[pos[k]] = x
			pos[k]++
		}
		src, dst = dst, src
	}
	// Two passes: the result is back in a.
	return tmp
}

// quantise rounds x to a multiple of 1/quantum, as a float32 (exact: the
// values are far below 2^24/quantum).
func quantise(x float64) float32 {
	return float32(math.Round(x*quantum) / quantum)
}

// denseFeatures fills d with the detectors' features of findings, those
// within a text of n bytes.
func denseFeatures(d *[denseUsed]float64, findings []detect.Finding, n int) {
	var counts [slotOtherType + 1]int
	for _, f := range findings {
		if f.Start < 0 || f.End > n || f.Start >= f.End || math.IsNaN(f.Score) {
			continue
		}
		slot := slotOtherType
		for i, t := range denseTypes {
			if t == f.Type {
				slot = i
				break
			}
		}
		counts[slot]++
		c := int(f.Type.Category()) - 1
		if c >= 0 && c < 3 {
			d[slotMaxScore+c] = max(d[slotMaxScore+c], min(max(f.Score, 0), 1))
		}
	}
	for i, c := range counts {
		if c > 0 {
			d[i] = countFeature(c)
		}
	}
}

// log2Plus1 is log2(1+c) for c = 0…15, as literals rather than math.Log2,
// whose last bit may differ between architectures.
var log2Plus1 = [16]float64{0, 1, 1.584962500721156, 2, 2.321928094887362,
	2.584962500721156, 2.807354922057604, 3, 3.169925001442312,
	3.321928094887362, 3.4594316186372973, 3.584962500721156,
	3.700439718141092, 3.807354922057604, 3.9068905956085187, 4}

// countFeature is the value of a count feature: log2(1+c), at most
// maxCountFeat.
func countFeature(c int) float64 {
	if c >= len(log2Plus1) {
		return maxCountFeat
	}
	return log2Plus1[c]
}

// normalise writes text into s.buf lower-cased, white space collapsed,
// ASCII digits folded to 0 and the spans of PII and secret findings
// replaced by "[type]"; s.offs gets the byte offset of every rune of s.buf.
func (s *scratch) normalise(text string, findings []detect.Finding) {
	s.spans = s.spans[:0]
	for _, f := range findings {
		if f.Start < 0 || f.End > len(text) || f.Start >= f.End || f.Type.Category() == detect.CategoryInjection {
			continue
		}
		s.spans = append(s.spans, span{f.Start, f.End, f.Type})
	}
	slices.SortFunc(s.spans, func(a, b span) int { return a.start - b.start })
	s.buf = s.buf[:0]
	s.offs = s.offs[:0]
	space := true // at the start: no leading space
	next := 0     // next span to consider
	for i := 0; i < len(text); {
		for next < len(s.spans) && s.spans[next].end <= i {
			next++
		}
		if next < len(s.spans) && s.spans[next].start <= i {
			sp := s.spans[next]
			s.placeholder(sp.typ)
			space = false
			i = sp.end
			// Overlapping spans: extend over every span that starts inside.
			for next < len(s.spans) && s.spans[next].start < i {
				i = max(i, s.spans[next].end)
				next++
			}
			continue
		}
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
				if !space {
					s.emit(' ')
					space = true
				}
				continue
			case 'A' <= c && c <= 'Z':
				c += 'a' - 'A'
			case '0' <= c && c <= '9':
				c = '0'
			}
			s.emit(c)
			space = false
			continue
		}
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if unicode.IsSpace(r) {
			if !space {
				s.emit(' ')
				space = true
			}
			continue
		}
		if r != utf8.RuneError {
			r = unicode.ToLower(r)
		}
		s.offs = append(s.offs, int32(len(s.buf)))
		s.buf = utf8.AppendRune(s.buf, r)
		space = false
	}
	if n := len(s.buf); n > 0 && s.buf[n-1] == ' ' {
		s.buf = s.buf[:n-1]
		s.offs = s.offs[:len(s.offs)-1]
	}
}

// emit appends the ASCII byte c as one rune.
func (s *scratch) emit(c byte) {
	s.offs = append(s.offs, int32(len(s.buf)))
	s.buf = append(s.buf, c)
}

// placeholder writes "[type]", lower-cased, the type's name cut to
// maxPlaceholder bytes of letters, digits and underscores.
func (s *scratch) placeholder(t detect.Type) {
	s.emit('[')
	for i := 0; i < len(t) && i < maxPlaceholder; i++ {
		c := t[i]
		switch {
		case 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_':
		default:
			c = '_'
		}
		s.emit(c)
	}
	s.emit(']')
}

// isWordByte reports whether the ASCII byte c belongs to a word.
func isWordByte(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || 'A' <= c && c <= 'Z'
}

// eachWord calls f with the bucket of every word unigram and bigram of the
// normalised text b, and the byte span of the n-gram. A word is a maximal
// run of letters, digits, marks and underscores.
func eachWord(b []byte, f func(bucket uint32, start, end int)) {
	prevStart := -1
	var prevHash uint32
	for i := 0; i < len(b); {
		start := i
		for i < len(b) {
			if c := b[i]; c < utf8.RuneSelf {
				if !isWordByte(c) {
					break
				}
				i++
				continue
			}
			r, size := utf8.DecodeRune(b[i:])
			if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !unicode.IsMark(r) {
				break
			}
			i += size
		}
		if i == start {
			// Not a word byte: skip the rune.
			_, size := utf8.DecodeRune(b[i:])
			i += size
			continue
		}
		h := fnvOffset
		for _, c := range b[start:i] {
			h = (h ^ uint32(c)) * fnvPrime
		}
		f(bucket(h, hashWord), start, i)
		if prevStart >= 0 {
			bh := (prevHash ^ ' ') * fnvPrime
			for _, c := range b[start:i] {
				bh = (bh ^ uint32(c)) * fnvPrime
			}
			f(bucket(bh, hashBigram), prevStart, i)
		}
		prevStart, prevHash = start, h
	}
}

// charBuckets appends to dst the bucket of every character 3-, 4- and
// 5-gram (of runes, across word boundaries) of the normalised text b, whose
// runes start at offs: for each rune in turn, its 3-, 4- and 5-gram as far
// as the text goes (charGram maps a position back).
func charBuckets(b []byte, offs []int32, dst []uint32) []uint32 {
	n := len(offs)
	for i := 0; i+3 <= n; i++ {
		h := fnvOffset
		at := int(offs[i])
		for k, seed := range [3]uint32{hashChar3, hashChar4, hashChar5} {
			if i+3+k > n {
				break
			}
			end := len(b)
			if i+3+k < n {
				end = int(offs[i+3+k])
			}
			for ; at < end; at++ {
				h = (h ^ uint32(b[at])) * fnvPrime
			}
			dst = append(dst, bucket(h, seed))
		}
	}
	return dst
}

// charGram returns the rune index and length of the n-gram at position k of
// charBuckets' output for a text of nr runes; i is -1 beyond the end.
func charGram(k, nr int) (i, n int) {
	full := max(0, nr-4) // runes followed by all three n-grams
	if k < 3*full {
		return k / 3, 3 + k%3
	}
	k -= 3 * full
	for i := full; ; i++ {
		c := min(3, nr-i-2) // n-grams starting at rune i
		if c <= 0 {
			return -1, 0
		}
		if k < c {
			return i, 3 + k
		}
		k -= c
	}
}

// bucket mixes the FNV hash h with a family seed (murmur3's finaliser) and
// maps it onto [0, HashedDim).
func bucket(h, seed uint32) uint32 {
	x := h ^ seed
	x ^= x >> 16
	x *= 0x85ebca6b
	x ^= x >> 13
	x *= 0xc2b2ae35
	x ^= x >> 16
	return uint32(uint64(x) * HashedDim >> 32)
}

// featureNames names the features of v at the given indices: detector
// slots by type or category, hashed buckets by the first n-gram of v's text
// that falls into them (words before character n-grams), or "feature #i"
// when v has no text (a decoded vector) or no n-gram is found.
func featureNames(v Vector, idx []uint32) []string {
	names := make([]string, len(idx))
	missing := 0
	for k, i := range idx {
		if i >= HashedDim {
			names[k] = denseName(int(i - HashedDim))
		} else {
			missing++
		}
	}
	if missing > 0 && v.text != "" {
		s := scratchPool.Get().(*scratch)
		defer scratchPool.Put(s)
		s.buf = append(s.buf[:0], v.text...)
		s.offs = s.offs[:0]
		for i := range v.text {
			s.offs = append(s.offs, int32(i))
		}
		eachWord(s.buf, func(h uint32, start, end int) {
			for k, i := range idx {
				if i == h && names[k] == "" {
					names[k] = "word " + quoteGram(s.buf[start:end])
					missing--
				}
			}
		})
		if missing > 0 {
			s.chars = charBuckets(s.buf, s.offs, s.chars[:0])
			for k, h := range idx {
				if names[k] != "" {
					continue
				}
				if at := slices.Index(s.chars, h); at >= 0 {
					i, n := charGram(at, len(s.offs))
					end := len(s.buf)
					if i+n < len(s.offs) {
						end = int(s.offs[i+n])
					}
					names[k] = "chars " + quoteGram(s.buf[s.offs[i]:end])
				}
			}
		}
	}
	for k, i := range idx {
		if names[k] == "" {
			names[k] = "feature #" + strconv.Itoa(int(i))
		}
	}
	return names
}

// denseName names detector slot j.
func denseName(j int) string {
	switch {
	case j < len(denseTypes):
		return "findings " + string(denseTypes[j])
	case j == slotOtherType:
		return "findings other"
	case j >= slotMaxScore && j < denseUsed:
		return "max score " + [...]string{"pii", "secret", "injection"}[j-slotMaxScore]
	}
	return "detector #" + strconv.Itoa(j)
}

// quoteGram quotes an n-gram for an explanation, cut to 40 bytes.
func quoteGram(g []byte) string {
	if len(g) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(g[cut]) {
			cut--
		}
		g = g[:cut]
	}
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range string(g) {
		switch {
		case r == '"' || r == '\\':
			sb.WriteByte('\\')
			sb.WriteRune(r)
		case r < ' ' || r == utf8.RuneError:
			sb.WriteByte('?')
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}
