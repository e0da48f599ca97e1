package cache

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/svc-gateway/svc/internal/cache/fresh"
	"github.com/svc-gateway/svc/internal/cache/verify"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
)

// Request is one request as the cache sees it, whichever gateway received
// it: the chat request, the caller's cache directives and who may share
// its answer.
type Request struct {
	// Chat is the decoded request; its last message is the question.
	Chat *llm.ChatRequest
	// Header holds the caller's cache directives (Cache-Control,
	// x-svc-cache, x-svc-no-cache, x-svc-cache-ttl, x-svc-cache-namespace);
	// nil has none.
	Header http.Header
	// Scope names who may share answers: requests of one scope (and one
	// namespace) share entries, other scopes never see them. ScopeOf gives
	// it for a principal; a namespace in Options.SharedNamespaces is shared
	// by every scope.
	Scope string
}

// Skip reasons: why a request neither reads nor writes the cache. They are
// counted in Stats.SkippedBy.
const (
	SkipHeader      = "header"       // the caller's directives turned both off
	SkipTemperature = "temperature"  // temperature above Options.MaxTemperature
	SkipFresh       = "fresh"        // the question needs a fresh answer (package fresh)
	SkipDoNotStore  = "do_not_store" // a later stage kept the answer out (Answer.DoNotStore)
)

// Lookup is one request's pass through the cache: Hit reads it, Store
// writes the answer the request got upstream. Its methods are safe to call
// from the goroutine that owns the request; Store may be called from
// another once Hit has returned.
type Lookup struct {
	c            *Cache
	key          lookupKey
	ns           string
	scope        string // index scope
	gen          string // "" when the shared tier is unavailable
	ttl          time.Duration
	read, write  bool
	skip         string
	vec          []float32 // the question's embedding, once computed
	includeUsage bool      // the caller asked for usage in the stream
}

// Lookup prepares r's pass through the cache. Its error is the caller's
// mistake (a malformed cache directive, apierr.InvalidRequest); a request
// the cache cannot serve or keep for its own reasons gets a Lookup that
// neither reads nor writes.
func (c *Cache) Lookup(ctx context.Context, r Request) (*Lookup, error) {
	if r.Chat == nil {
		return nil, errors.New("cache: a lookup needs a chat request")
	}
	d, err := parseDirectives(r.Header)
	if err != nil {
		return nil, err
	}
	l := &Lookup{c: c, ns: d.namespace, ttl: d.ttl, read: d.read, write: d.write}
	switch {
	case !d.read && !d.write:
		return l.skipped(SkipHeader), nil
	case r.Chat.Temperature != nil && *r.Chat.Temperature > c.o.MaxTemperature:
		return l.skipped(SkipTemperature), nil
	case needsFresh(r.Chat):
		return l.skipped(SkipFresh), nil
	}
	scope := r.Scope
	if scope == "" {
		scope = anonymousScope
	}
	if d.namespace != "" && c.shared[d.namespace] {
		scope = "*"
	}
	if l.key, err = makeKey(r.Chat, d.namespace, scope); err != nil {
		c.log.Error("cache: could not key a request", "err", err)
		l.read, l.write = false, false
		return l, nil
	}
	if l.ttl == 0 {
		l.ttl = c.o.TTL
	}
	l.scope = c.indexScope(d.namespace, l.key.Scope)
	l.gen, _ = c.gen(ctx, d.namespace)
	if so := r.Chat.StreamOptions; so != nil && so.IncludeUsage {
		l.includeUsage = true
	}
	return l, nil
}

// needsFresh reports whether the question, the last message when it is a
// user's text, asks for an answer that must be fresh (package fresh).
func needsFresh(req *llm.ChatRequest) bool {
	if len(req.Messages) == 0 {
		return false
	}
	return fresh.Check(queryText(&req.Messages[len(req.Messages)-1])) != fresh.None
}

// skipped marks l as neither reading nor writing, for reason.
func (l *Lookup) skipped(reason string) *Lookup {
	l.read, l.write, l.skip = false, false, reason
	l.c.stats.skip(reason)
	return l
}

// Skipped is why the request neither reads nor writes the cache (a Skip
// constant), or "".
func (l *Lookup) Skipped() string { return l.skip }

// Reads reports whether Hit may answer the request.
func (l *Lookup) Reads() bool { return l.read }

// Writes reports whether Store keeps the request's answer.
func (l *Lookup) Writes() bool { return l.write }

// Hit is a cached answer found for a request.
type Hit struct {
	Tier       string  // L1, L2 or L3
	Key        string  // the entry's key (x-svc-cache-key)
	Similarity float64 // cosine similarity of the questions: 1 on the exact tiers
	Query      string  // the cached question that matched
	// Body is the answer, a chat.completion JSON object. It is shared with
	// the cache: never change it.
	Body     []byte
	Provider string  // provider and model that made the answer
	Model    string  //
	Tokens   int64   // the tokens the answer cost when it was made
	Cost     float64 // and its cost, USD

	includeUsage bool
}

// Hit looks the request up: L1, L2, then L3 and the verification of its
// candidates. It counts the hit or the miss; a request that does not read
// the cache is neither.
func (l *Lookup) Hit(ctx context.Context) (*Hit, bool) {
	if !l.read {
		return nil, false
	}
	c := l.c
	e, tier, sim := l.find(ctx)
	if e == nil {
		c.stats.misses.Add(1)
		if c.o.Metrics != nil {
			c.o.Metrics.CacheMiss()
		}
		return nil, false
	}
	c.stats.hit(tier, e.Tokens, e.Cost)
	if c.o.Metrics != nil {
		c.o.Metrics.CacheHit(tier)
	}
	return &Hit{Tier: tier, Key: e.Key, Similarity: sim, Query: e.Prompt, Body: e.Body,
		Provider: e.Provider, Model: e.Model, Tokens: e.Tokens, Cost: e.Cost, includeUsage: l.includeUsage}, true
}

// Stream returns the answer as the chunks a provider would have streamed,
// with the usage chunk when the request asked for it.
func (h *Hit) Stream() (llm.Stream, error) { return replayStream(h.Body, h.includeUsage) }

// SetHeaders sets the response headers of a hit on dst: x-svc-cache-hit,
// x-svc-cache-key, x-tokens-saved and, for L3, x-cache-similarity.
func (h *Hit) SetHeaders(dst http.Header) {
	dst.Set(HeaderCacheHit, "true")
	dst.Set(HeaderCacheKey, h.Key)
	dst.Set(HeaderTokensSaved, strconv.FormatInt(h.Tokens, 10))
	if h.Tier == "L3" {
		dst.Set(HeaderSimilarity, strconv.FormatFloat(h.Similarity, 'f', 4, 64))
	}
}

// find runs the tiers in order and returns the entry to serve, its tier
// and the similarity of the questions.
func (l *Lookup) find(ctx context.Context) (*Entry, string, float64) {
	c := l.c
	now := c.o.Now()
	if e := c.l1.get(l.key.Key, now); e != nil {
		return e, "L1", 1
	}
	if e := c.getShared(ctx, l.gen, l.key.Key, now); e != nil {
		c.l1.put(e)
		return e, "L2", 1
	}
	if l.key.Query == "" {
		return nil, "", 0
	}
	vec, err := c.embedQuery(ctx, l.key.Query)
	if err != nil {
		c.embedFailed("no semantic lookup", err)
		return nil, "", 0
	}
	l.vec = vec
	hits := c.index.Search(l.scope, vec, 4, float32(c.o.Threshold))
	if len(hits) == 0 {
		return nil, "", 0
	}
	q := features(l.key.Query)
	for _, h := range hits {
		if h.ID == l.key.Key {
			continue // the exact entry, already missed: gone from the store
		}
		e := c.candidate(ctx, l.gen, h.ID, now)
		if e == nil {
			continue
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

// candidate reads the entry an index hit points to, from the L1 or the
// shared tier; an entry gone from both is forgotten.
func (c *Cache) candidate(ctx context.Context, gen, key string, now time.Time) *Entry {
	if e := c.l1.get(key, now); e != nil {
		return e
	}
	e := c.getShared(ctx, gen, key, now)
	if e == nil && gen != "" && !c.kvDown.Load() {
		c.forget(key) // expired or flushed
	}
	return e
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

// Answer is the answer a request got upstream, to be stored.
type Answer struct {
	// Body is the answer, a chat.completion JSON object (Collector.Body
	// assembles one from a stream). Store copies it.
	Body     []byte
	Provider string // the provider and model that made it
	Model    string
	Tokens   int64   // the tokens it cost
	Cost     float64 // and its cost, USD
	// DoNotStore, when set, is why a later stage wants the answer kept out
	// of the cache ("pii", "blocked"): Store then only counts the skip.
	DoNotStore string
}

// Store keeps a's answer for the request: in the L1 at once (the next
// request to this process hits), then, off the caller's path, in the
// vector index and the shared tier. It does nothing when the request does
// not write the cache, and keeps no answer over MaxEntryBytes.
func (l *Lookup) Store(ctx context.Context, a Answer) {
	c := l.c
	switch {
	case !l.write:
		return
	case a.DoNotStore != "":
		c.stats.skip(SkipDoNotStore)
		return
	case len(a.Body) == 0 || len(a.Body) > MaxEntryBytes:
		return
	}
	e := &Entry{
		Key: l.key.Key, Scope: l.scope, Prompt: l.key.Query, Body: append([]byte(nil), a.Body...),
		Provider: a.Provider, Model: a.Model, Tokens: a.Tokens, Cost: a.Cost,
	}
	now := c.o.Now()
	e.Created, e.Expires = now, now.Add(l.ttl)
	if l.key.Query != "" {
		e.Features, e.Checks = features(l.key.Query), verify.Version
	}
	c.l1.put(e)
	c.writes.Add(1)
	go func() {
		defer c.writes.Done()
		c.store(context.WithoutCancel(ctx), l, e)
	}()
}

// Collector assembles a streamed answer as it passes, for Store.
type Collector struct{ a assembler }

// Collect returns a Collector for the request's streamed answer, or nil
// when the request does not write the cache.
func (l *Lookup) Collect() *Collector {
	if !l.write {
		return nil
	}
	return &Collector{}
}

// Add takes one event of the stream, in order. A nil Collector ignores it.
func (c *Collector) Add(ev sse.Event) {
	if c != nil {
		c.a.add(ev)
	}
}

// Body returns the assembled chat.completion, or nil when the stream
// cannot be stored (it broke off, a choice never finished, it grew past
// MaxEntryBytes). usage is what the request used, for a stream that did not
// carry it.
func (c *Collector) Body(usage llm.Usage) []byte {
	if c == nil {
		return nil
	}
	return c.a.body(&usage)
}
