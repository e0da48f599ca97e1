package cache

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// benchHit measures a repeated request answered by the cache stage: what
// the stage adds to a hit, from the decoded request to the answer.
func benchHit(b *testing.B, kv store.KV, o Options, tier string) {
	c := newCache(b, kv, o)
	run(b, c)
	u := &fakeUpstream{}
	body := chatBody(benchQuestion, "")
	do(b, c, u, body, alice)
	x := exchange(b, body, alice)
	h := c.Stage()(u.handler)
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x.Header, x.Cache = make(map[string][]string, 4), nil
		if _, err := h(ctx, x); err != nil || x.Cache == nil || x.Cache.Tier != tier {
			b.Fatalf("not a %s hit: %v %+v", tier, err, x.Cache)
		}
	}
}

// BenchmarkL1Hit: target < 100 µs.
func BenchmarkL1Hit(b *testing.B) { benchHit(b, memkv.New(), Options{}, "L1") }

// benchQuestion is the question of the hit benchmarks.
const benchQuestion = "What is the difference between a mutex and a semaphore in operating systems?"

// BenchmarkFreshCheck is the freshness check every request pays, on the
// question of BenchmarkL1Hit (part of it): it must stay well under it.
func BenchmarkFreshCheck(b *testing.B) {
	req := exchange(b, chatBody(benchQuestion, ""), alice).Chat
	b.ReportAllocs()
	for b.Loop() {
		if needsFresh(req) {
			b.Fatal("flagged as fresh")
		}
	}
}

// BenchmarkL2HitRedis: the L1 off, the entry in real Redis; target < 1 ms.
func BenchmarkL2HitRedis(b *testing.B) { benchHit(b, storetest.RedisKV(b), Options{L1Bytes: -1}, "L2") }

// BenchmarkMiss is what the cache adds to a request it cannot answer, on
// the request path: the key, the L1 and L2 lookups, the question's
// embedding, the index search, and putting the answer in the L1.
// BenchmarkMissStored also waits, each time, for the off-path part of
// storing it (compression, the index, the shared tier): the total work.
func BenchmarkMiss(b *testing.B)       { benchMiss(b, false) }
func BenchmarkMissStored(b *testing.B) { benchMiss(b, true) }

func benchMiss(b *testing.B, wait bool) {
	c := newCache(b, memkv.New(), Options{FollowInterval: 500 * time.Millisecond})
	run(b, c)
	u := &fakeUpstream{}
	h := c.Stage()(u.handler)
	ctx := context.Background()
	xs := make([]*pipeline.Exchange, b.N)
	for i := range xs {
		xs[i] = exchange(b, chatBody(fmt.Sprintf("How do I configure service number %d for production use?", i), ""), alice)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := h(ctx, xs[i]); err != nil || xs[i].Cache != nil {
			b.Fatalf("not a miss: %v %+v", err, xs[i].Cache)
		}
		if wait {
			c.Wait()
		}
	}
	b.StopTimer()
	c.Wait()
}

// BenchmarkL3Lookup100k: a question that matches nothing exactly, looked up
// among 100,000 entries of its scope (embedding, nearest-neighbour search,
// verification of the candidates); target < 5 ms. Reports the index's memory
// per 100,000 entries.
func BenchmarkL3Lookup100k(b *testing.B) {
	const n = 100_000
	c := newCache(b, memkv.New(), Options{L1Bytes: 1 << 30, MaxEntries: n + 1000, Threshold: 0.5})
	r, err := c.Lookup(context.Background(), Request{Chat: exchange(b, chatBody("seed", ""), alice).Chat, Scope: c.ScopeOf(alice)})
	if err != nil {
		b.Fatal(err)
	}
	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < n; i++ {
		q := syntheticQuestion(rng, i)
		vec, err := c.embedQuery(context.Background(), q)
		if err != nil {
			b.Fatal(err)
		}
		key := fmt.Sprintf("k%06d", i)
		if err := c.index.Add(r.scope, key, vec); err != nil {
			b.Fatal(err)
		}
		c.l1.put(&Entry{Key: key, Scope: r.scope, Prompt: q, Features: features(q), Body: []byte(`{}`)})
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	indexMiB, heapMiB := float64(c.index.Bytes())/(1<<20), float64(after.HeapAlloc-before.HeapAlloc)/(1<<20)
	queries := make([]*Lookup, 64)
	for i := range queries {
		q := *r
		q.key.Query = syntheticQuestion(rng, n+i)
		q.key.Key = fmt.Sprintf("q%d", i)
		queries[i] = &q
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		queries[i%len(queries)].find(context.Background())
	}
	b.StopTimer()
	// Reported after the loop: ResetTimer drops metrics reported before it.
	b.ReportMetric(indexMiB, "index-MiB/100k")
	b.ReportMetric(heapMiB, "heap-MiB/100k")
}

// syntheticQuestion makes varied questions from a small grammar.
func syntheticQuestion(rng *rand.Rand, i int) string {
	verbs := []string{"configure", "install", "debug", "optimise", "migrate", "secure", "monitor", "deploy", "test", "document"}
	things := []string{"a PostgreSQL replica", "the Kubernetes ingress", "my React app", "a Go web server", "the CI pipeline",
		"an S3 bucket", "the Redis cache", "a Python package", "the login page", "our data warehouse", "a cron job", "the VPN"}
	tails := []string{"on Ubuntu", "for production", "without downtime", "with Terraform", "step by step", "in under an hour",
		"for a small team", "behind a proxy", "on a laptop", "for compliance"}
	starts := []string{"How do I", "What's the best way to", "Can you explain how to", "Steps to", "Help me"}
	return fmt.Sprintf("%s %s %s %s (case %d)", starts[rng.IntN(len(starts))], verbs[rng.IntN(len(verbs))],
		things[rng.IntN(len(things))], tails[rng.IntN(len(tails))], i)
}
