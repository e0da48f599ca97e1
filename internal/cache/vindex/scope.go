package vindex

import (
	"slices"
	"sync"
	"unsafe"
)

// scope holds the entries of one scope: always a member list, searched
// exactly while it is short, and from Options.ExactBelow members on an HNSW
// graph as well.
type scope struct {
	name string
	opts *Options

	live int // entries in the index with this scope; guarded by Index.mu

	// insMu serialises the scope's inserts and removals (see insert and
	// remove); lock order: insMu before mu.
	insMu sync.Mutex

	mu       sync.RWMutex
	members  []*entry // placed entries; entry.slot is the index
	g        *graph   // nil while the scope is searched exactly
	building bool     // an Add is building the scope's graph outside mu
	epoch    uint64   // advanced by clear, which discards a graph being built
}

// found is a candidate result of a scope search.
type found struct {
	e   *entry
	sim float32
}

func newScope(name string, o *Options) *scope {
	return &scope{name: name, opts: o}
}

// insert places e in the scope unless it died since Add registered it.
// When e brings the scope to ExactBelow members, insert builds the scope's
// graph before returning, outside the scope's lock: searches go on, exactly,
// in the meantime.
//
// Into a graph, insert works in two phases, holding the scope's insert lock
// until it has the write lock, so that inserts run one at a time: under the
// read lock, concurrently with searches, it finds e's candidate neighbours
// (graph.plan, nearly all the cost); then under the write lock it places e
// and links its node to them (graph.link). Removals take the insert lock
// too, so the graph does not change in between.
func (s *scope) insert(e *entry) {
	s.insMu.Lock()
	s.mu.RLock()
	g := s.g
	var level int
	var layers [][]cand
	if g != nil && !e.dead.Load() {
		level = g.drawLevel()
		layers = g.plan(e.vec, level)
	}
	s.mu.RUnlock()

	s.mu.Lock()
	s.insMu.Unlock()
	if e.dead.Load() {
		s.mu.Unlock()
		return // removed, replaced or evicted before it was placed
	}
	e.placed = true
	e.slot = len(s.members)
	s.members = append(s.members, e)
	switch {
	case s.g == nil:
	case s.g == g:
		e.node = int32(g.link(e, level, layers))
	default: // promoted since the plan, or found exact then: insert in one step
		e.node = int32(s.g.insert(e))
	}
	if s.g != nil || s.building || len(s.members) < s.opts.ExactBelow {
		s.mu.Unlock()
		return
	}
	s.building = true
	snap := slices.Clone(s.members)
	epoch := s.epoch
	s.mu.Unlock()
	s.promote(snap, epoch)
}

// promote builds a graph of snap, the scope's members when the promotion
// began, without holding s.mu, then installs it after catching up with the
// members added and removed meanwhile.
func (s *scope) promote(snap []*entry, epoch uint64) {
	g := newGraph(s.opts)
	nodes := make([]uint32, len(snap))
	for i, e := range snap {
		nodes[i] = g.insert(e) // e.vec never changes: safe without s.mu
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.building = false
	if s.epoch != epoch {
		return // cleared meanwhile
	}
	for i, e := range snap {
		if e.placed { // a removed entry is never placed again
			e.node = int32(nodes[i])
		} else {
			g.remove(nodes[i])
		}
	}
	for _, e := range s.members {
		if e.node < 0 { // added while the graph was being built
			e.node = int32(g.insert(e))
		}
	}
	s.g = g
	if len(s.members) < s.opts.ExactBelow/2 {
		s.demote()
	}
}

// remove takes e out of the scope if it was placed. It takes the insert
// lock first, so that it does not wait for the write lock (holding up the
// searches that queue behind it) while an insert searches under the read
// lock.
func (s *scope) remove(e *entry) {
	s.insMu.Lock()
	defer s.insMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !e.placed {
		return
	}
	e.placed = false
	last := len(s.members) - 1
	moved := s.members[last]
	s.members[e.slot] = moved
	moved.slot = e.slot
	s.members[last] = nil
	s.members = s.members[:last]
	e.slot = -1
	if s.g != nil {
		if e.node >= 0 {
			s.g.remove(uint32(e.node))
			e.node = -1
		}
		if len(s.members) < s.opts.ExactBelow/2 {
			s.demote()
		}
	}
	if cap(s.members) > 64 && len(s.members) < cap(s.members)/4 {
		s.members = append(make([]*entry, 0, 2*len(s.members)), s.members...)
	}
}

// clear drops every entry of the scope; their Index bookkeeping is already
// gone.
func (s *scope) clear() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range s.members {
		e.placed = false
		e.slot = -1
		e.node = -1
	}
	s.members = nil
	s.g = nil
	s.epoch++
}

// demote drops the scope's graph. s.mu must be held.
func (s *scope) demote() {
	for _, e := range s.members {
		e.node = -1
	}
	s.g = nil
}

// search returns up to k members with similarity ≥ minSim to the unit
// vector q, most similar first.
func (s *scope) search(q []float32, k int, minSim float32) []found {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []found
	if s.g != nil {
		out = s.g.search(q, k, max(k, s.opts.EfSearch))
	} else {
		out = exact(s.members, q, k, minSim)
	}
	for i, f := range out {
		if f.sim < minSim {
			return out[:i]
		}
	}
	return out
}

// exact is brute-force search: the k members most similar to q with
// similarity ≥ minSim, most similar first.
func exact(members []*entry, q []float32, k int, minSim float32) []found {
	var h minHeap // the best k so far, worst on top
	for _, e := range members {
		sim := dot(e.vec, q)
		if sim < minSim {
			continue
		}
		if len(h) < k {
			h.push(cand{sim: sim, e: e})
		} else if sim > h[0].sim {
			h.replaceTop(cand{sim: sim, e: e})
		}
	}
	out := make([]found, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		c := h.pop()
		out[i] = found{e: c.e, sim: c.sim}
	}
	return out
}

// bytes estimates the memory of the scope's member list and graph.
func (s *scope) bytes() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	n := int64(cap(s.members)) * int64(unsafe.Sizeof((*entry)(nil)))
	if s.g != nil {
		n += s.g.bytes()
	}
	return n
}
