package limit

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/pricing"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
)

// testPrices prices test/model at $1 per million prompt tokens and $2 per
// million completion tokens: a request's cost in micro-dollars is
// prompt + 2×completion.
func testPrices(t testing.TB) *pricing.Table {
	t.Helper()
	tab, err := pricing.Load(strings.NewReader(`{"test/model":{"input":1,"output":2}}`))
	if err != nil {
		t.Fatalf("pricing.Load: %v", err)
	}
	return tab
}

func newMemKV(t testing.TB) store.KV {
	t.Helper()
	kv := memkv.New()
	t.Cleanup(func() { _ = kv.Close() })
	return kv
}

// quarterBytes counts a prompt at one token per four bytes of its text (of
// the whole body for other endpoints), so the tests' figures are easy to
// follow; TestTokenizerEstimate covers the default counter.
type quarterBytes struct{}

func (quarterBytes) ChatPrompt(_ string, c *llm.ChatRequest) int64 {
	n := 0
	for i := range c.Messages {
		m := &c.Messages[i]
		if m.Content.IsParts {
			for _, part := range m.Content.Parts {
				n += len(part.Text)
			}
		} else {
			n += len(m.Content.Text)
		}
		for _, tc := range m.ToolCalls {
			n += len(tc.Function.Arguments)
		}
	}
	return int64(n+3) / 4
}

func (quarterBytes) Body(_ string, b []byte) int64 { return int64(len(b)+3) / 4 }

// newTest is New with the quarterBytes counter, unless the test chose one.
func newTest(kv Store, prices *pricing.Table, opts Options) *Limiter {
	if opts.Counter == nil {
		opts.Counter = quarterBytes{}
	}
	return New(kv, prices, opts)
}

// principal is a caller with its limits, as the tests write it: the stage
// sees the identity, and the limits through testLimits.
type principal struct {
	Kind         identity.Kind
	ID           string
	RPMLimit     int
	TPMLimit     int
	BudgetPeriod string
	MaxBudgetUSD float64
}

// limitsOf maps the identities chatExchange made to their limits.
var limitsOf sync.Map // *identity.Principal → Limits

// id is the identity of p, with its limits registered for testLimits.
func (p *principal) id() *identity.Principal {
	if p == nil {
		return nil
	}
	id := &identity.Principal{Kind: p.Kind, ID: p.ID}
	limitsOf.Store(id, Limits{RPM: int64(p.RPMLimit), TPM: int64(p.TPMLimit), MaxBudgetUSD: p.MaxBudgetUSD, BudgetPeriod: p.BudgetPeriod})
	return id
}

// testLimits is the Source of the tests: the limits of the principal an
// identity was made from.
var testLimits = SourceFunc(func(_ context.Context, p *identity.Principal) (Limits, error) {
	l, _ := limitsOf.Load(p)
	lim, _ := l.(Limits)
	return lim, nil
})

// chatExchange is a chat request whose estimate is prompt tokens (4 bytes
// each) plus maxTokens completion tokens.
func chatExchange(p *principal, prompt, maxTokens int) *pipeline.Exchange {
	req := &llm.ChatRequest{
		Model:    "model",
		Messages: []llm.Message{{Role: "user", Content: llm.TextContent(strings.Repeat("abcd", prompt))}},
	}
	if maxTokens > 0 {
		req.MaxTokens = &maxTokens
	}
	return &pipeline.Exchange{
		Endpoint: pipeline.Chat, Chat: req, Model: "model", Principal: p.id(),
		Provider: "test", UpstreamModel: "model",
	}
}

// answer is a terminal handler that reports usage and cost as the proxy's
// provider call does.
func answer(prompt, completion int64) pipeline.Handler {
	return func(_ context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		x.Usage = llm.Usage{PromptTokens: prompt, CompletionTokens: completion}
		x.Cost = float64(prompt+2*completion) / 1e6
		return &pipeline.Response{Status: http.StatusOK, Body: []byte(`{}`)}, nil
	}
}

func vkey(id string) *principal {
	return &principal{Kind: identity.VirtualKey, ID: id}
}

// wantRefusal checks err is an *apierr.Error of kind with code, and returns it.
func wantRefusal(t *testing.T, err error, kind apierr.Kind, code string) *apierr.Error {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want %s (%d)", code, kind.Status())
	}
	e := apierr.From(err)
	if e.Kind != kind || e.Code != code {
		t.Fatalf("got error %v (status %d, code %q), want status %d, code %q", err, e.Status(), e.Code, kind.Status(), code)
	}
	return e
}

// clock is an injectable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

// countingKV counts the calls made to a store.KV.
type countingKV struct {
	store.KV
	calls atomic.Int64
}

func (c *countingKV) Get(ctx context.Context, key string) ([]byte, error) {
	c.calls.Add(1)
	return c.KV.Get(ctx, key)
}

func (c *countingKV) IncrBy(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error) {
	c.calls.Add(1)
	return c.KV.IncrBy(ctx, key, delta, ttl)
}

func (c *countingKV) Window(ctx context.Context, key string, window time.Duration, limit, cost int64) (store.WindowResult, error) {
	c.calls.Add(1)
	return c.KV.Window(ctx, key, window, limit, cost)
}

func (c *countingKV) Admit(ctx context.Context, req store.AdmitRequest) (store.AdmitResult, error) {
	c.calls.Add(1)
	return c.KV.Admit(ctx, req)
}

func (c *countingKV) Settle(ctx context.Context, req store.SettleRequest) (store.SettleResult, error) {
	c.calls.Add(1)
	return c.KV.Settle(ctx, req)
}

func (c *countingKV) Reserve(ctx context.Context, key string, amount, cap int64, ttl time.Duration) (bool, int64, error) {
	c.calls.Add(1)
	return c.KV.Reserve(ctx, key, amount, cap, ttl)
}

func near(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }

func itoa(n int) string { return strconv.Itoa(n) }
