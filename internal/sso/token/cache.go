package token

import (
	"sync"
	"time"
)

// maxVerified bounds the tokens a Signer remembers as verified; past it
// the memory is cleared.
const maxVerified = 16384

// verified remembers tokens whose signature and claims checked out, until
// they expire: a client sends the same token on every request, and parsing
// it again costs ~80 allocations. A remembered token still has its expiry
// checked, and the revocation list is asked every time. The claims are
// shared: callers must not modify them.
type verified struct {
	mu sync.RWMutex
	m  map[string]*Claims
}

func (v *verified) get(raw string, now time.Time) (*Claims, bool) {
	v.mu.RLock()
	c, ok := v.m[raw]
	v.mu.RUnlock()
	if !ok || !now.Before(c.ExpiresAt.Add(leeway)) {
		return nil, false
	}
	return c, true
}

func (v *verified) put(raw string, c *Claims) {
	v.mu.Lock()
	if v.m == nil || len(v.m) >= maxVerified {
		v.m = make(map[string]*Claims)
	}
	v.m[raw] = c
	v.mu.Unlock()
}
