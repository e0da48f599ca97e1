package oauth

import (
	"sync"
	"time"
)

// tokenTTL bounds how long this process reuses an access token it read
// from the store without reading it again: the gateway asks for the token
// on every request to the upstream server, and each read is an SQL query
// and an AES-GCM open. A revocation or a new authorization made through
// this process drops the token at once; one made through another replica
// is seen within tokenTTL.
const tokenTTL = time.Second

// tokenCache holds, per server, the access token last read from the
// store while it was fresh.
type tokenCache struct {
	mu  sync.Mutex
	m   map[string]cachedToken
	gen uint64 // bumped by every drop: a read begun before one is not kept
}

type cachedToken struct {
	token string
	until time.Time
}

// get returns serverID's token if it is still to be used at now.
func (c *tokenCache) get(serverID string, now time.Time) (string, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[serverID]
	if !ok || !now.Before(e.until) {
		return "", false
	}
	return e.token, true
}

// generation is read before the store is, and given to keep.
func (c *tokenCache) generation() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.gen
}

// keep caches serverID's token until until, unless a drop happened since
// gen was read.
func (c *tokenCache) keep(serverID, token string, until time.Time, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.m == nil {
		c.m = make(map[string]cachedToken)
	}
	c.m[serverID] = cachedToken{token: token, until: until}
}

// drop forgets serverID's token (its record was written or removed).
func (c *tokenCache) drop(serverID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	delete(c.m, serverID)
}

// keepUntil is how long a fresh token read at now may be reused: tokenTTL,
// and never past the time it is due for a refresh.
func (f *Flow) keepUntil(rec Record, now time.Time) time.Time {
	until := now.Add(tokenTTL)
	if !rec.ExpiresAt.IsZero() {
		if due := rec.ExpiresAt.Add(-f.refreshBefore); due.Before(until) {
			until = due
		}
	}
	return until
}
