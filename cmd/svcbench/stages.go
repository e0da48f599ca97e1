package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/limit"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/pricing"
	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/rediskv"
	"github.com/svc-gateway/svc/internal/wire"
)

// stagesParallelism × GOMAXPROCS goroutines run the stage (64 on 2 cores).
const stagesParallelism = 32

// runStages measures the added latency of the limit and routing stages per
// request at concurrency 64, with the in-process store and, when a Redis URL
// is given (REDIS_URL, else SVC_TEST_REDIS_URL), with Redis.
func runStages(stdout io.Writer) int {
	stores := []struct {
		name string
		kv   store.KV
	}{{"in-process", memkv.New()}}
	url := os.Getenv("REDIS_URL")
	if url == "" {
		url = os.Getenv("SVC_TEST_REDIS_URL")
	}
	if url != "" {
		b := make([]byte, 6)
		_, _ = rand.Read(b)
		kv, err := rediskv.Open(url, "svcbench:"+hex.EncodeToString(b)+":")
		if err != nil {
			fmt.Fprintln(stdout, "svcbench: redis:", err)
			return 1
		}
		defer kv.Close()
		stores = append(stores, struct {
			name string
			kv   store.KV
		}{"redis", kv})
	} else {
		fmt.Fprintln(stdout, "svcbench: set REDIS_URL to measure the stages on Redis too")
	}
	chat, err := llm.DecodeChatRequest([]byte(`{"model":"gpt-4o-mini","max_tokens":64,"messages":[{"role":"user","content":"Say hello in five words."}]}`))
	if err != nil {
		fmt.Fprintln(stdout, "svcbench:", err)
		return 1
	}
	limited := &identity.Principal{Kind: identity.VirtualKey, ID: "bench"}
	limits := limit.SourceFunc(func(context.Context, *identity.Principal) (limit.Limits, error) {
		return limit.Limits{RPM: 1 << 30, TPM: 1 << 40, MaxBudgetUSD: 1e9, BudgetPeriod: "daily"}, nil
	})
	answer := func(_ context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		x.Cost = 0.00001
		return &pipeline.Response{Status: http.StatusOK}, nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "stage\tstore\tµs/request (c=64)\tallocs/request\t\n")
	for _, s := range stores {
		h := limit.New(s.kv, pricing.Default(), limit.Options{}).Stage(limits)(answer)
		r := testing.Benchmark(func(b *testing.B) {
			b.ReportAllocs()
			b.SetParallelism(stagesParallelism)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					x := &pipeline.Exchange{Endpoint: pipeline.Chat, Chat: chat, Model: chat.Model, Principal: limited,
						Provider: "openai", UpstreamModel: "gpt-4o-mini", Header: http.Header{}}
					if _, err := h(context.Background(), x); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
		// Wall time per op across 64 goroutines is throughput; a request's
		// added latency is that times the concurrency.
		perReq := float64(r.NsPerOp()) * float64(stagesParallelism*runtimeProcs()) / 1e3
		fmt.Fprintf(tw, "limit (rpm+tpm+spend)\t%s\t%.1f\t%d\t\n", s.name, perReq, r.AllocsPerOp())
	}
	cfg, _ := config.FromSource(config.Map{"OPENAI_API_KEY": "sk-bench", "GROQ_API_KEY": "sk-bench"}, wire.Components())
	plan := &route.Config{Chains: []route.Chain{{Name: "main", Targets: []route.Target{
		{Provider: "openai", Model: "gpt-4o-mini"}, {Provider: "groq", Model: "llama-3.3-70b-versatile"}}}},
		Strategy: route.Strategy{Name: "round_robin"}}
	res := route.NewResolver(wire.Registry(cfg)).WithSources(route.Sources{Config: func() *route.Config { return plan }})
	r := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		b.SetParallelism(stagesParallelism)
		b.RunParallel(func(pb *testing.PB) {
			now := time.Now()
			for pb.Next() {
				if _, err := res.Plan("main", now); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
	fmt.Fprintf(tw, "route (plan a 2-target chain)\tnone\t%.1f\t%d\t\n", float64(r.NsPerOp())*float64(stagesParallelism*runtimeProcs())/1e3, r.AllocsPerOp())
	if err := tw.Flush(); err != nil {
		return 1
	}
	return 0
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }
