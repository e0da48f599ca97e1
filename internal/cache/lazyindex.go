package cache

import (
	"sync"

	"github.com/svc-gateway/svc/internal/cache/vindex"
)

// lazyIndex is the vector index, made when its dimension is known: at once
// for an embedder that states it, at the first vector for one that does not
// (a provider's model). Before that, searches find nothing.
type lazyIndex struct {
	mu         sync.RWMutex
	x          *vindex.Index
	maxEntries int
	onEvict    func(id string)
}

func (l *lazyIndex) get() *vindex.Index {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.x
}

// ensure makes the index for vectors of dim, once.
func (l *lazyIndex) ensure(dim int) (*vindex.Index, error) {
	if x := l.get(); x != nil {
		return x, nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.x == nil {
		// Exact search costs a dot product per entry: past 512 entries of
		// ~1024 dimensions (0.1 ms) the graph is faster.
		x, err := vindex.New(vindex.Options{Dim: dim, MaxEntries: l.maxEntries, OnEvict: l.onEvict, ExactBelow: 512,
			// The cache looks for near-duplicates (similarity ≥ 0.9): a narrow
			// search finds them (recall@1 1.0 on embedding-like vectors).
			EfSearch: 64, EfConstruction: 64})
		if err != nil {
			return nil, err
		}
		l.x = x
	}
	return l.x, nil
}

// Add indexes vec under id in scope.
func (l *lazyIndex) Add(scope, id string, vec []float32) error {
	x, err := l.ensure(len(vec))
	if err != nil {
		return err
	}
	return x.Add(scope, id, vec)
}

// Search finds the nearest entries of scope (none before the first Add).
func (l *lazyIndex) Search(scope string, vec []float32, k int, minSim float32) []vindex.Hit {
	if x := l.get(); x != nil {
		return x.Search(scope, vec, k, minSim)
	}
	return nil
}

// Remove drops id.
func (l *lazyIndex) Remove(id string) {
	if x := l.get(); x != nil {
		x.Remove(id)
	}
}

// Reset drops the scopes under prefix.
func (l *lazyIndex) Reset(prefix string) {
	if x := l.get(); x != nil {
		x.Reset(prefix)
	}
}

// Len is the number of indexed entries.
func (l *lazyIndex) Len() int {
	if x := l.get(); x != nil {
		return x.Len()
	}
	return 0
}

// Bytes is the index's memory estimate.
func (l *lazyIndex) Bytes() int64 {
	if x := l.get(); x != nil {
		return x.Bytes()
	}
	return 0
}
