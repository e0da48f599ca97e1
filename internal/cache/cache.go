// Package cache is the semantic cache of chat completions: a stage of the
// proxy's request path that answers a request from an earlier answer before
// any provider is called, in four phases —
//
//  1. L1: the request's canonical key in an in-process LRU bounded by bytes;
//  2. L2: the same key in the shared KV store (entries zstd-compressed), so
//     replicas share hits;
//  3. L3: the nearest neighbours of the question's embedding among the
//     entries of the same scope (namespace, caller or team, model,
//     conversation so far, tools, sampling parameters) at cosine
//     similarity ≥ the threshold;
//  4. verification of an L3 candidate (numbers, negations, quoted strings,
//     named entities, language must agree) before it is served.
//
// Every replica keeps an in-process vector index that follows the shared
// store: new entries are announced on a KV log, read back at start and
// polled after, so an entry written by one replica is found by all. When the
// KV store fails, the cache degrades to L1 (and to L3 over what its index
// already holds) and requests never fail because of it.
//
// The logic is plain functions on plain values, for every gateway:
// Cache.Lookup prepares one Request (the chat request, the caller's cache
// directives, its sharing scope), Lookup.Hit runs the phases, Lookup.Store
// keeps the Answer the request got upstream (a Collector assembles a
// streamed one). Cache.Stage is the proxy's thin pipeline wrapper of them;
// other gateways (MCP tool calls, A2A) call the same core with their own
// exchange shapes.
//
// Sub-packages: embed (embedders), vindex (the vector index), verify (the
// checks of phase 4), quality (the quality benchmark).
package cache

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/cache/embed"
	"github.com/svc-gateway/svc/internal/cache/verify"
	"github.com/svc-gateway/svc/internal/store"
)

// Options configure a Cache. Zero values take the defaults in brackets.
type Options struct {
	// Threshold is the minimum cosine similarity of an L3 candidate [0.90].
	Threshold float64
	// TTL is an entry's default time-to-live [24h].
	TTL time.Duration
	// MaxTemperature: requests with a higher temperature are neither served
	// from the cache nor stored [0.7]. A request without a temperature is
	// cacheable.
	MaxTemperature float64
	// L1Bytes bounds the in-process L1 [64 MiB]; negative disables it.
	L1Bytes int64
	// MaxEntries bounds the entries the vector index follows [50,000].
	MaxEntries int
	// Sharing says who shares answers: ShareCaller, each caller its own
	// [the default], or ShareTeam, the callers of one team.
	Sharing string
	// SharedNamespaces are namespaces whose entries every caller shares,
	// whatever Sharing says.
	SharedNamespaces []string
	// Embedder embeds questions for L3 [the built-in lexical embedder].
	Embedder embed.Embedder
	// FollowInterval is how often the shared entry log is polled [500ms].
	FollowInterval time.Duration
	// StoreTimeout bounds each KV call on the request path [100ms].
	StoreTimeout time.Duration
	// Metrics, when set, counts hits by tier and misses.
	Metrics Counters
	Log     *slog.Logger
	// Now is the clock (tests) [time.Now].
	Now func() time.Time
}

// Counters receive hit and miss counts (metrics.Metrics implements it).
type Counters interface {
	CacheHit(tier string)
	CacheMiss()
}

// Cache is the semantic cache of one process.
type Cache struct {
	o      Options
	kv     Store
	l1     *lru
	index  *lazyIndex
	emb    embed.Embedder
	shared map[string]bool
	log    *slog.Logger
	stats  *stats

	// local: the embedder is computed in-process, so the entry log carries
	// questions, not vectors (replicas recompute them).
	local bool

	mu    sync.Mutex
	live  map[string]liveInfo // entries the index follows, by key
	order []string            // keys in the order they were followed (FIFO bound)
	gens  generations

	writes    sync.WaitGroup
	kvDown    atomic.Bool
	lastWarn  atomic.Int64
	lastEmbed atomic.Int64 // when an embedding failure was last logged (unix s)
}

// liveInfo is what the cache knows of an entry it follows.
type liveInfo struct {
	scope   string
	expires time.Time
	zsize   int
	rawSize int
}

// New builds a cache over kv, the store shared by the replicas. Run must
// run for the index to follow the entries other replicas write.
func New(kv Store, o Options) (*Cache, error) {
	if o.Threshold <= 0 {
		o.Threshold = 0.90
	}
	if o.Threshold > 1 {
		return nil, errors.New("cache: threshold must be at most 1")
	}
	sharing, err := checkSharing(o.Sharing)
	if err != nil {
		return nil, err
	}
	o.Sharing = sharing
	if o.TTL <= 0 {
		o.TTL = 24 * time.Hour
	}
	if o.MaxTemperature == 0 {
		o.MaxTemperature = 0.7
	}
	if o.L1Bytes == 0 {
		o.L1Bytes = 64 << 20
	}
	if o.MaxEntries <= 0 {
		o.MaxEntries = 50_000
	}
	if o.FollowInterval <= 0 {
		o.FollowInterval = 500 * time.Millisecond
	}
	if o.StoreTimeout <= 0 {
		o.StoreTimeout = 100 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	c := &Cache{o: o, kv: kv, log: o.Log, shared: map[string]bool{}, live: map[string]liveInfo{}, stats: newStats()}
	if o.Embedder == nil {
		o.Embedder = embed.NewLocal()
		c.o.Embedder = o.Embedder
		c.local = true
	}
	if _, ok := o.Embedder.(*embed.Local); ok {
		c.local = true
	}
	c.emb = o.Embedder
	for _, ns := range o.SharedNamespaces {
		c.shared[ns] = true
	}
	c.l1 = newLRU(o.L1Bytes, func(n int) { c.stats.evictions.Add(int64(n)) })
	// The index holds what the live set tracks; its own bound is a backstop.
	c.index = &lazyIndex{maxEntries: o.MaxEntries + o.MaxEntries/10 + 16, onEvict: func(string) { c.stats.evictions.Add(1) }}
	if d := c.emb.Dim(); d > 0 {
		if _, err := c.index.ensure(d); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Wait blocks until the cache writes started so far are done (tests,
// shutdown).
func (c *Cache) Wait() { c.writes.Wait() }

// kvFailed notes a KV failure: the first one, and then one a minute, is
// logged; requests go on without the shared tier.
func (c *Cache) kvFailed(op string, err error) {
	if errors.Is(err, store.ErrNotFound) || errors.Is(err, context.Canceled) {
		return
	}
	c.kvDown.Store(true)
	now := c.o.Now().Unix()
	last := c.lastWarn.Load()
	if now-last >= 60 && c.lastWarn.CompareAndSwap(last, now) {
		c.log.Warn("cache: the shared store failed; serving from the in-process tier until it answers", "op", op, "err", err)
	}
}

// embedFailed logs an embedder failure, once a minute at most: a provider
// embedder that is down must not log every request.
func (c *Cache) embedFailed(what string, err error) {
	now := c.o.Now().Unix()
	last := c.lastEmbed.Load()
	if now-last >= 60 && c.lastEmbed.CompareAndSwap(last, now) {
		c.log.Warn("cache: the embedder failed; "+what, "embedder", c.emb.Name(), "err", err)
	}
}

// kvOK notes that the KV store answered again.
func (c *Cache) kvOK() {
	if c.kvDown.Load() && c.kvDown.CompareAndSwap(true, false) {
		c.log.Info("cache: the shared store answers again")
	}
}

// indexScope is the index scope of a request: its namespace first, so that
// a namespace's entries can be dropped by prefix, then the embedder (vectors
// of different embedders are never compared), then the request scope.
func (c *Cache) indexScope(ns, scope string) string {
	return nsPrefix(ns) + c.emb.Name() + "|" + scope
}

// nsPrefix is the scope prefix of namespace ns ("" is the default namespace).
func nsPrefix(ns string) string { return ns + "|" }

// embedQuery embeds one question.
func (c *Cache) embedQuery(ctx context.Context, q string) ([]float32, error) {
	vs, err := c.emb.Embed(ctx, []string{q})
	if err != nil {
		return nil, err
	}
	if len(vs) != 1 || len(vs[0]) == 0 || (c.emb.Dim() > 0 && len(vs[0]) != c.emb.Dim()) {
		return nil, errors.New("cache: the embedder returned no vector")
	}
	return vs[0], nil
}

// features extracts the verification features of a question.
func features(q string) *verify.Features {
	f := verify.Extract(q)
	return &f
}
