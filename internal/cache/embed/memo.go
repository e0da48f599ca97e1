package embed

import (
	"container/list"
	"context"
	"fmt"
	"sync"
)

// Memo wraps e with a least-recently-used memo of text → vector holding at
// most maxEntries texts (at least 1). Concurrent calls that miss on the same
// text compute it once: later callers wait for the first, and compute it
// themselves only if the first fails. Vectors Memo returns are copies the
// caller may keep and modify. Memo has e's name and dimension.
func Memo(e Embedder, maxEntries int) Embedder {
	return &memo{
		e:        e,
		max:      max(maxEntries, 1),
		ll:       list.New(),
		entries:  map[string]*list.Element{},
		inflight: map[string]*memoCall{},
	}
}

type memo struct {
	e   Embedder
	max int

	mu       sync.Mutex
	ll       *list.List // of *memoEntry, most recently used first
	entries  map[string]*list.Element
	inflight map[string]*memoCall
}

type memoEntry struct {
	text string
	vec  []float32
}

// memoCall is one computation of a text's vector that other callers may wait
// for: done closes once vec (nil if it failed) is set.
type memoCall struct {
	done chan struct{}
	vec  []float32
}

func (m *memo) Name() string { return m.e.Name() }
func (m *memo) Dim() int     { return m.e.Dim() }

func (m *memo) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	var (
		own     []int // indexes of texts this call computes
		ownText []string
		waits   = map[int]*memoCall{}
		mine    = map[string]*memoCall{}
	)
	m.mu.Lock()
	for i, t := range texts {
		if el, ok := m.entries[t]; ok {
			m.ll.MoveToFront(el)
			out[i] = clone(el.Value.(*memoEntry).vec)
			continue
		}
		if c, ok := m.inflight[t]; ok {
			waits[i] = c
			continue
		}
		c := &memoCall{done: make(chan struct{})}
		m.inflight[t] = c
		mine[t] = c
		own = append(own, i)
		ownText = append(ownText, t)
	}
	m.mu.Unlock()

	if len(own) > 0 {
		vs, err := m.e.Embed(ctx, ownText)
		if err == nil && len(vs) != len(ownText) {
			err = fmt.Errorf("embed %s: got %d vectors for %d texts", m.e.Name(), len(vs), len(ownText))
		}
		m.mu.Lock()
		for j, i := range own {
			t := texts[i]
			c := mine[t]
			delete(m.inflight, t)
			if err == nil {
				c.vec = vs[j]
				m.add(t, vs[j])
			}
			close(c.done)
		}
		m.mu.Unlock()
		if err != nil {
			return nil, err
		}
		for j, i := range own {
			out[i] = clone(vs[j])
		}
	}

	var retry []int
	for i, c := range waits {
		select {
		case <-c.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if c.vec == nil {
			retry = append(retry, i)
			continue
		}
		out[i] = clone(c.vec)
	}
	if len(retry) > 0 {
		rt := make([]string, len(retry))
		for j, i := range retry {
			rt[j] = texts[i]
		}
		vs, err := m.e.Embed(ctx, rt)
		if err == nil && len(vs) != len(rt) {
			err = fmt.Errorf("embed %s: got %d vectors for %d texts", m.e.Name(), len(vs), len(rt))
		}
		if err != nil {
			return nil, err
		}
		m.mu.Lock()
		for j, i := range retry {
			m.add(texts[i], vs[j])
			out[i] = clone(vs[j])
		}
		m.mu.Unlock()
	}
	return out, nil
}

// add records text's vector as the most recently used, evicting the least
// recently used entries beyond the bound. m.mu must be held.
func (m *memo) add(text string, vec []float32) {
	if el, ok := m.entries[text]; ok {
		el.Value.(*memoEntry).vec = vec
		m.ll.MoveToFront(el)
		return
	}
	m.entries[text] = m.ll.PushFront(&memoEntry{text: text, vec: vec})
	for m.ll.Len() > m.max {
		el := m.ll.Back()
		m.ll.Remove(el)
		delete(m.entries, el.Value.(*memoEntry).text)
	}
}

func clone(v []float32) []float32 { return append([]float32(nil), v...) }

var _ Embedder = (*memo)(nil)
