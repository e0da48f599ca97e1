package mcpgw

import (
	"regexp"
	"sync"
)

// patternCache holds compiled allowed_params patterns, anchored to match a
// whole value. Bounded: past max entries it starts over (patterns come
// from registrations, so the set is small and the reset is rare).
type patternCache struct {
	mu  sync.RWMutex
	m   map[string]*regexp.Regexp
	max int
}

func newPatternCache(max int) *patternCache {
	return &patternCache{m: make(map[string]*regexp.Regexp), max: max}
}

func (c *patternCache) get(pat string) (*regexp.Regexp, error) {
	c.mu.RLock()
	re, ok := c.m[pat]
	c.mu.RUnlock()
	if ok {
		return re, nil
	}
	re, err := regexp.Compile(`^(?:` + pat + `)$`)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if len(c.m) >= c.max {
		c.m = make(map[string]*regexp.Regexp)
	}
	c.m[pat] = re
	c.mu.Unlock()
	return re, nil
}
