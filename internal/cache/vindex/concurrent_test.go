package vindex

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkSearchDuringInserts searches one full scope of 20,000
// embedding-like 512-dimensional entries while one goroutine adds to it
// continuously (each Add inserts a graph node and evicts the oldest entry),
// measuring the request-path cost of a Search that competes with inserts
// for the scope's lock; inserting=false is the same Search without the
// inserter. Metric adds/op: Adds completed per Search.
func BenchmarkSearchDuringInserts(b *testing.B) {
	const n, dim = 20000, 512
	r := rand.New(rand.NewPCG(31, 32))
	x, vecs := fullScope(b, r, n, dim)
	queries := make([][]float32, 256)
	for i := range queries {
		queries[i] = noisy(r, vecs[r.IntN(len(vecs))], 0.3)
	}
	for _, inserting := range []bool{false, true} {
		b.Run(fmt.Sprint("inserting=", inserting), func(b *testing.B) {
			var stop atomic.Bool
			var adds atomic.Int64
			var wg sync.WaitGroup
			if inserting {
				wg.Go(func() {
					for i := 0; !stop.Load(); i++ {
						if err := x.Add("scope", fmt.Sprint("new", b.N, "-", i), vecs[i%len(vecs)]); err != nil {
							b.Error(err)
							return
						}
						adds.Add(1)
					}
				})
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := adds.Load()
			for i := 0; b.Loop(); i++ {
				x.Search("scope", queries[i%len(queries)], 1, 0.5)
			}
			b.StopTimer()
			b.ReportMetric(float64(adds.Load()-start)/float64(b.N), "adds/op")
			stop.Store(true)
			wg.Wait()
		})
	}
}

// TestGraphInsertSearchRemove runs searchers while entries are inserted
// into and removed from one graph scope (and a small exact scope beside
// it). Every hit must be an entry of the searched scope that was added and
// not removed before the search began; afterwards the bookkeeping must be
// consistent and recall must hold.
func TestGraphInsertSearchRemove(t *testing.T) {
	t.Parallel()
	n, dim := 3000, 48
	if raceEnabled {
		n = 600
	}
	r := rand.New(rand.NewPCG(41, 42))
	x := mustNew(t, Options{Dim: dim, MaxEntries: 4 * n, ExactBelow: 300})
	vecs := make([][]float32, 2*n)
	for i := range vecs {
		vecs[i] = randUnit(r, dim)
	}
	var added atomic.Int64 // entries 0 to added-1 have had Add called
	for i := range n {
		mustAdd(t, x, "s", strconv.Itoa(i), vecs[i])
	}
	added.Store(int64(n))
	for i := range 50 {
		mustAdd(t, x, "t", "t"+strconv.Itoa(i), vecs[i])
	}
	var seq atomic.Uint64
	removedAt := make([]atomic.Uint64, 2*n) // seq after Remove returned; 0 while alive

	var writers, searchers sync.WaitGroup
	var writing atomic.Bool
	writing.Store(true)
	inserted := make(chan int, n) // each insert, for the remover to match
	writers.Go(func() {
		defer close(inserted)
		for i := n; i < 2*n; i++ {
			added.Store(int64(i + 1))
			mustAdd(t, x, "s", strconv.Itoa(i), vecs[i])
			inserted <- i
		}
	})
	var removed atomic.Int64
	writers.Go(func() { // remover: one old entry or one just inserted per insert
		rr := rand.New(rand.NewPCG(43, 44))
		for i := range inserted {
			j := rr.IntN(n)
			if i%2 == 1 {
				j = i - rr.IntN(10)
			}
			if removedAt[j].Load() == 0 && x.Remove(strconv.Itoa(j)) {
				removedAt[j].Store(seq.Add(1))
				removed.Add(1)
			}
		}
	})
	for w := range 2 {
		searchers.Go(func() {
			rr := rand.New(rand.NewPCG(45, uint64(w)))
			for writing.Load() {
				before := seq.Load()
				hits := x.Search("s", noisy(rr, vecs[rr.IntN(2*n)], 0.3), 10, -1)
				for k, h := range hits {
					id, err := strconv.Atoi(h.ID)
					if err != nil || h.Scope != "s" || id >= int(added.Load()) {
						t.Errorf("Search(s) returned %+v, not an entry added to s", h)
						return
					}
					if at := removedAt[id].Load(); at != 0 && at <= before {
						t.Errorf("Search(s) returned %s, removed before the search began", h.ID)
						return
					}
					if k > 0 && h.Similarity > hits[k-1].Similarity {
						t.Errorf("hits not best first: %v", hits)
						return
					}
				}
			}
		})
	}
	writers.Wait()
	writing.Store(false)
	searchers.Wait()
	if t.Failed() {
		return
	}
	checkConsistent(t, x)
	if !isGraph(x, "s") {
		t.Fatal("scope s is not a graph after the churn")
	}
	alive := func(i int) bool { return removedAt[i].Load() == 0 }
	r1, r10 := recall(t, x, "s", vecs, alive, r, 300, 0.5)
	t.Logf("%d adds, %d removes, %d entries after: recall@1 %.3f recall@10 %.3f", 2*n+50, removed.Load(), x.Len(), r1, r10)
	if r1 < 0.95 {
		t.Errorf("recall@1 %.3f, want ≥ 0.95", r1)
	}
}
