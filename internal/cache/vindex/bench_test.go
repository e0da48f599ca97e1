package vindex

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"
)

// bench100k is a built 100,000-entry single-scope index, shared by the
// benchmark runs of one dimension.
type bench100k struct {
	x         *Index
	queries   [][]float32 // noisy copies of stored vectors
	sources   []string    // ID each query was copied from
	heapBytes uint64      // HeapAlloc growth while building
	addNs     float64     // mean Add time while building
}

var (
	benchMu    sync.Mutex
	benchBuilt = map[string]*bench100k{}
)

// build100k builds (once per dim and data) an index of 100,000 vectors in
// one scope: embedding-like ones, or uniformly random ones if random. Only
// the query vectors are kept outside the index, so the heap growth measures
// the index.
func build100k(b *testing.B, dim int, random bool) *bench100k {
	benchMu.Lock()
	defer benchMu.Unlock()
	key := fmt.Sprint(dim, random)
	if bb := benchBuilt[key]; bb != nil {
		return bb
	}
	const n = 100000
	r := rand.New(rand.NewPCG(uint64(dim), 99))
	gen := newEmbeddingGen(r, dim)
	if random {
		gen.basis = nil // next then draws uniformly random unit vectors
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	x := mustNew(b, Options{Dim: dim, MaxEntries: n})
	bb := &bench100k{x: x}
	start := time.Now()
	v := make([]float32, dim)
	for i := range n {
		gen.next(v)
		mustAdd(b, x, "scope", strconv.Itoa(i), v)
		if i%100 == 0 {
			bb.queries = append(bb.queries, noisy(r, v, 0.3))
			bb.sources = append(bb.sources, strconv.Itoa(i))
		}
	}
	bb.addNs = float64(time.Since(start).Nanoseconds()) / n
	runtime.GC()
	runtime.ReadMemStats(&after)
	bb.heapBytes = after.HeapAlloc - before.HeapAlloc
	benchBuilt[key] = bb
	return bb
}

// embeddingGen draws vectors like embeddingLike, one at a time.
type embeddingGen struct {
	r     *rand.Rand
	basis [][]float32
	tmp   []float32
}

func newEmbeddingGen(r *rand.Rand, dim int) *embeddingGen {
	g := &embeddingGen{r: r, basis: make([][]float32, 16), tmp: make([]float32, dim)}
	for i := range g.basis {
		g.basis[i] = randUnit(r, dim)
	}
	return g
}

func (g *embeddingGen) next(v []float32) {
	if g.basis == nil {
		copy(v, randUnit(g.r, len(v)))
		return
	}
	clear(g.tmp)
	for _, b := range g.basis {
		c := float32(g.r.NormFloat64())
		for j := range g.tmp {
			g.tmp[j] += c * b[j]
		}
	}
	u, _ := normalized(g.tmp)
	noise := randUnit(g.r, len(v))
	for j := range u {
		u[j] += 0.2 * noise[j]
	}
	u, _ = normalized(u)
	copy(v, u)
}

// BenchmarkSearch100k searches one scope of 100,000 entries for the nearest
// entry to a noisy copy (similarity ≈ 0.96) of a stored vector: embedding-
// like vectors of 512 and 1536 dimensions, and uniformly random ones of 512
// (the hardest case for a graph). Metrics: self-hit (share of searches whose
// best hit is the source), bytes/100k (Bytes()), heap-bytes/100k (HeapAlloc
// growth while building) and build-ns/add.
func BenchmarkSearch100k(b *testing.B) {
	for _, c := range []struct {
		dim    int
		random bool
	}{{512, false}, {1536, false}, {512, true}} {
		name := fmt.Sprint("dim=", c.dim)
		if c.random {
			name += "/random"
		}
		b.Run(name, func(b *testing.B) {
			bb := build100k(b, c.dim, c.random)
			b.ReportAllocs()
			b.ResetTimer()
			hitSelf := 0
			for i := 0; b.Loop(); i++ {
				j := i % len(bb.queries)
				hits := bb.x.Search("scope", bb.queries[j], 1, 0.5)
				if len(hits) == 1 && hits[0].ID == bb.sources[j] {
					hitSelf++
				}
			}
			b.ReportMetric(float64(hitSelf)/float64(b.N), "self-hit")
			b.ReportMetric(float64(bb.x.Bytes()), "bytes/100k")
			b.ReportMetric(float64(bb.heapBytes), "heap-bytes/100k")
			b.ReportMetric(bb.addNs, "build-ns/add")
		})
	}
}

// BenchmarkAdd adds to a full 20,000-entry graph scope: each Add inserts a
// node and evicts (removes) the oldest.
func BenchmarkAdd(b *testing.B) {
	const n, dim = 20000, 512
	x, vecs := fullScope(b, rand.New(rand.NewPCG(7, 7)), n, dim)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if err := x.Add("scope", "new"+strconv.Itoa(i), vecs[i%len(vecs)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchExact searches one scope of 2,000 entries exactly.
func BenchmarkSearchExact(b *testing.B) {
	const n, dim = 2000, 512
	r := rand.New(rand.NewPCG(8, 8))
	x := mustNew(b, Options{Dim: dim, MaxEntries: n})
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = randUnit(r, dim)
		mustAdd(b, x, "scope", strconv.Itoa(i), vecs[i])
	}
	q := noisy(r, vecs[0], 0.3)
	b.ReportAllocs()
	for b.Loop() {
		x.Search("scope", q, 1, 0.5)
	}
}

// fullScope returns an index whose scope "scope" holds n embedding-like
// vectors of dim dimensions (MaxEntries n, so each further Add evicts the
// oldest), and 1,000 more such vectors drawn from the same generator.
func fullScope(b *testing.B, r *rand.Rand, n, dim int) (*Index, [][]float32) {
	b.Helper()
	gen := newEmbeddingGen(r, dim)
	x := mustNew(b, Options{Dim: dim, MaxEntries: n})
	v := make([]float32, dim)
	for i := range n {
		gen.next(v)
		mustAdd(b, x, "scope", strconv.Itoa(i), v)
	}
	vecs := make([][]float32, 1000)
	for i := range vecs {
		vecs[i] = make([]float32, dim)
		gen.next(vecs[i])
	}
	return x, vecs
}
