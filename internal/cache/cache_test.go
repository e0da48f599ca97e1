package cache

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// stores runs f on the in-process store and, when configured, real Redis.
func stores(t *testing.T, f func(t *testing.T, kv store.KV)) {
	t.Run("memory", func(t *testing.T) { f(t, memkv.New()) })
	t.Run("redis", func(t *testing.T) { f(t, storetest.RedisKV(t)) })
}

func TestExactTiers(t *testing.T) {
	stores(t, func(t *testing.T, kv store.KV) {
		c := newCache(t, kv, Options{})
		run(t, c)
		u := &fakeUpstream{}
		body := chatBody("What is the capital of France?", "")
		first := do(t, c, u, body, alice)
		if first.err != nil || first.tier() != "" || first.x.Header.Get(HeaderCacheHit) != "false" {
			t.Fatalf("first request: %v", first)
		}
		second := do(t, c, u, body, alice)
		if second.tier() != "L1" || u.calls.Load() != 1 {
			t.Fatalf("second request: %v, upstream calls %d", second, u.calls.Load())
		}
		if second.body != first.body {
			t.Errorf("served %s, want the first answer %s", second.body, first.body)
		}
		x := second.x
		if x.RoutingStrategy != "cache" || x.RoutingReason != "cache_hit:tier=L1" || x.Cost != 0 || x.Usage.Total() != 0 {
			t.Errorf("hit exchange: strategy %q reason %q cost %v usage %+v", x.RoutingStrategy, x.RoutingReason, x.Cost, x.Usage)
		}
		if x.Header.Get(HeaderCacheHit) != "true" || x.Header.Get(HeaderCacheKey) == "" || x.Header.Get(HeaderTokensSaved) != "15" {
			t.Errorf("hit headers: %v", x.Header)
		}
		if x.Cache.TokensSaved != 15 || x.Cache.Query != "What is the capital of France?" {
			t.Errorf("hit record: %+v", x.Cache)
		}

		// Another replica on the same store: no L1, the shared tier answers.
		c2 := newCache(t, kv, Options{})
		run(t, c2)
		third := do(t, c2, u, body, alice)
		if third.tier() != "L2" || u.calls.Load() != 1 || third.body != first.body {
			t.Fatalf("other replica: %v, upstream calls %d", third, u.calls.Load())
		}
		// and now keeps it in its L1.
		if fourth := do(t, c2, u, body, alice); fourth.tier() != "L1" {
			t.Fatalf("other replica, again: %v", fourth)
		}
	})
}

func TestKeyIgnoresTransportFieldsButNotSampling(t *testing.T) {
	c := newCache(t, memkv.New(), Options{})
	run(t, c)
	u := &fakeUpstream{}
	do(t, c, u, chatBody("Explain TCP slow start.", `,"temperature":0.2`), alice)
	if s := do(t, c, u, chatBody("Explain TCP slow start.", `,"temperature":0.2,"user":"u1","stream_options":null`), alice); s.tier() != "L1" {
		t.Errorf("user and stream options changed the key: %v", s)
	}
	if s := do(t, c, u, chatBody("Explain TCP slow start.", `,"temperature":0.3`), alice); s.tier() != "" {
		t.Errorf("a different temperature was served from the cache: %v", s)
	}
	if s := do(t, c, u, chatBody("Explain TCP slow start.", `,"temperature":0.2,"max_tokens":10`), alice); s.tier() != "" {
		t.Errorf("a different max_tokens was served from the cache: %v", s)
	}
	if s := do(t, c, u, strings.Replace(chatBody("Explain TCP slow start.", `,"temperature":0.2`), "You are helpful.", "You are a pirate.", 1), alice); s.tier() != "" {
		t.Errorf("a different system prompt was served from the cache: %v", s)
	}
}

func TestTenantIsolationAndSharedNamespaces(t *testing.T) {
	c := newCache(t, memkv.New(), Options{SharedNamespaces: []string{"faq"}})
	run(t, c)
	u := &fakeUpstream{}
	body := chatBody("What are your opening hours?", "")
	do(t, c, u, body, alice)
	if s := do(t, c, u, body, bob); s.tier() != "" {
		t.Fatalf("bob was served alice's answer: %v", s)
	}
	if s := do(t, c, u, body, alice, HeaderCacheNamespace, "support"); s.tier() != "" {
		t.Fatalf("a namespace was served the default namespace's answer: %v", s)
	}
	do(t, c, u, body, alice, HeaderCacheNamespace, "faq")
	if s := do(t, c, u, body, bob, HeaderCacheNamespace, "faq"); s.tier() != "L1" {
		t.Fatalf("the shared namespace did not share: %v", s)
	}
}

// TestSharing: answers are the caller's own by default, even within a
// team; ShareTeam shares them among a team's callers but never across
// teams, nor with callers without a team.
func TestSharing(t *testing.T) {
	key := func(id, team string) *identity.Principal {
		return &identity.Principal{Kind: identity.VirtualKey, ID: id, TeamID: team}
	}
	carol, dave, erin := key("key-carol", "t1"), key("key-dave", "t1"), key("key-erin", "t2")
	user := &identity.Principal{Kind: identity.User, ID: "key-carol", TeamID: "t1"} // the same id, another kind
	solo := key("key-solo", "")
	tests := []struct {
		sharing string
		second  *identity.Principal
		want    string // tier of the second request
	}{
		{"", carol, "L1"},
		{"", dave, ""},
		{"", user, ""},
		{ShareCaller, dave, ""},
		{ShareTeam, dave, "L1"},
		{ShareTeam, erin, ""},
		{ShareTeam, solo, ""},
		{ShareTeam, user, "L1"},
	}
	for _, tt := range tests {
		t.Run(tt.sharing+"/"+tt.second.ID+"/"+tt.second.Kind.String(), func(t *testing.T) {
			c := newCache(t, memkv.New(), Options{Sharing: tt.sharing})
			run(t, c)
			u := &fakeUpstream{}
			body := chatBody("What's my account balance?", "")
			do(t, c, u, body, carol)
			if s := do(t, c, u, body, tt.second); s.tier() != tt.want {
				t.Errorf("carol's answer for %s with sharing %q: got tier %q, want %q", tt.second.ID, tt.sharing, s.tier(), tt.want)
			}
		})
	}
	if _, err := New(memkv.New(), Options{Sharing: "everyone"}); err == nil {
		t.Error("sharing \"everyone\": got no error, want one")
	}
}

func TestCacheControlHeaders(t *testing.T) {
	c := newCache(t, memkv.New(), Options{})
	run(t, c)
	u := &fakeUpstream{}
	q := func(s string) string { return chatBody(s, "") }

	do(t, c, u, q("no-store one"), alice, "Cache-Control", "no-store")
	if s := do(t, c, u, q("no-store one"), alice); s.tier() != "" {
		t.Errorf("Cache-Control: no-store stored: %v", s)
	}
	do(t, c, u, q("no-store two"), alice, HeaderCache, "no-store")
	if s := do(t, c, u, q("no-store two"), alice); s.tier() != "" {
		t.Errorf("x-svc-cache: no-store stored: %v", s)
	}
	do(t, c, u, q("bypass"), alice, HeaderCache, "bypass")
	if s := do(t, c, u, q("bypass"), alice); s.tier() != "" {
		t.Errorf("bypass stored: %v", s)
	}

	do(t, c, u, q("read skip"), alice)
	for _, h := range [][2]string{{"Cache-Control", "no-cache"}, {HeaderCache, "no-cache"}, {HeaderNoCache, "1"}, {HeaderCache, "bypass"}} {
		before := u.calls.Load()
		if s := do(t, c, u, q("read skip"), alice, h[0], h[1]); s.tier() != "" || u.calls.Load() != before+1 {
			t.Errorf("%s: %s was served from the cache: %v", h[0], h[1], s)
		}
	}
	// no-cache still stores: a fresh answer replaces the entry.
	if s := do(t, c, u, q("read skip"), alice); s.tier() != "L1" {
		t.Errorf("after no-cache: %v", s)
	}

	for _, h := range [][2]string{{HeaderCache, "sometimes"}, {HeaderNoCache, "maybe"}, {HeaderCacheTTL, "-5"}, {HeaderCacheTTL, "abc"}, {HeaderCacheTTL, "99999999"}, {HeaderCacheNamespace, "a b"}, {HeaderCacheNamespace, strings.Repeat("n", 200)}} {
		before := u.calls.Load()
		s := do(t, c, u, q("bad header"), alice, h[0], h[1])
		if apierr.KindOf(s.err) != apierr.InvalidRequest || u.calls.Load() != before {
			t.Errorf("%s: %q: err %v, upstream called %d times", h[0], h[1], s.err, u.calls.Load()-before)
		}
	}
}

func TestHighTemperatureIsNeverCached(t *testing.T) {
	c := newCache(t, memkv.New(), Options{})
	run(t, c)
	u := &fakeUpstream{}
	body := chatBody("Write a poem about the sea.", `,"temperature":1.2`)
	do(t, c, u, body, alice)
	if s := do(t, c, u, body, alice); s.tier() != "" || u.calls.Load() != 2 {
		t.Fatalf("temperature 1.2 was cached: %v", s)
	}
	body = chatBody("Write a poem about the sea.", `,"temperature":0.7`)
	do(t, c, u, body, alice)
	if s := do(t, c, u, body, alice); s.tier() != "L1" {
		t.Fatalf("temperature 0.7 (the bound) was not cached: %v", s)
	}
}

// TestFreshQuestionsAreNeverCached: a question whose answer must be fresh
// is neither served from the cache nor stored, and the skips are counted;
// a question about the same words is cached as usual.
func TestFreshQuestionsAreNeverCached(t *testing.T) {
	kv := memkv.New()
	c := newCache(t, kv, Options{})
	run(t, c)
	u := &fakeUpstream{}
	for _, q := range []string{"Pick a random number between 1 and 10.", "Generate a strong password.", "What's today's date?", "What's the weather in Paris today?"} {
		before := u.calls.Load()
		first, second := do(t, c, u, chatBody(q, ""), alice), do(t, c, u, chatBody(q, ""), alice)
		if second.tier() != "" || u.calls.Load() != before+2 || first.x.Header.Get(HeaderCacheHit) != "" {
			t.Errorf("%q asked twice: second from tier %q, upstream calls %d, x-svc-cache-hit %q; want a miss, 2 calls, no header",
				q, second.tier(), u.calls.Load()-before, first.x.Header.Get(HeaderCacheHit))
		}
	}
	body := chatBody("Explain how random forests work.", "")
	do(t, c, u, body, alice)
	if s := do(t, c, u, body, alice); s.tier() != "L1" {
		t.Errorf("a question about randomness: got tier %q, want L1", s.tier())
	}
	c.flushStats(context.Background(), "n1")
	st, err := NewAdmin(kv).Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got := st.SkippedBy[SkipFresh]; got != 8 {
		t.Errorf("skipped as fresh: got %d, want 8", got)
	}
}

func TestFailuresAreNotStored(t *testing.T) {
	c := newCache(t, memkv.New(), Options{})
	run(t, c)
	u := &fakeUpstream{fail: apierr.New(apierr.UpstreamError, "upstream_error", "provider failed")}
	body := chatBody("Will this fail?", "")
	if s := do(t, c, u, body, alice); s.err == nil {
		t.Fatal("want the upstream error")
	}
	u.fail = nil
	if s := do(t, c, u, body, alice); s.tier() != "" || s.err != nil {
		t.Fatalf("after a failure: %v", s)
	}
	// A stream cut short is not stored either.
	u.cut = true
	sbody := chatBody("A stream that breaks", `,"stream":true`)
	if s := do(t, c, u, sbody, alice); s.err == nil {
		t.Fatal("want the stream to fail")
	}
	u.cut = false
	if s := do(t, c, u, sbody, alice); s.tier() != "" || s.err != nil {
		t.Fatalf("a broken stream was stored: %v", s)
	}
}

func TestDoNotStore(t *testing.T) {
	c := newCache(t, memkv.New(), Options{})
	run(t, c)
	u := &fakeUpstream{}
	body := chatBody("My SSN is 078-05-1120, is it valid?", "")
	flag := func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		x.DoNotStore = "pii"
		return u.handler(ctx, x)
	}
	x := exchange(t, body, alice)
	if _, err := c.Stage()(flag)(context.Background(), x); err != nil {
		t.Fatal(err)
	}
	c.Wait()
	if s := do(t, c, u, body, alice); s.tier() != "" {
		t.Fatalf("an answer flagged not to be stored was served: %v", s)
	}
}

func TestStreams(t *testing.T) {
	c := newCache(t, memkv.New(), Options{})
	run(t, c)
	u := &fakeUpstream{}
	stream := chatBody("Tell me about Go channels.", `,"stream":true,"stream_options":{"include_usage":true}`)
	first := do(t, c, u, stream, alice)
	if first.err != nil || first.tier() != "" {
		t.Fatalf("first: %v", first)
	}
	second := do(t, c, u, stream, alice)
	if second.tier() != "L1" || u.calls.Load() != 1 {
		t.Fatalf("streamed repeat: %v", second)
	}
	if second.body != first.body {
		t.Errorf("replayed stream differs:\n got %s\nwant %s", second.body, first.body)
	}
	// The same question without streaming is served the assembled answer.
	plain := do(t, c, u, chatBody("Tell me about Go channels.", ""), alice)
	if plain.tier() != "L1" {
		t.Fatalf("plain request after a streamed one: %v", plain)
	}
	var resp struct {
		Object  string
		Choices []struct {
			Message struct{ Content string }
		}
		Usage struct {
			TotalTokens int64 `json:"total_tokens"`
		}
	}
	if err := json.Unmarshal([]byte(plain.body), &resp); err != nil || resp.Object != "chat.completion" ||
		resp.Choices[0].Message.Content != "answer to: Tell me about Go channels." || resp.Usage.TotalTokens != 15 {
		t.Fatalf("assembled answer %s (%v)", plain.body, err)
	}
}

func TestSemanticHitAndVerification(t *testing.T) {
	c := newCache(t, memkv.New(), Options{Threshold: 0.5})
	run(t, c)
	u := &fakeUpstream{}
	do(t, c, u, chatBody("How do I reset my password?", ""), alice)
	s := do(t, c, u, chatBody("how can i reset my password", ""), alice)
	if s.tier() != "L3" || u.calls.Load() != 1 {
		t.Fatalf("paraphrase: %v", s)
	}
	if s.x.Header.Get(HeaderSimilarity) == "" || s.x.RoutingReason != "cache_hit:tier=L3" || s.x.Cache.Query != "How do I reset my password?" {
		t.Errorf("L3 hit: %v %+v", s.x.Header, s.x.Cache)
	}
	// Near-duplicates that verification must refuse, even at a low threshold.
	do(t, c, u, chatBody("What is 15% of 200?", ""), alice)
	for _, q := range []string{"What is 15% of 300?", "What is 25% of 200?"} {
		if s := do(t, c, u, chatBody(q, ""), alice); s.tier() != "" {
			t.Errorf("%q was served %q's answer: %s", q, "What is 15% of 200?", s.body)
		}
	}
	do(t, c, u, chatBody("How do I enable two-factor authentication on GitHub?", ""), alice)
	if s := do(t, c, u, chatBody("How do I enable two-factor authentication on GitLab?", ""), alice); s.tier() != "" {
		t.Errorf("another entity was served the GitHub answer: %s", s.body)
	}
	// Another thing asked about in the same request: similarity 1 under
	// the built-in embedder ("question" and "answer" are request wording
	// to it), 0.9007 for the second pair.
	for _, p := range [][2]string{{"How do I delete a question?", "How do I delete an answer?"}, {"go sdk hello 3", "go sdk stream 3"}} {
		do(t, c, u, chatBody(p[0], ""), alice)
		if s := do(t, c, u, chatBody(p[1], ""), alice); s.tier() != "" {
			t.Errorf("%q was served %q's answer: %s", p[1], p[0], s.body)
		}
	}
	c.flushStats(context.Background(), "n1")
	st, err := NewAdmin(c.kv).Stats(context.Background())
	if err != nil || st.Rejected["number"] == 0 || st.Rejected["content"] != 2 {
		t.Errorf("verification rejections: got %+v (%v), want number > 0 and content 2", st.Rejected, err)
	}
}

func TestReplicaFollowsEntries(t *testing.T) {
	stores(t, func(t *testing.T, kv store.KV) {
		a := newCache(t, kv, Options{})
		b := newCache(t, kv, Options{})
		run(t, a)
		run(t, b)
		u := &fakeUpstream{}
		do(t, a, u, chatBody("How do I reset my password?", ""), alice)
		storetest.Until(t, 10*time.Second, "replica b to index the entry", func() bool { return b.index.Len() == 1 })
		s := do(t, b, u, chatBody("how can i reset my password", ""), alice)
		if s.tier() != "L3" || u.calls.Load() != 1 {
			t.Fatalf("replica b: %v", s)
		}
		// A replica started later rebuilds its index from the log.
		late := newCache(t, kv, Options{})
		run(t, late)
		storetest.Until(t, 10*time.Second, "a late replica to rebuild its index", func() bool { return late.index.Len() == 1 })
	})
}

func TestFlush(t *testing.T) {
	stores(t, func(t *testing.T, kv store.KV) {
		a := newCache(t, kv, Options{})
		b := newCache(t, kv, Options{})
		run(t, a)
		run(t, b)
		admin := NewAdmin(kv)
		u := &fakeUpstream{}
		plain, inNS := chatBody("Flush me", ""), chatBody("Flush me in a namespace", "")
		do(t, a, u, plain, alice)
		do(t, a, u, inNS, alice, HeaderCacheNamespace, "team-x")
		storetest.Until(t, 10*time.Second, "b to follow", func() bool { return b.index.Len() == 2 })

		if err := admin.Flush(context.Background(), "team-x"); err != nil {
			t.Fatal(err)
		}
		// Both replicas hear of it (over the channel, within milliseconds).
		storetest.Until(t, 10*time.Second, "the namespace to leave the indexes", func() bool { return a.index.Len() == 1 && b.index.Len() == 1 })
		if s := do(t, a, u, inNS, alice, HeaderCacheNamespace, "team-x"); s.tier() != "" {
			t.Fatalf("flushed namespace still served on a: %v", s)
		}
		if s := do(t, b, u, plain, alice); s.tier() != "L2" {
			t.Fatalf("the default namespace was flushed too: %v", s)
		}
		if err := admin.Flush(context.Background(), ""); err != nil {
			t.Fatal(err)
		}
		storetest.Until(t, 10*time.Second, "everything to leave the indexes", func() bool { return a.index.Len() == 0 && b.index.Len() == 0 })
		if s := do(t, b, u, plain, alice); s.tier() != "" {
			t.Fatalf("flushed entry served: %v", s)
		}
	})
}

func TestStoreDownDegradesToL1(t *testing.T) {
	c := newCache(t, brokenKV{memkv.New()}, Options{})
	u := &fakeUpstream{}
	body := chatBody("What does a write-through cache do?", "") // "Is the store down?" asks for a fresh answer
	if s := do(t, c, u, body, alice); s.err != nil {
		t.Fatalf("a request failed because the store is down: %v", s)
	}
	if s := do(t, c, u, body, alice); s.err != nil || s.tier() != "L1" {
		t.Fatalf("L1 did not serve while the store is down: %v", s)
	}
}

func TestTTL(t *testing.T) {
	var offset atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(offset.Load())) }
	c := newCache(t, memkv.New(), Options{Now: clock})
	run(t, c)
	u := &fakeUpstream{}
	body := chatBody("Short-lived?", "")
	do(t, c, u, body, alice, HeaderCacheTTL, "60")
	if s := do(t, c, u, body, alice); s.tier() != "L1" {
		t.Fatalf("within its ttl: %v", s)
	}
	offset.Store(int64(2 * time.Minute))
	if s := do(t, c, u, body, alice); s.tier() != "" {
		t.Fatalf("past its ttl of 60 s: %v", s)
	}
}

func TestStats(t *testing.T) {
	kv := memkv.New()
	c := newCache(t, kv, Options{})
	run(t, c)
	u := &fakeUpstream{}
	body := chatBody("Count me", "")
	do(t, c, u, body, alice)
	do(t, c, u, body, alice)
	do(t, c, u, body, alice, HeaderCache, "bypass")
	do(t, c, u, chatBody("Count me", `,"temperature":1.5`), alice)
	c.flushStats(context.Background(), "n1")
	s, err := NewAdmin(kv).Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{SkipHeader: 1, SkipTemperature: 1}, s.SkippedBy); diff != "" {
		t.Errorf("skipped by reason (-want +got):\n%s", diff)
	}
	if s.Hits != 1 || s.Misses != 1 || s.HitsByTier["L1"] != 1 || s.Skipped != 2 || s.TokensSaved != 15 || s.CostSavedUSD != 0.0015 ||
		s.Writes != 1 || s.Entries != 1 || s.BytesCompressed == 0 || s.BytesRaw == 0 || s.Replicas < 1 || s.HitRate != 0.5 {
		b, _ := json.Marshal(s)
		t.Fatalf("stats %s", b)
	}
}

func TestDirectivesDefaultNamespace(t *testing.T) {
	h := http.Header{}
	h.Set(HeaderCacheNamespace, "default")
	d, err := parseDirectives(h)
	if err != nil || d.namespace != "" || !d.read || !d.write {
		t.Fatalf("%+v %v", d, err)
	}
}

// TestFlushMissedWhileUnsubscribed: a replica whose flush subscription
// ended (the bus may have lost a notice) subscribes again, and drops what
// a flush made meanwhile should have dropped.
func TestFlushMissedWhileUnsubscribed(t *testing.T) {
	kv := memkv.New()
	bus := &storetest.EndableBus{KV: kv}
	a := newCache(t, kv, Options{})
	// b's clock stands still, so its periodic refresh of the generations
	// (gensEvery), which would drop the entry anyway, never comes due:
	// only the subscription made again can.
	frozen := time.Now()
	b := newCache(t, bus, Options{Now: func() time.Time { return frozen }})
	run(t, a)
	run(t, b)
	u := &fakeUpstream{}
	body := chatBody("Flush me while b is not listening", "")
	do(t, a, u, body, alice)
	storetest.Until(t, 10*time.Second, "b to follow", func() bool { return b.index.Len() == 1 })
	if s := do(t, b, u, body, alice); s.tier() == "" {
		t.Fatalf("b before the flush: %v", s)
	}
	if s := do(t, b, u, body, alice); s.tier() != "L1" {
		t.Fatalf("b's second lookup: %v, want L1", s)
	}

	bus.Fail.Store(true)
	bus.EndAll()
	if err := NewAdmin(kv).Flush(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	storetest.Until(t, 10*time.Second, "a to drop the flushed entry", func() bool { return a.index.Len() == 0 })
	bus.Fail.Store(false)
	storetest.Until(t, 10*time.Second, "b to subscribe again", func() bool { return bus.Subscriptions() == 2 })
	storetest.Until(t, 10*time.Second, "b to drop the flushed entry", func() bool { return b.index.Len() == 0 })
	if s := do(t, b, u, body, alice); s.tier() != "" {
		t.Fatalf("b served a flushed entry after subscribing again: %v", s)
	}
}
