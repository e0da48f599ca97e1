package toolcache

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// maxKnownServers bounds the per-server generations a Cache remembers; past
// it the memory is cleared (and reread on use).
const maxKnownServers = 4096

// generations are the flush counters a Cache read, each with the time its
// read began: trusted for GenerationMaxAge.
type generations struct {
	mu     sync.Mutex
	global genValue
	server map[string]genValue
}

type genValue struct {
	v  int64
	at time.Time // when the read that gave v began (zero: never read)
}

func newGenerations() generations { return generations{server: map[string]genValue{}} }

// generation returns the generation string of serverID's entries:
// "<global>.<server>".
func (c *Cache) generation(ctx context.Context, serverID string) (string, error) {
	g, err := c.gen(ctx, globalGenKey, "")
	if err != nil {
		return "", err
	}
	s, err := c.gen(ctx, serverGenPrefix+serverPart(serverID), serverID)
	if err != nil {
		return "", err
	}
	return strconv.FormatInt(g, 10) + "." + strconv.FormatInt(s, 10), nil
}

// gen returns one generation counter: the remembered value when it is
// fresh, else the store's (absent is 0). server "" is the global one.
func (c *Cache) gen(ctx context.Context, key, server string) (int64, error) {
	now := c.o.Now()
	c.gens.mu.Lock()
	cur := c.gens.lookup(key, server)
	c.gens.mu.Unlock()
	if !cur.at.IsZero() && now.Sub(cur.at) < GenerationMaxAge && !now.Before(cur.at) {
		return cur.v, nil
	}
	v, err := c.readGen(ctx, key)
	if err != nil {
		return 0, err
	}
	c.gens.mu.Lock()
	c.gens.remember(key, server, genValue{v: v, at: now})
	c.gens.mu.Unlock()
	return v, nil
}

// readGen reads one generation counter (0 when absent).
func (c *Cache) readGen(ctx context.Context, key string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, c.o.StoreTimeout)
	defer cancel()
	b, err := c.kv.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(b), 10, 64)
}

func (g *generations) lookup(key, server string) genValue {
	if key == globalGenKey {
		return g.global
	}
	return g.server[server]
}

// remember keeps nv unless what is remembered came from a later read or a
// flush (a read that began before a flush finished must not undo it).
func (g *generations) remember(key, server string, nv genValue) {
	if cur := g.lookup(key, server); !cur.at.IsZero() && cur.at.After(nv.at) {
		return
	}
	if key == globalGenKey {
		g.global = nv
		return
	}
	if _, ok := g.server[server]; !ok && len(g.server) >= maxKnownServers {
		clear(g.server)
	}
	g.server[server] = nv
}

// Flush makes every entry unreachable in every replica: this Cache at once,
// the others within GenerationMaxAge. Entries expire by their TTL.
func (c *Cache) Flush(ctx context.Context) error {
	return c.bump(ctx, globalGenKey, "")
}

// FlushServer makes the entries of one server unreachable, as Flush does;
// other servers keep theirs.
func (c *Cache) FlushServer(ctx context.Context, serverID string) error {
	return c.bump(ctx, serverGenPrefix+serverPart(serverID), serverID)
}

func (c *Cache) bump(ctx context.Context, key, server string) error {
	v, err := c.kv.IncrBy(ctx, key, 1, 0)
	if err != nil {
		return err
	}
	c.gens.mu.Lock()
	c.gens.remember(key, server, genValue{v: v, at: c.o.Now()})
	c.gens.mu.Unlock()
	return nil
}
