package toolcache

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// stores runs f on the in-process store and, with SVC_TEST_REDIS_URL, on
// real Redis.
func stores(t *testing.T, f func(t *testing.T, kv store.KV)) {
	t.Run("memkv", func(t *testing.T) {
		kv := memkv.New()
		t.Cleanup(func() { kv.Close() })
		f(t, kv)
	})
	t.Run("redis", func(t *testing.T) { f(t, storetest.RedisKV(t)) })
}

// clock is a settable clock for Options.Now.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Now().UnixNano())
	return c
}
func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

func key(tenant, server, tool, args string) mcpgw.CacheKey {
	return mcpgw.CacheKey{Tenant: tenant, ServerID: server, Tool: tool, Arguments: []byte(args)}
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// text is the text of a result's first content, "" for a miss.
func text(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	if r == nil {
		return ""
	}
	if len(r.Content) != 1 {
		t.Fatalf("result has %d contents, want 1", len(r.Content))
	}
	tc, ok := r.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("content is %T, want *mcp.TextContent", r.Content[0])
	}
	return tc.Text
}

func get(t *testing.T, c *Cache, k mcpgw.CacheKey) string {
	t.Helper()
	r, err := c.Get(context.Background(), k)
	if err != nil {
		t.Fatalf("Get(%+v): %v", k, err)
	}
	return text(t, r)
}

func put(t *testing.T, c *Cache, k mcpgw.CacheKey, r *mcp.CallToolResult, ttl time.Duration) {
	t.Helper()
	if err := c.Put(context.Background(), k, r, nil, ttl, 0.01); err != nil {
		t.Fatalf("Put(%+v): %v", k, err)
	}
}

func TestRoundTrip(t *testing.T) {
	stores(t, func(t *testing.T, kv store.KV) {
		c := New(kv, Options{})
		big := strings.Repeat("row of a large, compressible answer; ", 2000) // zstd path
		rich := &mcp.CallToolResult{
			Content: []mcp.Content{
				&mcp.TextContent{Text: "42 open issues"},
				&mcp.ImageContent{Data: []byte{0x89, 'P', 'N', 'G'}, MIMEType: "image/png"},
			},
			StructuredContent: map[string]any{"open": 42.0, "labels": []any{"bug", "p1"}},
		}
		cases := []struct {
			name string
			k    mcpgw.CacheKey
			r    *mcp.CallToolResult
		}{
			{"small", key("team:a", "github", "list_issues", `{"repo":"svc"}`), textResult("3 issues")},
			{"large", key("team:a", "github", "get_file", `{"path":"README.md"}`), textResult(big)},
			{"rich", key("team:a", "github", "count", `{}`), rich},
		}
		for _, tc := range cases {
			put(t, c, tc.k, tc.r, time.Minute)
			got, err := c.Get(context.Background(), tc.k)
			if err != nil || got == nil {
				t.Fatalf("%s: Get after Put: %v, %v; want the result", tc.name, got, err)
			}
			want, _ := json.Marshal(tc.r)
			gotJSON, _ := json.Marshal(got)
			if !bytes.Equal(gotJSON, want) {
				t.Errorf("%s: got %s, want %s", tc.name, gotJSON, want)
			}
			// A plain text hit comes with its JSON, as json.Marshal
			// writes it; any other without.
			_, enc, err := c.GetJSON(context.Background(), tc.k)
			if plain := tc.r != rich; err != nil || (enc != nil) != plain || (plain && !bytes.Equal(enc, want)) {
				t.Errorf("%s: GetJSON's JSON %.80s (%v), want it only for plain text, equal to %.80s", tc.name, enc, err, want)
			}
		}
	})
}

func TestKeysSeparate(t *testing.T) {
	stores(t, func(t *testing.T, kv store.KV) {
		c := New(kv, Options{})
		base := key("team:a", "github", "list_issues", `{"repo":"svc"}`)
		put(t, c, base, textResult("a's issues"), time.Minute)
		others := map[string]mcpgw.CacheKey{
			"other tenant":    key("team:b", "github", "list_issues", `{"repo":"svc"}`),
			"other server":    key("team:a", "gitlab", "list_issues", `{"repo":"svc"}`),
			"other tool":      key("team:a", "github", "list_pulls", `{"repo":"svc"}`),
			"other arguments": key("team:a", "github", "list_issues", `{"repo":"web"}`),
			"other registration version": func() mcpgw.CacheKey {
				k := key("team:a", "github", "list_issues", `{"repo":"svc"}`)
				k.Version = "v2"
				return k
			}(),
			// Length-prefixed parts: moving bytes between parts is another key.
			"shifted parts": key("team:ag", "ithub", "list_issues", `{"repo":"svc"}`),
		}
		for name, k := range others {
			if got := get(t, c, k); got != "" {
				t.Errorf("%s: got %q, want a miss", name, got)
			}
		}
		if got := get(t, c, base); got != "a's issues" {
			t.Errorf("same key: got %q, want %q", got, "a's issues")
		}
	})
}

func TestNotStored(t *testing.T) {
	stores(t, func(t *testing.T, kv store.KV) {
		c := New(kv, Options{MaxBytes: 64 << 10})
		errResult := textResult("rate limited, try later")
		errResult.IsError = true
		cases := map[string]*mcp.CallToolResult{
			"isError":     errResult,
			"nil":         nil,
			"over 64 KiB": textResult(strings.Repeat("x", 64<<10)),
		}
		for name, r := range cases {
			k := key("team:a", "s1", name, `{}`)
			if err := c.Put(context.Background(), k, r, nil, time.Minute, 0); err != nil {
				t.Errorf("%s: Put: %v, want nil (not stored is not an error)", name, err)
			}
			if got, err := c.Get(context.Background(), k); got != nil || err != nil {
				t.Errorf("%s: Get: %v, %v, want a miss", name, got, err)
			}
		}
		k := key("team:a", "s1", "just under", `{}`)
		put(t, c, k, textResult(strings.Repeat("x", 60<<10)), time.Minute)
		if get(t, c, k) == "" {
			t.Errorf("a result under MaxBytes was not cached")
		}
	})
}

func TestDefaultSizeLimit(t *testing.T) {
	kv := memkv.New()
	defer kv.Close()
	c := New(kv, Options{})
	k := key("team:a", "s1", "dump", `{}`)
	put(t, c, k, textResult(strings.Repeat("y", DefaultMaxBytes)), time.Minute) // its JSON is over 1 MiB
	if got := get(t, c, k); got != "" {
		t.Errorf("a result over 1 MiB was cached")
	}
}

func TestTTL(t *testing.T) {
	stores(t, func(t *testing.T, kv store.KV) {
		c := New(kv, Options{})
		short, long := key("t", "s", "a", `{}`), key("t", "s", "b", `{}`)
		const ttl = 150 * time.Millisecond
		start := time.Now()
		put(t, c, short, textResult("short"), ttl)
		put(t, c, long, textResult("long"), time.Minute)
		if got := get(t, c, short); got != "short" {
			// A stall of the machine past ttl since the Put makes a miss right.
			d := time.Since(start)
			if d < ttl {
				t.Fatalf("fresh entry: got %q, want %q", got, "short")
			}
			t.Logf("fresh entry missed %v after its Put, ttl %v: not checked", d, ttl)
		}
		time.Sleep(400 * time.Millisecond)
		if got := get(t, c, short); got != "" {
			t.Errorf("expired entry: got %q, want a miss", got)
		}
		if got := get(t, c, long); got != "long" {
			t.Errorf("entry within its TTL: got %q, want %q", got, "long")
		}
	})
}

// recorder wraps a store and records the keys and TTLs of Set.
type recorder struct {
	Store
	mu   sync.Mutex
	sets map[string]time.Duration
}

func (r *recorder) Set(ctx context.Context, k string, v []byte, ttl time.Duration) error {
	r.mu.Lock()
	r.sets[k] = ttl
	r.mu.Unlock()
	return r.Store.Set(ctx, k, v, ttl)
}

func (r *recorder) only(t *testing.T) (string, time.Duration) {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.sets) != 1 {
		t.Fatalf("%d Sets, want 1", len(r.sets))
	}
	for k, ttl := range r.sets {
		delete(r.sets, k)
		return k, ttl
	}
	return "", 0
}

func TestTTLDefaultsAndKeyShape(t *testing.T) {
	kv := memkv.New()
	defer kv.Close()
	rec := &recorder{Store: kv, sets: map[string]time.Duration{}}
	c := New(rec, Options{DefaultTTL: 42 * time.Second})
	cases := []struct {
		ttl, want time.Duration
		args      string
	}{
		{0, 42 * time.Second, `{}`},
		{-time.Second, 42 * time.Second, `{"a":1}`},
		{90 * time.Second, 90 * time.Second, `{"q":"` + strings.Repeat("z", 1<<20) + `"}`},
		{30 * 24 * time.Hour, MaxTTL, `{"b":2}`},
	}
	var keyLen int
	for i, tc := range cases {
		put(t, c, key("team:a", "github", "search", tc.args), textResult("ok"), tc.ttl)
		k, ttl := rec.only(t)
		if ttl != tc.want {
			t.Errorf("case %d: Put with ttl %v stored with %v, want %v", i, tc.ttl, ttl, tc.want)
		}
		if !strings.HasPrefix(k, "mcp:tc:e:0.0:") {
			t.Errorf("case %d: key %q, want the prefix mcp:tc:e:0.0:", i, k)
		}
		if keyLen != 0 && len(k) != keyLen {
			t.Errorf("case %d: key of %d bytes, want %d whatever the arguments", i, len(k), keyLen)
		}
		keyLen = len(k)
	}
	// An id that is not a registration id is hashed, not written into keys.
	put(t, c, key("t", strings.Repeat("Ω:", 500), "x", `{}`), textResult("ok"), 0)
	if k, _ := rec.only(t); len(k) != keyLen {
		t.Errorf("key with a long, odd server id: %d bytes, want %d", len(k), keyLen)
	}
}

func TestFlush(t *testing.T) {
	stores(t, func(t *testing.T, kv store.KV) {
		ctx := context.Background()
		c := New(kv, Options{})
		gh, fs := key("t", "github", "list", `{}`), key("t", "files", "read", `{}`)
		fill := func() {
			put(t, c, gh, textResult("gh"), time.Minute)
			put(t, c, fs, textResult("fs"), time.Minute)
		}
		fill()
		if err := c.FlushServer(ctx, "github"); err != nil {
			t.Fatal(err)
		}
		if got := get(t, c, gh); got != "" {
			t.Errorf("flushed server's entry: got %q, want a miss", got)
		}
		if got := get(t, c, fs); got != "fs" {
			t.Errorf("other server's entry after FlushServer: got %q, want %q", got, "fs")
		}
		fill()
		if get(t, c, gh) != "gh" {
			t.Errorf("a server's entries are not cached again after its flush")
		}
		if err := c.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		for _, k := range []mcpgw.CacheKey{gh, fs} {
			if got := get(t, c, k); got != "" {
				t.Errorf("%s after Flush: got %q, want a miss", k.ServerID, got)
			}
		}
	})
}

func TestSharedByReplicas(t *testing.T) {
	stores(t, func(t *testing.T, kv store.KV) {
		ctx := context.Background()
		clk := newClock()
		a, b := New(kv, Options{Now: clk.Now}), New(kv, Options{Now: clk.Now})
		k := key("team:a", "github", "list", `{"state":"open"}`)
		put(t, a, k, textResult("from a"), time.Minute)
		if got := get(t, b, k); got != "from a" {
			t.Fatalf("replica b: got %q, want a's entry", got)
		}
		for _, flush := range []func() error{
			func() error { return a.FlushServer(ctx, "github") },
			func() error { return a.Flush(ctx) },
		} {
			if err := flush(); err != nil {
				t.Fatal(err)
			}
			if got := get(t, a, k); got != "" {
				t.Errorf("the flushing replica: got %q, want a miss at once", got)
			}
			clk.Advance(GenerationMaxAge)
			if got := get(t, b, k); got != "" {
				t.Errorf("the other replica %v after the flush: got %q, want a miss", GenerationMaxAge, got)
			}
			put(t, b, k, textResult("from b"), time.Minute)
			if got := get(t, a, k); got != "from b" {
				t.Errorf("after the flush, replica a: got %q, want b's new entry", got)
			}
		}
	})
}

func TestStats(t *testing.T) {
	stores(t, func(t *testing.T, kv store.KV) {
		ctx := context.Background()
		a, b := New(kv, Options{}), New(kv, Options{})
		k := key("t", "github", "list", `{}`)
		get(t, a, k) // miss
		get(t, b, k) // miss
		put(t, a, k, textResult("x"), time.Minute)
		for _, c := range []*Cache{a, b, b} {
			if get(t, c, k) == "" {
				t.Fatal("miss after Put")
			}
			c.Hit(ctx, "github", 0.25)
		}
		a.Hit(ctx, "github", -3) // a hit, no savings
		// Counted in process: b's reading shows b's own counts at once,
		// a's after a's next flush (its Run flushes every StatsInterval).
		own, err := b.Stats(ctx, []string{"github"})
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff([]ServerStats{{ServerID: "github", Hits: 2, Misses: 1, HitRate: 0.6667, SavedUSD: 0.5}}, own); d != "" {
			t.Errorf("before a's flush (-want +got):\n%s", d)
		}
		a.FlushStats(ctx)
		got, err := b.Stats(ctx, []string{"github", "unused"})
		if err != nil {
			t.Fatal(err)
		}
		want := []ServerStats{
			{ServerID: "github", Hits: 4, Misses: 2, HitRate: 0.6667, SavedUSD: 0.75},
			{ServerID: "unused"},
		}
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("Stats (-want +got):\n%s", d)
		}
		js, _ := json.Marshal(got[0])
		if string(js) != `{"server_id":"github","hits":4,"misses":2,"hit_rate":0.6667,"saved_usd":0.75}` {
			t.Errorf("JSON: got %s", js)
		}
	})
}

// counting counts a store's counter operations.
type counting struct {
	store.KV
	incrs atomic.Int64
}

func (c *counting) IncrBy(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error) {
	c.incrs.Add(1)
	return c.KV.IncrBy(ctx, key, delta, ttl)
}

// TestStatsOffTheCallPath: lookups and hits make no store round trip for
// statistics; Run adds them up every StatsInterval and once more when it
// ends, in one increment per counter.
func TestStatsOffTheCallPath(t *testing.T) {
	stores(t, func(t *testing.T, kv store.KV) {
		ctx, cancel := context.WithCancel(context.Background())
		ckv := &counting{KV: kv}
		c := New(ckv, Options{})
		k := key("t", "github", "list", `{}`)
		put(t, c, k, textResult("x"), time.Minute)
		before := ckv.incrs.Load()
		for range 50 {
			get(t, c, k)
			c.Hit(ctx, "github", 0.01)
		}
		if n := ckv.incrs.Load() - before; n != 0 {
			t.Errorf("50 hits made %d counter round trips, want none", n)
		}
		done := make(chan error)
		go func() { done <- c.Run(ctx) }()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if n := ckv.incrs.Load() - before; n != 2 {
			t.Errorf("the flush made %d increments, want one per counter (hits, saved)", n)
		}
		got, err := New(kv, Options{}).Stats(context.Background(), []string{"github"})
		if err != nil || got[0].Hits != 50 || got[0].SavedUSD != 0.5 {
			t.Errorf("after Run ended: %+v %v, want 50 hits and $0.50 saved", got, err)
		}
	})
}

// broken is a store that fails every call.
type broken struct{ calls atomic.Int64 }

var errDown = errors.New("connection refused")

func (b *broken) Get(context.Context, string) ([]byte, error) {
	b.calls.Add(1)
	return nil, errDown
}
func (b *broken) Set(context.Context, string, []byte, time.Duration) error {
	b.calls.Add(1)
	return errDown
}
func (b *broken) IncrBy(context.Context, string, int64, time.Duration) (int64, error) {
	b.calls.Add(1)
	return 0, errDown
}

func TestStoreDown(t *testing.T) {
	var logs bytes.Buffer
	kv := &broken{}
	c := New(kv, Options{Log: slog.New(slog.NewTextHandler(&logs, nil))})
	ctx := context.Background()
	for range 3 {
		if r, err := c.Get(ctx, key("t", "s", "x", `{}`)); r != nil || err != nil {
			t.Fatalf("Get with the store down: %v, %v, want (nil, nil)", r, err)
		}
	}
	if n := strings.Count(logs.String(), "toolcache: the KV store failed"); n != 1 {
		t.Errorf("logged %d warnings for 3 failed Gets, want 1 (once a minute):\n%s", n, logs.String())
	}
	if err := c.Put(ctx, key("t", "s", "x", `{}`), textResult("x"), nil, 0, 0); !errors.Is(err, errDown) {
		t.Errorf("Put with the store down: %v, want the store's error", err)
	}
	if err := c.Flush(ctx); !errors.Is(err, errDown) {
		t.Errorf("Flush with the store down: %v, want the store's error", err)
	}
	if _, err := c.Stats(ctx, []string{"s"}); !errors.Is(err, errDown) {
		t.Errorf("Stats with the store down: %v, want the store's error", err)
	}
	c.Hit(ctx, "s", 1) // must not panic or block
}

func TestCorruptEntryIsMiss(t *testing.T) {
	kv := memkv.New()
	defer kv.Close()
	rec := &recorder{Store: kv, sets: map[string]time.Duration{}}
	c := New(rec, Options{Log: slog.New(slog.DiscardHandler)})
	k := key("t", "s", "x", `{}`)
	put(t, c, k, textResult("ok"), time.Minute)
	stored, _ := rec.only(t)
	for _, v := range []string{"", "j", "j{not json", "q{}", "z\x28\xb5\x2f\xfdgarbage", `j{"r":null}`} {
		if err := kv.Set(context.Background(), stored, []byte(v), time.Minute); err != nil {
			t.Fatal(err)
		}
		if got, err := c.Get(context.Background(), k); got != nil || err != nil {
			t.Errorf("stored %q: Get got %v, %v, want a miss", v, got, err)
		}
	}
}

// keeping wraps a store and keeps the last value of each Set.
type keeping struct {
	Store
	mu   sync.Mutex
	sets map[string][]byte
}

func (k *keeping) Set(ctx context.Context, key string, v []byte, ttl time.Duration) error {
	k.mu.Lock()
	k.sets[key] = bytes.Clone(v)
	k.mu.Unlock()
	return k.Store.Set(ctx, key, v, ttl)
}

// take returns the one value Set since the last take, nil when none.
func (k *keeping) take(t *testing.T) []byte {
	t.Helper()
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.sets) > 1 {
		t.Fatalf("%d Sets, want at most 1", len(k.sets))
	}
	for key, v := range k.sets {
		delete(k.sets, key)
		return v
	}
	return nil
}

// TestPutEncodedStoresWhatPutStores: Put given the result's JSON (as
// json.Marshal or mcpgw.AppendResult writes it) stores, byte for byte,
// what it stores encoding the result itself, plain or compressed; it
// stores nothing where that stores nothing; and a hit on either gives the
// same result and JSON.
func TestPutEncodedStoresWhatPutStores(t *testing.T) {
	kv := memkv.New()
	defer kv.Close()
	store := &keeping{Store: kv, sets: map[string][]byte{}}
	clk := newClock() // one time for every entry: the entries carry it
	c := New(store, Options{MaxBytes: 64 << 10, Now: clk.Now})
	ctx := context.Background()
	isErr := textResult("rate limited")
	isErr.IsError = true
	cases := map[string]*mcp.CallToolResult{
		"small":       textResult("3 issues"),
		"escapes":     textResult("<a href=\"x\">\u2028 é \x01</a>"),
		"large":       textResult(strings.Repeat("row of a large, compressible answer; ", 1000)),
		"two blocks":  {Content: []mcp.Content{&mcp.TextContent{Text: "a"}, &mcp.TextContent{Text: "b"}}},
		"rich":        {Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1, 2}, MIMEType: "image/png"}}, StructuredContent: map[string]any{"n": 1.0}},
		"isError":     isErr,
		"over 64 KiB": textResult(strings.Repeat("x", 64<<10)),
	}
	for name, r := range cases {
		k := key("team:a", "github", name, `{}`)
		marshalled, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Put(ctx, k, r, nil, time.Minute, 0.02); err != nil {
			t.Fatalf("%s: Put: %v", name, err)
		}
		want := store.take(t)
		_, wantJSON, _ := c.GetJSON(ctx, k)
		encs := map[string][]byte{"json.Marshal": marshalled}
		if appended, err := mcpgw.AppendResult(nil, r); err == nil {
			encs["AppendResult"] = appended
		}
		for from, enc := range encs {
			if err := c.Put(ctx, k, r, enc, time.Minute, 0.02); err != nil {
				t.Fatalf("%s: Put with the JSON of %s: %v", name, from, err)
			}
			if got := store.take(t); !bytes.Equal(got, want) {
				i := firstDiff(got, want)
				t.Errorf("%s: Put with the JSON of %s stored %d bytes, without %d; from byte %d: %.60q, without %.60q", name, from, len(got), len(want), i, got[i:], want[i:])
			}
			hit, gotJSON, err := c.GetJSON(ctx, k)
			if hitJSON, _ := json.Marshal(hit); err != nil || (want != nil) != (hit != nil) || (hit != nil && !bytes.Equal(hitJSON, marshalled)) || !bytes.Equal(gotJSON, wantJSON) {
				t.Errorf("%s: hit after Put with the JSON of %s: %s, JSON %.80s (%v); want %s, JSON %.80s", name, from, hitJSON, gotJSON, err, marshalled, wantJSON)
			}
		}
	}
}

// firstDiff is the offset of the first byte where a and b differ (the
// shorter one's length when one begins the other).
func firstDiff(a, b []byte) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return i
}
