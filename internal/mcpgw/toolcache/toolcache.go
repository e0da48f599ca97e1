package toolcache

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"log/slog"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/store"
)

// Store is what a Cache needs of svc's KV store: values (entries and the
// generations) and one counter operation (generations and statistics).
// store.KV implements it: memkv in-process, rediskv on Redis.
type Store interface {
	// Get is store.Values.Get: store.ErrNotFound when absent.
	Get(ctx context.Context, key string) ([]byte, error)
	// Set is store.Values.Set.
	Set(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// IncrBy is store.Counters.IncrBy.
	IncrBy(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error)
}

var _ Store = store.KV(nil)

// Defaults of Options.
const (
	DefaultTTL          = 5 * time.Minute
	DefaultMaxBytes     = 1 << 20
	DefaultStoreTimeout = 200 * time.Millisecond
	// GenerationMaxAge is how long a Cache trusts the generations it read:
	// another replica's flush is seen within it.
	GenerationMaxAge = time.Second
	// MaxTTL is the longest an entry is kept (mcpgw.MaxCacheTTL seconds).
	MaxTTL = mcpgw.MaxCacheTTL * time.Second
)

// Options configure a Cache; the zero value is the defaults.
type Options struct {
	// DefaultTTL is the TTL of a Put with none [5 minutes].
	DefaultTTL time.Duration
	// MaxBytes is the largest result JSON stored [1 MiB]; bigger is not cached.
	MaxBytes int
	// StoreTimeout bounds each KV call on the call path [200ms].
	StoreTimeout time.Duration
	Log          *slog.Logger
	// Now is the clock (tests) [time.Now].
	Now func() time.Time
}

// Cache is the tool-call cache over a shared KV store. It is safe for
// concurrent use; two Caches over the same store share their entries,
// generations and statistics.
type Cache struct {
	kv       Store
	o        Options
	gens     generations
	lastWarn atomic.Int64 // unix seconds of the last KV warning
	// pending are the statistics counted here and not yet added to the
	// store's counters (stats.go): counter → *atomic.Int64.
	pending sync.Map
}

// New returns a Cache over kv.
func New(kv Store, o Options) *Cache {
	if o.DefaultTTL <= 0 {
		o.DefaultTTL = DefaultTTL
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = DefaultMaxBytes
	}
	if o.StoreTimeout <= 0 {
		o.StoreTimeout = DefaultStoreTimeout
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Cache{kv: kv, o: o, gens: newGenerations()}
}

// KV keys of the cache.
const (
	entryPrefix     = "mcp:tc:e:"
	globalGenKey    = "mcp:tc:gen"
	serverGenPrefix = "mcp:tc:gen:s:"
	statsPrefix     = "mcp:tc:stats:"
)

// Get returns the stored result of k, or (nil, nil) on a miss, which it
// counts. A store failure or an undecodable entry is a miss, logged.
func (c *Cache) Get(ctx context.Context, k mcpgw.CacheKey) (*mcp.CallToolResult, error) {
	r, _, err := c.GetJSON(ctx, k)
	return r, err
}

// GetJSON is Get that also gives the result's JSON, as json.Marshal writes
// it, when the result is plain text (nil otherwise): mcpgw.JSONCache.
func (c *Cache) GetJSON(ctx context.Context, k mcpgw.CacheKey) (*mcp.CallToolResult, []byte, error) {
	r, enc, err := c.lookup(ctx, k)
	if err != nil {
		c.kvFailed("get", err)
	}
	if r == nil {
		c.count(k.ServerID, "misses", 1)
		return nil, nil, nil
	}
	return r, enc, nil
}

func (c *Cache) lookup(ctx context.Context, k mcpgw.CacheKey) (*mcp.CallToolResult, []byte, error) {
	gen, err := c.generation(ctx, k.ServerID)
	if err != nil {
		return nil, nil, err
	}
	sctx, cancel := context.WithTimeout(ctx, c.o.StoreTimeout)
	defer cancel()
	b, err := c.kv.Get(sctx, entryKey(gen, k))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	e, err := decodeEntry(b, c.o.MaxBytes)
	if err != nil {
		return nil, nil, err
	}
	return e.result()
}

// Put stores r under k for ttl (≤ 0: Options.DefaultTTL; at most MaxTTL).
// enc is r's JSON, exactly what json.Marshal writes for it, when the caller
// holds it (nil: Put encodes r); the entry is the same either way. A nil
// result, one with isError set, or one whose JSON is over Options.MaxBytes
// is not stored, and that is not an error. costUSD, what the call cost, is
// kept with the entry.
func (c *Cache) Put(ctx context.Context, k mcpgw.CacheKey, r *mcp.CallToolResult, enc []byte, ttl time.Duration, costUSD float64) error {
	if r == nil || r.IsError {
		return nil
	}
	if ttl <= 0 {
		ttl = c.o.DefaultTTL
	}
	ttl = min(ttl, MaxTTL)
	b, err := encodeEntry(r, enc, costUSD, c.o.Now(), c.o.MaxBytes)
	if errors.Is(err, errTooLarge) {
		c.o.Log.Debug("toolcache: result not cached: over the size limit", "server", k.ServerID, "tool", k.Tool, "max_bytes", c.o.MaxBytes)
		return nil
	}
	if err != nil {
		return err
	}
	gen, err := c.generation(ctx, k.ServerID)
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, c.o.StoreTimeout)
	defer cancel()
	return c.kv.Set(sctx, entryKey(gen, k), b, ttl)
}

// Hit records a served hit and what it saved (USD, clamped to
// 0..mcpgw.MaxCostPerCall) for the statistics.
func (c *Cache) Hit(ctx context.Context, serverID string, savedUSD float64) {
	c.count(serverID, "hits", 1)
	if micros := microUSD(savedUSD); micros > 0 {
		c.count(serverID, "saved_micro_usd", micros)
	}
}

// count adds n to one of a server's statistics counters, in process: the
// call path makes no store round trip for statistics; FlushStats (every
// second under Run, and before Stats) adds them to the shared counters.
func (c *Cache) count(serverID, name string, n int64) {
	key := counter{serverID, name} // its KV key is made at the flush
	v, ok := c.pending.Load(key)
	if !ok {
		v, _ = c.pending.LoadOrStore(key, new(atomic.Int64))
	}
	v.(*atomic.Int64).Add(n)
}

// microUSD is usd in whole micro-dollars, 0 for a negative or non-finite
// amount, clamped to mcpgw.MaxCostPerCall.
func microUSD(usd float64) int64 {
	if math.IsNaN(usd) || usd <= 0 {
		return 0
	}
	return int64(math.Round(min(usd, mcpgw.MaxCostPerCall) * 1e6))
}

// kvFailed logs a store failure, once a minute at most: a store that is down
// must not log every call.
func (c *Cache) kvFailed(op string, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	now := c.o.Now().Unix()
	last := c.lastWarn.Load()
	if now-last >= 60 && c.lastWarn.CompareAndSwap(last, now) {
		c.o.Log.Warn("toolcache: the KV store failed or held a corrupt entry; calls go upstream", "op", op, "err", err)
	}
}

// entryKey is the KV key of k's entry in generation gen.
func entryKey(gen string, k mcpgw.CacheKey) string {
	h := sha256.New()
	var n [binary.MaxVarintLen64]byte
	for _, part := range [][]byte{[]byte(k.Tenant), []byte(k.ServerID), []byte(k.Version), []byte(k.Tool), k.Arguments} {
		h.Write(n[:binary.PutUvarint(n[:], uint64(len(part)))]) // length-prefixed: parts never run together
		h.Write(part)
	}
	return entryPrefix + gen + ":" + hex.EncodeToString(h.Sum(nil))
}

// serverPart is a server id as it appears in keys: the id itself when it is
// a valid registration id (bounded, no separators that matter), else its
// hash, so no caller-given string makes a key unbounded.
func serverPart(id string) string {
	if len(id) > 0 && len(id) <= mcpgw.MaxIDLen && safeID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "#" + hex.EncodeToString(sum[:16])
}

func safeID(id string) bool {
	for i := 0; i < len(id); i++ {
		b := id[i]
		if !(b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '_' || b == '.' || b == '-') {
			return false
		}
	}
	return true
}

func statsKey(serverID, name string) string {
	return statsPrefix + serverPart(serverID) + ":" + name
}

var (
	_ mcpgw.Cache     = (*Cache)(nil)
	_ mcpgw.JSONCache = (*Cache)(nil)
)
