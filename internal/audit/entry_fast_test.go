package audit

import (
	"encoding/json"
	"testing"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// fastSeeds are entries as this version writes them (which the fast path
// must decide) and odd ones (which it may leave to the general decoder).
func fastSeeds(t testing.TB) (written, odd []string) {
	start := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	x := &pipeline.Exchange{
		ID: "0193a1b2-c3d4-7e5f-8a9b-100000000001", Start: start, End: start.Add(42 * time.Millisecond),
		Endpoint: pipeline.Chat, Model: "gpt-4o-mini", Provider: "openai", UpstreamModel: "gpt-4o-mini",
		RoutingStrategy: "direct", RoutingReason: "provider:openai", Status: 200,
		Usage: llm.Usage{PromptTokens: 25, CompletionTokens: 12, TotalTokens: 37}, Cost: 0.0000109,
		Principal: &identity.Principal{Kind: identity.VirtualKey, ID: "vk_01HZX3", MaskedKey: "sk-svc-ab12…"},
		Chat:      &llm.ChatRequest{User: "Zoë", Messages: []llm.Message{{Role: "user"}}},
		Cache:     &pipeline.CacheHit{Query: "q", TokensSaved: 120, CostSaved: 0.0042},
	}
	plain := *x
	plain.Principal, plain.Chat, plain.Cache, plain.Status = nil, nil, nil, 429
	for _, e := range []*Entry{FromExchange(x, 40*time.Millisecond), FromExchange(&plain, 0)} {
		written = append(written, string(e.AppendJSON(nil)))
		js, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		written = append(written, string(js))
	}
	odd = []string{
		`{"request_id":"r1","timestamp":"2026-01-02T03:04:05Z"}`,
		`{"Request_ID":"r2","timestamp":"2026-01-02T03:04:05Z"}`,
		`{"request_id":"a","request_id":"r3","timestamp":"2026-01-02T03:04:05Z"}`,
		"{\"request_id\":\"r4\",\"timestamp\":\"2026-01-02T03:04:05Z\",\"user_id\":\"a\xffb\"}",
		`{"request\u005fid":"r5","timestamp":"2026-01-02T03:04:05Z"}`,
		`{"request_id":"r6","timestamp":"2026-01-02T03:04:05Z","model":null,"metacache":null}`,
		`{"request_id":"r8","timestamp":"2026-01-02T03:04:05Z","tokens_used":1e30,"cost":-0.5e-3}`,
		`{"request_id":"r9","timestamp":"2026-01-02T03:04:05Z","status":200.5}`,
		` {"request_id":"r10","timestamp":"2026-01-02T03:04:05Z","x":[1,{"status":[true,null,"s"]}],"metrics":{"success":true,"custom_metrics":{"api_key":"k","o":{}}}} `,
		`{"request_id":"r11","timestamp":"2026-01-02T03:04:05Z","requestid":"x"}`,
		`{"request_id":"r12","timestamp":"2026-01-02T03:04:05Z"} x`,
		`{"request_id":"r13","timestamp":"2026-01-02T03:04:05Z","latency_ms":-0,"status":01}`,
		// Names the general decoder folds to columns by Unicode (ſ is s).
		`{"request_id":"r14","timestamp":"2026-01-02T03:04:05Z","ſtatus":500}`,
		`{"request_id":"r15","timestamp":"2026-01-02T03:04:05Z","metrics":{"ſuccess":true}}`,
	}
	return written, odd
}

// TestColumnsFastDecidesWrittenEntries checks that the fast path decodes
// the entries this version writes (else the bridge pays the general
// decoder for each), as the general decoder does.
func TestColumnsFastDecidesWrittenEntries(t *testing.T) {
	written, _ := fastSeeds(t)
	for _, js := range written {
		got, ok := columnsFast([]byte(js))
		if !ok {
			t.Errorf("the fast path left to the general decoder an entry this version writes: %s", js)
			continue
		}
		var want columns
		if err := jsonv2.Unmarshal([]byte(js), &want, columnsJSON); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("fast path (-general +fast):\n%s", diff)
		}
	}
}

// FuzzColumnsFast checks that whatever the fast path decides, the general
// decoder decodes to the same columns (never an error).
func FuzzColumnsFast(f *testing.F) {
	written, odd := fastSeeds(f)
	for _, js := range append(written, odd...) {
		f.Add([]byte(js))
	}
	f.Fuzz(func(t *testing.T, js []byte) {
		got, ok := columnsFast(js)
		if !ok {
			return
		}
		var want columns
		if err := jsonv2.Unmarshal(js, &want, columnsJSON); err != nil {
			t.Fatalf("the fast path decided %q, which the general decoder refuses: %v", js, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%q (-general +fast):\n%s", js, diff)
		}
	})
}
