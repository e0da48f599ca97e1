package vindex

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestNewRejects(t *testing.T) {
	for _, o := range []Options{
		{Dim: 0, MaxEntries: 10},
		{Dim: 8, MaxEntries: 0},
		{Dim: 8, MaxEntries: 10, ExactBelow: -1},
		{Dim: 8, MaxEntries: 10, EfSearch: -1},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%+v): got nil error, want one", o)
		}
	}
}

func TestAddRejects(t *testing.T) {
	x := mustNew(t, Options{Dim: 4, MaxEntries: 10})
	nan := float32(0)
	nan /= nan
	for _, c := range []struct {
		vec  []float32
		want error
	}{
		{[]float32{1, 0, 0}, ErrDim},
		{[]float32{0, 0, 0, 0}, ErrVector},
		{[]float32{1, nan, 0, 0}, ErrVector},
	} {
		if err := x.Add("s", "a", c.vec); !errors.Is(err, c.want) {
			t.Errorf("Add(%v): got %v, want %v", c.vec, err, c.want)
		}
	}
	if x.Len() != 0 {
		t.Errorf("Len after rejected adds: got %d, want 0", x.Len())
	}
	if hits := x.Search("s", []float32{1, 0, 0}, 1, -1); hits != nil {
		t.Errorf("Search with wrong dim: got %v, want nil", hits)
	}
}

// modes runs f against a small index searched exactly and one whose scopes
// are graphs from the first entry.
func modes(t *testing.T, f func(t *testing.T, exactBelow int)) {
	for _, m := range []struct {
		name       string
		exactBelow int
	}{{"exact", 1 << 20}, {"graph", 1}} {
		t.Run(m.name, func(t *testing.T) { f(t, m.exactBelow) })
	}
}

func TestExactNearest(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n, dim = 1500, 64
	x := mustNew(t, Options{Dim: dim, MaxEntries: n})
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = randUnit(r, dim)
		mustAdd(t, x, "s", strconv.Itoa(i), vecs[i])
	}
	if isGraph(x, "s") {
		t.Fatal("scope below ExactBelow is a graph, want exact")
	}
	for range 100 {
		q := randUnit(r, dim) // unrelated query: the exact path must still be exact
		want := bruteTop(vecs, q, 5)
		got := x.Search("s", q, 5, -1)
		var gotIdx []int
		for _, h := range got {
			i, _ := strconv.Atoi(h.ID)
			gotIdx = append(gotIdx, i)
		}
		if !slices.Equal(gotIdx, want) {
			t.Fatalf("Search: got %v, want %v", gotIdx, want)
		}
		if s := dot(vecs[want[0]], q); math.Abs(float64(got[0].Similarity-s)) > 1e-5 {
			t.Fatalf("Similarity: got %v, want %v", got[0].Similarity, s)
		}
	}
}

func TestScopeIsolation(t *testing.T) {
	modes(t, func(t *testing.T, exactBelow int) {
		r := rand.New(rand.NewPCG(7, 8))
		x := mustNew(t, Options{Dim: 32, MaxEntries: 1000, ExactBelow: exactBelow})
		var vecs [][]float32
		for i := range 200 {
			v := randUnit(r, 32)
			vecs = append(vecs, v)
			// The same vectors in both scopes, and a few only in "b".
			mustAdd(t, x, "a", "a"+strconv.Itoa(i), v)
			mustAdd(t, x, "b", "b"+strconv.Itoa(i), v)
			mustAdd(t, x, "b", "bonly"+strconv.Itoa(i), randUnit(r, 32))
		}
		for i, v := range vecs {
			for _, h := range x.Search("a", v, 10, -1) {
				if !strings.HasPrefix(h.ID, "a") || h.Scope != "a" {
					t.Fatalf("Search(a) returned %+v from another scope", h)
				}
			}
			got := x.Search("b", v, 1, -1)
			if len(got) != 1 || got[0].ID != "b"+strconv.Itoa(i) || got[0].Scope != "b" {
				t.Fatalf("Search(b, vec %d): got %+v, want b%d", i, got, i)
			}
		}
		if hits := x.Search("c", vecs[0], 10, -1); len(hits) != 0 {
			t.Errorf("Search of an unknown scope: got %v, want none", hits)
		}
	})
}

func TestMinSim(t *testing.T) {
	modes(t, func(t *testing.T, exactBelow int) {
		x := mustNew(t, Options{Dim: 2, MaxEntries: 10, ExactBelow: exactBelow})
		// Unit vectors at 0°, 30°, 60°, 90°: similarities 1, .866, .5, 0.
		mustAdd(t, x, "s", "0", []float32{1, 0})
		mustAdd(t, x, "s", "30", []float32{0.8660254, 0.5})
		mustAdd(t, x, "s", "60", []float32{0.5, 0.8660254})
		mustAdd(t, x, "s", "90", []float32{0, 1})
		for _, c := range []struct {
			min  float32
			want []string
		}{
			{0.99, []string{"0"}},
			{0.8, []string{"0", "30"}},
			{0.4, []string{"0", "30", "60"}},
			{-1, []string{"0", "30", "60", "90"}},
		} {
			got := ids(x.Search("s", []float32{2, 0}, 10, c.min)) // query not unit: normalised
			if !slices.Equal(got, c.want) {
				t.Errorf("minSim %v: got %v, want %v", c.min, got, c.want)
			}
		}
	})
}

func TestReplace(t *testing.T) {
	modes(t, func(t *testing.T, exactBelow int) {
		x := mustNew(t, Options{Dim: 2, MaxEntries: 10, ExactBelow: exactBelow})
		mustAdd(t, x, "s", "id", []float32{1, 0})
		mustAdd(t, x, "s", "other", []float32{0, 1})
		mustAdd(t, x, "s", "id", []float32{-1, 0})
		if x.Len() != 2 {
			t.Errorf("Len: got %d, want 2", x.Len())
		}
		if got := ids(x.Search("s", []float32{1, 0}, 10, 0.5)); len(got) != 0 {
			t.Errorf("Search for the replaced vector: got %v, want none", got)
		}
		if got := ids(x.Search("s", []float32{-1, 0}, 10, 0.5)); !slices.Equal(got, []string{"id"}) {
			t.Errorf("Search for the new vector: got %v, want [id]", got)
		}
		// Replacing into another scope moves the entry.
		mustAdd(t, x, "t", "id", []float32{-1, 0})
		if got := ids(x.Search("s", []float32{-1, 0}, 10, 0.5)); len(got) != 0 {
			t.Errorf("Search of the old scope: got %v, want none", got)
		}
		if got := ids(x.Search("t", []float32{-1, 0}, 10, 0.5)); !slices.Equal(got, []string{"id"}) {
			t.Errorf("Search of the new scope: got %v, want [id]", got)
		}
	})
}

func TestRemove(t *testing.T) {
	modes(t, func(t *testing.T, exactBelow int) {
		r := rand.New(rand.NewPCG(9, 10))
		x := mustNew(t, Options{Dim: 16, MaxEntries: 100, ExactBelow: exactBelow})
		vecs := make([][]float32, 50)
		for i := range vecs {
			vecs[i] = randUnit(r, 16)
			mustAdd(t, x, "s", strconv.Itoa(i), vecs[i])
		}
		for i := 0; i < 50; i += 2 {
			if !x.Remove(strconv.Itoa(i)) {
				t.Fatalf("Remove(%d): got false, want true", i)
			}
		}
		if x.Remove("0") {
			t.Error("second Remove: got true, want false")
		}
		if x.Len() != 25 {
			t.Errorf("Len: got %d, want 25", x.Len())
		}
		for i, v := range vecs {
			got := x.Search("s", v, 50, -1)
			for _, h := range got {
				if n, _ := strconv.Atoi(h.ID); n%2 == 0 {
					t.Fatalf("Search returned removed %s", h.ID)
				}
			}
			if i%2 == 1 && (len(got) == 0 || got[0].ID != strconv.Itoa(i)) {
				t.Fatalf("Search(vec %d): got %v, want it first", i, ids(got))
			}
		}
	})
}

func TestEviction(t *testing.T) {
	modes(t, func(t *testing.T, exactBelow int) {
		r := rand.New(rand.NewPCG(11, 12))
		const max = 100
		var evicted []string
		x := mustNew(t, Options{Dim: 8, MaxEntries: max, ExactBelow: exactBelow,
			OnEvict: func(id string) { evicted = append(evicted, id) }})
		hot := randUnit(r, 8)
		mustAdd(t, x, "s", "hot", hot)
		for i := range 300 {
			mustAdd(t, x, fmt.Sprint("s", i%3), strconv.Itoa(i), randUnit(r, 8))
			if n := x.Len(); n > max {
				t.Fatalf("Len after %d adds: got %d, want ≤ %d", i+2, n, max)
			}
			if got := x.Search("s", hot, 1, 0.99); len(got) != 1 || got[0].ID != "hot" {
				t.Fatalf("after %d adds the searched entry is gone: got %v", i+2, got)
			}
		}
		if x.Len() != max {
			t.Errorf("Len: got %d, want %d", x.Len(), max)
		}
		if len(evicted) != 301-max {
			t.Errorf("OnEvict calls: got %d, want %d", len(evicted), 301-max)
		}
		// Unsearched entries go oldest first.
		for i, id := range evicted {
			if id != strconv.Itoa(i) {
				t.Fatalf("eviction %d: got %s, want %d", i, id, i)
			}
		}
		if x.Remove(evicted[0]) {
			t.Errorf("Remove of evicted %s: got true, want false", evicted[0])
		}
	})
}

func TestReset(t *testing.T) {
	modes(t, func(t *testing.T, exactBelow int) {
		r := rand.New(rand.NewPCG(13, 14))
		x := mustNew(t, Options{Dim: 8, MaxEntries: 1000, ExactBelow: exactBelow})
		v := randUnit(r, 8)
		for _, sc := range []string{"t1/m1", "t1/m2", "t2/m1"} {
			for i := range 10 {
				mustAdd(t, x, sc, sc+"#"+strconv.Itoa(i), randUnit(r, 8))
			}
			mustAdd(t, x, sc, sc+"#v", v)
		}
		if got := x.Reset("t1/"); got != 22 {
			t.Errorf("Reset(t1/): got %d, want 22", got)
		}
		if x.Len() != 11 {
			t.Errorf("Len: got %d, want 11", x.Len())
		}
		for _, sc := range []string{"t1/m1", "t1/m2"} {
			if got := x.Search(sc, v, 10, -1); len(got) != 0 {
				t.Errorf("Search(%s) after Reset: got %v, want none", sc, ids(got))
			}
		}
		if got := ids(x.Search("t2/m1", v, 1, -1)); !slices.Equal(got, []string{"t2/m1#v"}) {
			t.Errorf("Search(t2/m1): got %v, want [t2/m1#v]", got)
		}
		mustAdd(t, x, "t1/m1", "again", v)
		if got := ids(x.Search("t1/m1", v, 10, -1)); !slices.Equal(got, []string{"again"}) {
			t.Errorf("Search after re-adding: got %v, want [again]", got)
		}
		if got := x.Reset(""); got != 12 || x.Len() != 0 {
			t.Errorf("Reset(\"\"): got %d and Len %d, want 12 and 0", got, x.Len())
		}
	})
}

func TestPromoteDemote(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	x := mustNew(t, Options{Dim: 16, MaxEntries: 1000, ExactBelow: 100})
	vecs := make([][]float32, 150)
	for i := range vecs {
		vecs[i] = randUnit(r, 16)
		mustAdd(t, x, "s", strconv.Itoa(i), vecs[i])
		if want := i+1 >= 100; isGraph(x, "s") != want {
			t.Fatalf("after %d adds: graph %v, want %v", i+1, !want, want)
		}
	}
	for i := range 110 {
		x.Remove(strconv.Itoa(i))
	}
	if isGraph(x, "s") {
		t.Error("scope of 40 entries (ExactBelow 100) still a graph, want exact")
	}
	for i := 110; i < 150; i++ {
		if got := x.Search("s", vecs[i], 1, -1); len(got) != 1 || got[0].ID != strconv.Itoa(i) {
			t.Fatalf("Search(vec %d) after demotion: got %v", i, ids(got))
		}
	}
}

func TestBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 18))
	const dim, n = 128, 1500
	x := mustNew(t, Options{Dim: dim, MaxEntries: 5000, ExactBelow: 500})
	if b := x.Bytes(); b != 0 {
		t.Errorf("Bytes of an empty index: got %d, want 0", b)
	}
	for i := range n {
		mustAdd(t, x, "s", strconv.Itoa(i), randUnit(r, dim))
	}
	vecBytes := int64(n * dim * 4)
	b := x.Bytes()
	// Vectors plus at least a graph's layer-0 lists, and not absurdly more.
	if b < vecBytes+n*16*4 || b > 3*vecBytes {
		t.Errorf("Bytes: got %d, want between %d and %d", b, vecBytes+n*16*4, 3*vecBytes)
	}
	x.Reset("")
	if b := x.Bytes(); b != 0 {
		t.Errorf("Bytes after Reset: got %d, want 0", b)
	}
}

func TestConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(19, 20))
	const dim, max = 16, 400
	pool := make([][]float32, 1000)
	for i := range pool {
		pool[i] = randUnit(r, dim)
	}
	var evictions sync.Map
	x := mustNew(t, Options{Dim: dim, MaxEntries: max, ExactBelow: 50,
		OnEvict: func(id string) { evictions.Store(id, true) }})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() { // adders, over 4 scopes
			for i := range 1500 {
				j := (i*7 + w*13) % len(pool)
				if err := x.Add(fmt.Sprint("s", j%4), strconv.Itoa(j), pool[j]); err != nil {
					t.Error(err)
					return
				}
				if n := x.Len(); n > max {
					t.Errorf("Len: got %d, want ≤ %d", n, max)
					return
				}
			}
		})
		wg.Go(func() { // searchers
			for i := range 1500 {
				j := (i*11 + w) % len(pool)
				scope := fmt.Sprint("s", j%4)
				for _, h := range x.Search(scope, pool[j], 5, -1) {
					n, _ := strconv.Atoi(h.ID)
					if h.Scope != scope || fmt.Sprint("s", n%4) != scope {
						t.Errorf("Search(%s) returned %+v", scope, h)
						return
					}
				}
			}
		})
	}
	wg.Go(func() { // remover and resetter
		for i := range 1500 {
			x.Remove(strconv.Itoa((i * 3) % len(pool)))
			if i%500 == 499 {
				x.Reset("s1")
			}
			_ = x.Bytes()
		}
	})
	wg.Wait()
	// The index must still be consistent: every entry findable by its vector.
	x.mu.RLock()
	var live []*entry
	for _, e := range x.byID {
		live = append(live, e)
	}
	x.mu.RUnlock()
	for _, e := range live {
		got := x.Search(e.scope.name, e.vec, 1, -1)
		if len(got) != 1 || got[0].ID != e.id {
			t.Errorf("Search for live %s: got %v", e.id, ids(got))
		}
	}
	checkConsistent(t, x)
}

// checkConsistent checks the index's bookkeeping against its scopes and
// graphs. Nothing may run concurrently.
func checkConsistent(t *testing.T, x *Index) {
	t.Helper()
	total := 0
	for name, sc := range x.scopes {
		total += sc.live
		if sc.live != len(sc.members) {
			t.Errorf("scope %s: live %d, members %d, want equal", name, sc.live, len(sc.members))
		}
		for i, e := range sc.members {
			if e.slot != i || !e.placed || e.dead.Load() || x.byID[e.id] != e {
				t.Errorf("scope %s: member %d (%s) slot %d placed %v dead %v", name, i, e.id, e.slot, e.placed, e.dead.Load())
			}
			if sc.g != nil && (e.node < 0 || sc.g.nodes[e.node].owner != e) {
				t.Errorf("scope %s: member %s has node %d, not its own", name, e.id, e.node)
			}
		}
		if sc.g != nil && sc.g.live != len(sc.members) {
			t.Errorf("scope %s: graph holds %d nodes, want %d", name, sc.g.live, len(sc.members))
		}
		if sc.building {
			t.Errorf("scope %s: still building", name)
		}
	}
	if total != len(x.byID) {
		t.Errorf("scopes hold %d entries, byID %d, want equal", total, len(x.byID))
	}
}

// TestPromoteConcurrent promotes scopes while entries are added, removed
// and searched, so that the graph built outside the lock must catch up.
func TestPromoteConcurrent(t *testing.T) {
	r := rand.New(rand.NewPCG(25, 26))
	const dim, n = 64, 600
	pool := make([][]float32, n)
	for i := range pool {
		pool[i] = randUnit(r, dim)
	}
	for round := range 4 {
		x := mustNew(t, Options{Dim: dim, MaxEntries: n, ExactBelow: 200})
		var wg sync.WaitGroup
		for w := range 2 { // two adders: one builds the graph, the other adds meanwhile
			wg.Go(func() {
				for i := w; i < n; i += 2 {
					mustAdd(t, x, "s", strconv.Itoa(i), pool[i])
				}
			})
		}
		wg.Go(func() {
			for i := range 3 * n {
				x.Remove(strconv.Itoa((i*7 + round) % n))
				x.Search("s", pool[i%n], 3, -1)
				if round == 3 && i == n {
					x.Reset("")
				}
			}
		})
		wg.Wait()
		checkConsistent(t, x)
		for id, e := range x.byID {
			if got := x.Search("s", e.vec, 1, -1); len(got) != 1 || got[0].ID != id {
				t.Fatalf("round %d: Search for %s: got %v", round, id, ids(got))
			}
		}
	}
}
