package vindex

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// randUnit returns a random unit vector of length dim.
func randUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var s float64
	for i := range v {
		f := r.NormFloat64()
		v[i] = float32(f)
		s += f * f
	}
	inv := float32(1 / math.Sqrt(s))
	for i := range v {
		v[i] *= inv
	}
	return v
}

// noisy returns v plus eps times a random unit vector, normalised: for
// eps 0.5 its similarity to v is about 0.89.
func noisy(r *rand.Rand, v []float32, eps float32) []float32 {
	n := randUnit(r, len(v))
	out := make([]float32, len(v))
	for i := range v {
		out[i] = v[i] + eps*n[i]
	}
	u, _ := normalized(out)
	return u
}

// bruteTop returns the indexes of the k vectors most similar to q.
func bruteTop(vecs [][]float32, q []float32, k int) []int {
	type scored struct {
		i   int
		sim float32
	}
	all := make([]scored, len(vecs))
	for i, v := range vecs {
		all[i] = scored{i, dot(v, q)}
	}
	slices.SortFunc(all, func(a, b scored) int {
		switch {
		case a.sim > b.sim:
			return -1
		case a.sim < b.sim:
			return 1
		}
		return 0
	})
	out := make([]int, 0, k)
	for _, s := range all[:min(k, len(all))] {
		out = append(out, s.i)
	}
	return out
}

// mustNew returns a new Index or fails the test.
func mustNew(t testing.TB, o Options) *Index {
	t.Helper()
	x, err := New(o)
	if err != nil {
		t.Fatalf("New(%+v): %v", o, err)
	}
	return x
}

// mustAdd adds or fails the test.
func mustAdd(t testing.TB, x *Index, scope, id string, v []float32) {
	t.Helper()
	if err := x.Add(scope, id, v); err != nil {
		t.Fatalf("Add(%q, %q): %v", scope, id, err)
	}
}

// ids returns the IDs of hits, in order.
func ids(hits []Hit) []string {
	out := make([]string, len(hits))
	for i, h := range hits {
		out[i] = h.ID
	}
	return out
}

// isGraph reports whether scope is searched through a graph.
func isGraph(x *Index, scope string) bool {
	x.mu.RLock()
	sc := x.scopes[scope]
	x.mu.RUnlock()
	if sc == nil {
		return false
	}
	sc.mu.RLock()
	defer sc.mu.RUnlock()
	return sc.g != nil
}
