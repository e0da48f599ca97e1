package vindex

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"unsafe"
)

// maxLevel caps a node's top layer; with M ≥ 2 the chance of reaching it is
// below 2⁻¹⁵.
const maxLevel = 15

// graph is an HNSW graph over similarity (dot product of unit vectors).
// Nodes are numbered densely; a removed node's slot is freed and reused.
//
// Removal is real: the node's reciprocal neighbours drop their link to it
// and each takes, in its place, the removed node's neighbour most similar
// to itself. Links that pointed one-way at the removed node stay behind;
// searches skip them while the slot is free, and once the slot is reused
// they lead to an unrelated but valid node, costing a little quality, not
// correctness.
//
// The scope guards a graph with its lock. search and plan (the search phase
// of an insert) only read the graph and may run concurrently with each
// other under the read lock; link (the write phase of an insert) and remove
// need the write lock. Nothing may change the graph between an insert's
// plan and its link: the scope's insert lock, which inserts hold from plan
// to link and removals take too, sees to that.
type graph struct {
	m, m0 int // neighbours per node on upper layers, on layer 0
	efc   int
	ml    float64

	nodes []gnode
	free  []uint32
	entry int32 // entry point, -1 when empty
	top   int   // entry point's layer
	live  int

	rng    *rand.Rand // layer draws; used by the serialised inserts only
	visits sync.Pool  // *visitSet
}

// gnode is one graph node: the entry's vector (shared, not copied) and its
// neighbour lists, one per layer from 0 to its top layer. A free slot has a
// nil vec.
type gnode struct {
	vec   []float32
	owner *entry
	links [][]uint32
}

// visitSet marks the nodes a search has visited; a new epoch clears it.
type visitSet struct {
	marks []uint32
	epoch uint32
}

func newGraph(o *Options) *graph {
	return &graph{
		m:     o.M,
		m0:    2 * o.M,
		efc:   max(o.EfConstruction, o.M),
		ml:    1 / math.Log(float64(o.M)),
		entry: -1,
		rng:   rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
	}
}

// visitor returns a cleared visit set for the graph's current size; give it
// back with g.visits.Put.
func (g *graph) visitor() *visitSet {
	v, _ := g.visits.Get().(*visitSet)
	if v == nil {
		v = &visitSet{}
	}
	if len(v.marks) < len(g.nodes) {
		v.marks = make([]uint32, len(g.nodes)+len(g.nodes)/4)
		v.epoch = 0
	}
	v.epoch++
	if v.epoch == 0 {
		clear(v.marks)
		v.epoch = 1
	}
	return v
}

// visit marks id and reports whether it was marked already.
func (v *visitSet) visit(id uint32) bool {
	if v.marks[id] == v.epoch {
		return true
	}
	v.marks[id] = v.epoch
	return false
}

// on reports whether node id is live and present on layer l.
func (g *graph) on(id uint32, l int) bool {
	n := &g.nodes[id]
	return n.vec != nil && len(n.links) > l
}

// greedy walks layer l from ep towards q and returns the local best.
func (g *graph) greedy(q []float32, ep cand, l int) cand {
	for changed := true; changed; {
		changed = false
		for _, nb := range g.nodes[ep.id].links[l] {
			if !g.on(nb, l) {
				continue
			}
			if s := dot(q, g.nodes[nb].vec); s > ep.sim {
				ep = cand{sim: s, id: nb}
				changed = true
			}
		}
	}
	return ep
}

// searchLayer is the beam search of layer l from ep: the ef nodes most
// similar to q it finds, unordered.
func (g *graph) searchLayer(q []float32, ep cand, ef, l int, vs *visitSet) minHeap {
	cands := make(maxHeap, 0, 2*ef)
	res := make(minHeap, 0, ef+1)
	vs.visit(ep.id)
	cands.push(ep)
	res.push(ep)
	for len(cands) > 0 {
		c := cands.pop()
		if len(res) >= ef && c.sim < res[0].sim {
			break
		}
		for _, nb := range g.nodes[c.id].links[l] {
			if vs.visit(nb) || !g.on(nb, l) {
				continue
			}
			s := dot(q, g.nodes[nb].vec)
			switch {
			case len(res) < ef:
				res.push(cand{sim: s, id: nb})
			case s > res[0].sim:
				res.replaceTop(cand{sim: s, id: nb})
			default:
				continue
			}
			cands.push(cand{sim: s, id: nb})
		}
	}
	return res
}

// bestFirst sorts candidates by descending similarity.
func bestFirst(cs []cand) {
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Compare(b.sim, a.sim) })
}

// search returns up to k nodes most similar to the unit vector q, most
// similar first, searching layer 0 with beam width ef ≥ k.
func (g *graph) search(q []float32, k, ef int) []found {
	if g.entry < 0 {
		return nil
	}
	ep := cand{id: uint32(g.entry), sim: dot(q, g.nodes[g.entry].vec)}
	for l := g.top; l > 0; l-- {
		ep = g.greedy(q, ep, l)
	}
	vs := g.visitor()
	res := g.searchLayer(q, ep, ef, 0, vs)
	g.visits.Put(vs)
	bestFirst(res)
	out := make([]found, 0, min(k, len(res)))
	for _, c := range res[:min(k, len(res))] {
		out = append(out, found{e: g.nodes[c.id].owner, sim: c.sim})
	}
	return out
}

// insert adds e (whose vec the graph then shares) and returns its node, in
// one step: plan then link. The caller records the node in e.node.
func (g *graph) insert(e *entry) uint32 {
	level := g.drawLevel()
	return g.link(e, level, g.plan(e.vec, level))
}

// drawLevel draws the top layer of a node about to be inserted. It uses
// g.rng, which only the (serialised) inserts into a graph touch.
func (g *graph) drawLevel() int {
	return min(int(-math.Log(1-g.rng.Float64())*g.ml), maxLevel)
}

// plan is the search phase of inserting the unit vector q as a node of top
// layer level: for each layer from min(level, g.top) down to 0, the
// EfConstruction nodes most similar to q, best first. It returns nil for an
// empty graph. plan only reads the graph: it
// may run concurrently with searches and other plans, not with link or
// remove.
func (g *graph) plan(q []float32, level int) [][]cand {
	if g.entry < 0 {
		return nil
	}
	ep := cand{id: uint32(g.entry), sim: dot(q, g.nodes[g.entry].vec)}
	for l := g.top; l > level; l-- {
		ep = g.greedy(q, ep, l)
	}
	layers := make([][]cand, min(level, g.top)+1)
	for l := len(layers) - 1; l >= 0; l-- {
		vs := g.visitor()
		res := g.searchLayer(q, ep, g.efc, l, vs)
		g.visits.Put(vs)
		bestFirst(res)
		layers[l] = res
		ep = res[0]
	}
	return layers
}

// link is the write phase of inserting e, whose top layer is level: it
// takes a node for e and links it to the neighbours plan found on this
// graph, unchanged since. It returns e's node.
func (g *graph) link(e *entry, level int, layers [][]cand) uint32 {
	var id uint32
	if n := len(g.free); n > 0 {
		id = g.free[n-1]
		g.free = g.free[:n-1]
	} else {
		id = uint32(len(g.nodes))
		g.nodes = append(g.nodes, gnode{})
	}
	n := &g.nodes[id]
	n.vec, n.owner = e.vec, e
	n.links = make([][]uint32, level+1)
	for l := range n.links {
		n.links[l] = make([]uint32, 0, g.maxLinks(l))
	}
	g.live++
	if g.entry < 0 {
		g.entry, g.top = int32(id), level
		return id
	}
	for l := min(level, g.top, len(layers)-1); l >= 0; l-- {
		for _, c := range g.selectNeighbors(layers[l], g.m) {
			n.links[l] = append(n.links[l], c.id)
			g.connect(c.id, id, l)
		}
	}
	if level > g.top {
		g.entry, g.top = int32(id), level
	}
	return id
}

// maxLinks is the most neighbours a node keeps on layer l.
func (g *graph) maxLinks(l int) int {
	if l == 0 {
		return g.m0
	}
	return g.m
}

// selectNeighbors is HNSW's neighbour-selection heuristic: from candidates
// sorted best first (similarity to the base node), keep up to m, skipping a
// candidate more similar to an already kept one than to the base node.
func (g *graph) selectNeighbors(cs []cand, m int) []cand {
	out := make([]cand, 0, m)
	for _, c := range cs {
		if len(out) == m {
			break
		}
		cv := g.nodes[c.id].vec
		keep := true
		for _, o := range out {
			if dot(cv, g.nodes[o.id].vec) > c.sim {
				keep = false
				break
			}
		}
		if keep {
			out = append(out, c)
		}
	}
	return out
}

// connect adds a link from node from to node to on layer l, re-selecting
// from's neighbours by the heuristic when it has too many.
func (g *graph) connect(from, to uint32, l int) {
	n := &g.nodes[from]
	lk := n.links[l]
	if slices.Contains(lk, to) {
		return
	}
	limit := g.maxLinks(l)
	if len(lk) < limit {
		n.links[l] = append(lk, to)
		return
	}
	cs := make([]cand, 0, len(lk)+1)
	for _, o := range append(lk[:len(lk):len(lk)], to) {
		if o == from || !g.on(o, l) || slices.ContainsFunc(cs, func(c cand) bool { return c.id == o }) {
			continue
		}
		cs = append(cs, cand{sim: dot(n.vec, g.nodes[o].vec), id: o})
	}
	bestFirst(cs)
	lk = lk[:0]
	for _, c := range g.selectNeighbors(cs, limit) {
		lk = append(lk, c.id)
	}
	n.links[l] = lk
}

// remove takes node id out of the graph and frees its slot.
func (g *graph) remove(id uint32) {
	n := &g.nodes[id]
	for l, lk := range n.links {
		for _, nb := range lk {
			if nb == id || !g.on(nb, l) {
				continue
			}
			m := &g.nodes[nb]
			i := slices.Index(m.links[l], id)
			if i < 0 {
				continue // a one-way link: nothing points back
			}
			m.links[l] = slices.Delete(m.links[l], i, i+1)
			g.patch(nb, id, lk, l)
		}
	}
	n.vec, n.owner, n.links = nil, nil, nil
	g.free = append(g.free, id)
	g.live--
	if g.live == 0 {
		g.nodes, g.free, g.entry, g.top = nil, nil, -1, 0
		return
	}
	if g.entry == int32(id) {
		g.entry, g.top = -1, -1
		for i := range g.nodes {
			if g.nodes[i].vec != nil && len(g.nodes[i].links)-1 > g.top {
				g.entry, g.top = int32(i), len(g.nodes[i].links)-1
			}
		}
	}
}

// patch gives node nb, which lost its link to the removed node gone on layer
// l, the one of gone's neighbours (lost) most similar to it that it does not
// already link to.
func (g *graph) patch(nb, gone uint32, lost []uint32, l int) {
	m := &g.nodes[nb]
	best, bestSim := uint32(0), float32(math.Inf(-1))
	for _, c := range lost {
		if c == nb || c == gone || !g.on(c, l) || slices.Contains(m.links[l], c) {
			continue
		}
		if s := dot(m.vec, g.nodes[c].vec); s > bestSim {
			best, bestSim = c, s
		}
	}
	if bestSim > float32(math.Inf(-1)) {
		m.links[l] = append(m.links[l], best)
	}
}

// bytes estimates the graph's memory: node records, neighbour lists, the
// free list and one pooled visit set.
func (g *graph) bytes() int64 {
	n := int64(cap(g.nodes))*int64(unsafe.Sizeof(gnode{})) + int64(cap(g.free))*4 + int64(len(g.nodes))*4
	for i := range g.nodes {
		n += int64(cap(g.nodes[i].links)) * int64(unsafe.Sizeof([]uint32(nil)))
		for _, lk := range g.nodes[i].links {
			n += int64(cap(lk)) * 4
		}
	}
	return n
}
