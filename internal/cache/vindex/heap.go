package vindex

import "github.com/viterin/vek/vek32"

// dot is the dot product of two vectors of equal, non-zero length: their
// cosine similarity when both are unit length. vek32 uses AVX2 and FMA when
// the CPU has them.
func dot(a, b []float32) float32 {
	return vek32.Dot(a, b)
}

// cand is a search candidate: a graph node (id) or an entry (e) with its
// similarity to the query.
type cand struct {
	sim float32
	id  uint32
	e   *entry
}

// minHeap is a binary heap of candidates, least similar on top.
type minHeap []cand

func (h *minHeap) push(c cand) {
	*h = append(*h, c)
	a := *h
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].sim <= a[i].sim {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *minHeap) pop() cand {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	*h = a[:last]
	h.down()
	return top
}

// replaceTop replaces the least similar candidate with c.
func (h *minHeap) replaceTop(c cand) {
	(*h)[0] = c
	h.down()
}

func (h *minHeap) down() {
	a := *h
	i := 0
	for {
		l := 2*i + 1
		if l >= len(a) {
			return
		}
		m := l
		if r := l + 1; r < len(a) && a[r].sim < a[l].sim {
			m = r
		}
		if a[i].sim <= a[m].sim {
			return
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
}

// maxHeap is a binary heap of candidates, most similar on top.
type maxHeap []cand

func (h *maxHeap) push(c cand) {
	*h = append(*h, c)
	a := *h
	i := len(a) - 1
	for i > 0 {
		p := (i - 1) / 2
		if a[p].sim >= a[i].sim {
			break
		}
		a[p], a[i] = a[i], a[p]
		i = p
	}
}

func (h *maxHeap) pop() cand {
	a := *h
	top := a[0]
	last := len(a) - 1
	a[0] = a[last]
	a = a[:last]
	*h = a
	i := 0
	for {
		l := 2*i + 1
		if l >= len(a) {
			break
		}
		m := l
		if r := l + 1; r < len(a) && a[r].sim > a[l].sim {
			m = r
		}
		if a[i].sim >= a[m].sim {
			break
		}
		a[i], a[m] = a[m], a[i]
		i = m
	}
	return top
}
