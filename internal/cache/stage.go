package cache

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/svc-gateway/svc/internal/cache/verify"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// Routing values recorded for a cache hit.
const (
	RoutingStrategy = "cache"
	reasonPrefix    = "cache_hit:tier="
)

// request is one request's view of the cache.
type request struct {
	key       lookupKey
	ns        string
	scope     string // index scope
	gen       string // "" when the shared tier is unavailable
	ttl       time.Duration
	read      bool
	write     bool
	vec       []float32 // the question's embedding, once computed
	includeUs bool      // the caller asked for usage in the stream
}

// Stage returns the cache middleware for chat completions. It runs after
// auth, decode, planning and limits (a hit counts against the request rate
// but spends nothing) and before the route stage.
func (c *Cache) Stage() pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
			if x.Chat == nil {
				return next(ctx, x)
			}
			d, err := parseDirectives(x.Inbound.Header)
			if err != nil {
				return nil, err
			}
			if t := x.Chat.Temperature; t != nil && *t > c.o.MaxTemperature {
				d.read, d.write = false, false
			}
			if !d.read && !d.write {
				c.stats.skipped.Add(1)
				return next(ctx, x)
			}
			r, err := c.prepare(ctx, x, d)
			if err != nil {
				c.log.Error("cache: could not key a request", "err", err)
				return next(ctx, x)
			}
			if r.read {
				if e, tier, sim := c.lookup(ctx, r); e != nil {
					return c.serveHit(x, r, e, tier, sim)
				}
				c.stats.misses.Add(1)
				if c.o.Metrics != nil {
					c.o.Metrics.CacheMiss()
				}
				x.Header.Set(HeaderCacheHit, "false")
			}
			resp, err := next(ctx, x)
			if err != nil || !r.write || resp == nil || resp.Status != http.StatusOK {
				return resp, err
			}
			switch {
			case resp.Stream != nil:
				a := &assembler{}
				resp.Stream = pipeline.Observe(resp.Stream, a.add, func(err error) {
					if err != nil {
						return // cut short: never stored
					}
					if body := a.body(&x.Usage); body != nil {
						c.storeAsync(ctx, x, r, body)
					}
				})
			case resp.Body != nil && resp.Raw == nil:
				if len(resp.Body) <= MaxEntryBytes {
					c.storeAsync(ctx, x, r, append([]byte(nil), resp.Body...))
				}
			}
			return resp, nil
		}
	}
}

// prepare keys the request.
func (c *Cache) prepare(ctx context.Context, x *pipeline.Exchange, d directives) (*request, error) {
	tenant := "anonymous"
	if p := x.Principal; p != nil {
		tenant = p.Tenant()
	}
	if c.shared[d.namespace] && d.namespace != "" {
		tenant = "*"
	}
	k, err := makeKey(x.Chat, d.namespace, tenant)
	if err != nil {
		return nil, err
	}
	r := &request{key: k, ns: d.namespace, ttl: d.ttl, read: d.read, write: d.write}
	if r.ttl == 0 {
		r.ttl = c.o.TTL
	}
	r.scope = c.indexScope(d.namespace, k.Scope)
	r.gen, _ = c.gen(ctx, d.namespace)
	if so := x.Chat.StreamOptions; so != nil && so.IncludeUsage {
		r.includeUs = true
	}
	return r, nil
}

// lookup runs the phases in order and returns the entry to serve, its tier
// and the similarity of the prompts.
func (c *Cache) lookup(ctx context.Context, r *request) (*Entry, string, float64) {
	now := c.o.Now()
	if e := c.l1.get(r.key.Key, now); e != nil {
		return e, "L1", 1
	}
	if e := c.getShared(ctx, r.gen, r.key.Key, now); e != nil {
		c.l1.put(e)
		return e, "L2", 1
	}
	if r.key.Query == "" {
		return nil, "", 0
	}
	vec, err := c.embedQuery(ctx, r.key.Query)
	if err != nil {
		c.embedFailed("no semantic lookup", err)
		return nil, "", 0
	}
	r.vec = vec
	hits := c.index.Search(r.scope, vec, 4, float32(c.o.Threshold))
	if len(hits) == 0 {
		return nil, "", 0
	}
	q := features(r.key.Query)
	for _, h := range hits {
		if h.ID == r.key.Key {
			continue // the exact entry, already missed: gone from the store
		}
		e := c.l1.get(h.ID, now)
		if e == nil {
			if e = c.getShared(ctx, r.gen, h.ID, now); e == nil {
				if r.gen != "" && !c.kvDown.Load() {
					c.forget(h.ID) // expired or flushed
				}
				continue
			}
		}
		cf := e.Features
		if e.Checks != verify.Version && e.Prompt != "" {
			cf = features(e.Prompt) // extracted by other rules: extract again
		}
		if cf == nil {
			continue
		}
		if ok, reason := verifyAgree(q, cf); !ok {
			c.stats.rejected(reason)
			continue
		}
		c.l1.put(e)
		return e, "L3", float64(h.Similarity)
	}
	return nil, "", 0
}

// getShared reads an entry from the shared tier, or nil.
func (c *Cache) getShared(ctx context.Context, gen, key string, now time.Time) *Entry {
	if gen == "" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.o.StoreTimeout)
	defer cancel()
	b, err := c.kv.Get(ctx, l2Key(gen, key))
	if err != nil {
		c.kvFailed("get", err)
		return nil
	}
	c.kvOK()
	e, err := decodeEntry(b)
	if err != nil {
		c.log.Warn("cache: dropping an entry that does not decode", "key", key, "err", err)
		return nil
	}
	if e.expired(now) {
		return nil
	}
	return e
}

// serveHit answers x from e.
func (c *Cache) serveHit(x *pipeline.Exchange, r *request, e *Entry, tier string, sim float64) (*pipeline.Response, error) {
	c.stats.hit(tier, e.Tokens, e.Cost)
	if c.o.Metrics != nil {
		c.o.Metrics.CacheHit(tier)
	}
	x.Provider, x.UpstreamModel, x.ResponseModel = e.Provider, e.Model, e.Model
	x.RoutingStrategy, x.RoutingReason = RoutingStrategy, reasonPrefix+tier
	x.Usage, x.Cost = llm.Usage{}, 0
	x.FirstByte = time.Now()
	x.Cache = &pipeline.CacheHit{Tier: tier, Key: e.Key, Similarity: sim, Query: e.Prompt, TokensSaved: e.Tokens, CostSaved: e.Cost}
	h := x.Header
	h.Set(HeaderCacheHit, "true")
	h.Set(HeaderCacheKey, e.Key)
	h.Set(HeaderTokensSaved, strconv.FormatInt(e.Tokens, 10))
	if tier == "L3" {
		h.Set(HeaderSimilarity, strconv.FormatFloat(sim, 'f', 4, 64))
	}
	if x.Stream {
		s, err := replayStream(e.Body, r.includeUs)
		if err != nil {
			return nil, err
		}
		return &pipeline.Response{Status: http.StatusOK, Stream: s, Header: http.Header{"Content-Type": {"text/event-stream"}}}, nil
	}
	return &pipeline.Response{Status: http.StatusOK, Body: e.Body, Header: http.Header{"Content-Type": {"application/json"}}}, nil
}

// storeAsync puts an answer in the L1 and stores it in the other tiers off
// the response path.
func (c *Cache) storeAsync(ctx context.Context, x *pipeline.Exchange, r *request, body []byte) {
	if x.DoNotStore != "" {
		c.stats.skipped.Add(1)
		return // compliance or the guard said so
	}
	e := &Entry{
		Key: r.key.Key, Scope: r.scope, Prompt: r.key.Query, Body: body,
		Provider: x.Provider, Model: x.ResponseModel, Tokens: x.Usage.Total(), Cost: x.Cost,
	}
	if e.Model == "" {
		e.Model = x.UpstreamModel
	}
	// The L1 first, at once: the next request to this replica finds it.
	now := c.o.Now()
	e.Created, e.Expires = now, now.Add(r.ttl)
	if r.key.Query != "" {
		e.Features, e.Checks = features(r.key.Query), verify.Version
	}
	c.l1.put(e)
	c.writes.Add(1)
	go func() {
		defer c.writes.Done()
		c.store(context.WithoutCancel(ctx), r, e)
	}()
}

// store writes e, already in the L1, to the index and the shared tier.
func (c *Cache) store(ctx context.Context, r *request, e *Entry) {
	now := e.Created
	z, raw, err := encodeEntry(e)
	if err != nil {
		c.log.Error("cache: could not encode an entry", "err", err)
		return
	}
	c.stats.wrote(len(z), raw)
	vec := r.vec
	if vec == nil && r.key.Query != "" {
		if vec, err = c.embedQuery(ctx, r.key.Query); err != nil {
			c.embedFailed("entries are stored for exact matches only", err)
		}
	}
	if vec != nil {
		if err := c.index.Add(r.scope, e.Key, vec); err != nil {
			c.log.Error("cache: could not index an entry", "err", err)
		}
	}
	c.track(e.Key, liveInfo{scope: r.scope, expires: e.Expires, zsize: len(z), rawSize: raw})
	if r.gen == "" {
		return // the shared tier is unavailable: this replica's L1 and index only
	}
	sctx, cancel := context.WithTimeout(ctx, 10*c.o.StoreTimeout)
	defer cancel()
	if err := c.kv.Set(sctx, l2Key(r.gen, e.Key), z, r.ttl); err != nil {
		c.kvFailed("set", err)
		return
	}
	rec := logRecord{Key: e.Key, Scope: r.scope, NS: r.ns, Gen: r.gen, Exp: e.Expires.UnixMilli(), At: now.UnixMilli(), Z: len(z), Raw: raw}
	if c.local {
		rec.Query = r.key.Query
	} else {
		rec.Vec = vec
	}
	b, err := jsonMarshal(&rec)
	if err != nil {
		return
	}
	if err := c.kv.AppendLog(sctx, entryLog, logLimit(c.o.MaxEntries), b); err != nil {
		c.kvFailed("announce", err)
	}
}
