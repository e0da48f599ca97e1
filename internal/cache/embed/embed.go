package embed

import (
	"context"
	"fmt"
	"math"
	"sync/atomic"
)

// Embedder turns texts into unit-length vectors. Name identifies the model:
// vectors from different names are never compared. Embed returns one vector of
// length Dim per text, in order.
type Embedder interface {
	Name() string
	Dim() int
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Func adapts f, for example a call to a provider's /v1/embeddings endpoint,
// to an Embedder called name with vectors of length dim. The vectors f returns
// are scaled to unit length (a zero vector stays zero); Embed fails if f
// fails, or returns a different number of vectors than texts or a vector whose
// length is not dim. A dim of 0 or less means the dimension is not known in
// advance: it is taken from the first vector f returns (Dim reports 0 until
// then), and later vectors must have the same.
func Func(name string, dim int, f func(ctx context.Context, texts []string) ([][]float32, error)) Embedder {
	e := &funcEmbedder{name: name, f: f}
	e.dim.Store(int64(max(dim, 0)))
	return e
}

type funcEmbedder struct {
	name string
	dim  atomic.Int64 // 0 until known
	f    func(ctx context.Context, texts []string) ([][]float32, error)
}

func (e *funcEmbedder) Name() string { return e.name }
func (e *funcEmbedder) Dim() int     { return int(e.dim.Load()) }

func (e *funcEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return [][]float32{}, nil
	}
	vs, err := e.f(ctx, texts)
	if err != nil {
		return nil, err
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("embed %s: got %d vectors for %d texts", e.name, len(vs), len(texts))
	}
	for i, v := range vs {
		want := e.dim.Load()
		if want == 0 && len(v) > 0 {
			e.dim.CompareAndSwap(0, int64(len(v))) // the first vector sets it
			want = e.dim.Load()
		}
		if int64(len(v)) != want {
			return nil, fmt.Errorf("embed %s: vector %d has %d dimensions, want %d", e.name, i, len(v), want)
		}
		normalize(v)
	}
	return vs, nil
}

// normalize scales v in place to unit length, leaving a zero vector (or one
// holding a NaN or an infinity) as zeros.
func normalize(v []float32) {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsNaN(s) || math.IsInf(s, 0) {
		clear(v)
		return
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
}

// Cosine returns the dot product of a and b, which is their cosine
// similarity when both have unit length, as the vectors of every Embedder
// here do. It returns 0 if the lengths differ.
func Cosine(a, b []float32) float32 {
	if len(a) != len(b) {
		return 0
	}
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

var _ Embedder = (*funcEmbedder)(nil)
