package limit

import (
	"context"
	"os"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// BenchmarkStage measures the stage's added cost per request at RunParallel
// (GOMAXPROCS goroutines; run with -cpu 64 for concurrency 64): a principal
// without limits (no store call), and one with rpm, tpm and a spend cap (one
// Admit before the call, one Settle after it) on memkv and, when SVC_TEST_REDIS_URL
// is set, on Redis. Requests are spread over 256 keys and never refused; the
// terminal handler only sets usage and cost (one small allocation).
func BenchmarkStage(b *testing.B) {
	kvs := []struct {
		name string
		kv   func(b *testing.B) store.KV
	}{
		{"memkv", func(b *testing.B) store.KV { return newMemKV(b) }},
	}
	if os.Getenv(storetest.RedisURLEnv) != "" {
		kvs = append(kvs, struct {
			name string
			kv   func(b *testing.B) store.KV
		}{"redis", func(b *testing.B) store.KV { return storetest.RedisKV(b) }})
	}
	b.Run("baseline-handler-only", func(b *testing.B) {
		h := answer(1000, 250)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			x := chatExchange(&principal{Kind: identity.VirtualKey, ID: "k"}, 1000, 1000)
			for pb.Next() {
				if _, err := h(context.Background(), x); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	for _, k := range kvs {
		b.Run(k.name+"/no-limits", func(b *testing.B) {
			benchStage(b, k.kv(b), func(id string) *principal { return &principal{Kind: identity.VirtualKey, ID: id} })
		})
		b.Run(k.name+"/rpm+tpm+spend", func(b *testing.B) {
			benchStage(b, k.kv(b), func(id string) *principal {
				return &principal{Kind: identity.VirtualKey, ID: id, RPMLimit: 1 << 30, TPMLimit: 1 << 40, MaxBudgetUSD: 1e6}
			})
		})
	}
}

func benchStage(b *testing.B, kv store.KV, principalOf func(id string) *principal) {
	l := newTest(kv, testPrices(b), Options{})
	h := pipeline.Chain(answer(1000, 250), l.Stage(testLimits))
	ps := make([]*identity.Principal, 256)
	for i := range ps {
		ps[i] = principalOf("bench-" + strconv.Itoa(i)).id()
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		x := chatExchange(nil, 1000, 1000)
		for pb.Next() {
			// A fresh exchange: the settlement reads it after the call.
			y := *x
			y.Principal = ps[next.Add(1)%int64(len(ps))]
			y.Header, y.Usage, y.Cost = nil, llm.Usage{}, 0
			if _, err := h(ctx, &y); err != nil {
				b.Errorf("request: %v", err)
				return
			}
		}
	})
	l.Settled() // the settlements are part of each request's cost
}
