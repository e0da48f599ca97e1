package cache

import (
	"container/list"
	"sync"
	"time"
)

// lru is the L1: an in-process map of entries by key, bounded by bytes, the
// least recently used evicted first. Safe for concurrent use.
type lru struct {
	mu       sync.Mutex
	max      int64
	bytes    int64
	order    *list.List // front: most recently used; values *Entry
	byKey    map[string]*list.Element
	evicted  func(n int) // called with the count of entries evicted for room (under the lock)
	disabled bool
}

func newLRU(maxBytes int64, evicted func(int)) *lru {
	return &lru{max: maxBytes, order: list.New(), byKey: map[string]*list.Element{}, evicted: evicted, disabled: maxBytes <= 0}
}

// get returns the live entry at key and marks it used; expired entries are
// dropped.
func (c *lru) get(key string, now time.Time) *Entry {
	if c.disabled {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.byKey[key]
	if !ok {
		return nil
	}
	e := el.Value.(*Entry)
	if e.expired(now) {
		c.removeElement(el)
		return nil
	}
	c.order.MoveToFront(el)
	return e
}

// put stores e, replacing an entry with the same key, and evicts the least
// recently used entries beyond the bound. An entry larger than the whole
// bound is not kept.
func (c *lru) put(e *Entry) {
	if c.disabled || e.size() > c.max {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[e.Key]; ok {
		c.removeElement(el)
	}
	c.byKey[e.Key] = c.order.PushFront(e)
	c.bytes += e.size()
	n := 0
	for c.bytes > c.max {
		c.removeElement(c.order.Back())
		n++
	}
	if n > 0 && c.evicted != nil {
		c.evicted(n)
	}
}

// remove drops the entry at key, if any.
func (c *lru) remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.byKey[key]; ok {
		c.removeElement(el)
	}
}

// reset drops every entry whose scope starts with prefix ("" = all).
func (c *lru) reset(prefix string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for el := c.order.Front(); el != nil; {
		next := el.Next()
		if e := el.Value.(*Entry); len(e.Scope) >= len(prefix) && e.Scope[:len(prefix)] == prefix {
			c.removeElement(el)
		}
		el = next
	}
}

func (c *lru) removeElement(el *list.Element) {
	e := c.order.Remove(el).(*Entry)
	delete(c.byKey, e.Key)
	c.bytes -= e.size()
}

// stats returns the entry count and bytes held.
func (c *lru) stats() (entries int, bytes int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.byKey), c.bytes
}
