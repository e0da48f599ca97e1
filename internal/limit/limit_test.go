package limit

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/pricing"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
	"github.com/svc-gateway/svc/internal/tokens"
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

func TestRequestLimits(t *testing.T) {
	tests := []struct {
		name    string
		p       *principal
		hourly  int64
		limit   int
		message string
	}{
		{"rpm", &principal{Kind: identity.VirtualKey, ID: "k", RPMLimit: 3}, 0, 3, "3 requests per minute"},
		{"hourly", vkey("k"), 2, 2, "2 requests per hour"},
		{"hourly tighter than rpm", &principal{Kind: identity.VirtualKey, ID: "k", RPMLimit: 10}, 2, 2, "2 requests per hour"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newTest(newMemKV(t), testPrices(t), Options{HourlyRequests: tt.hourly})
			h := pipeline.Chain(answer(10, 10), l.Stage(testLimits))
			for i := range tt.limit {
				x := chatExchange(tt.p, 10, 0)
				if _, err := h(t.Context(), x); err != nil {
					t.Fatalf("request %d: %v", i+1, err)
				}
				if got, want := x.Header.Get(HeaderRemainingRequests), itoa(tt.limit-i-1); got != want {
					t.Errorf("request %d: %s = %q, want %q", i+1, HeaderRemainingRequests, got, want)
				}
				if got, want := x.Header.Get(HeaderLimitRequests), itoa(tt.limit); got != want {
					t.Errorf("request %d: %s = %q, want %q", i+1, HeaderLimitRequests, got, want)
				}
				if got := x.Header.Get(HeaderResetRequests); got == "" || got == "0s" {
					t.Errorf("request %d: %s = %q, want a duration", i+1, HeaderResetRequests, got)
				}
			}
			x := chatExchange(tt.p, 10, 0)
			_, err := h(t.Context(), x)
			e := wantRefusal(t, err, apierr.RateLimited, "rate_limit_exceeded")
			if e.Status() != http.StatusTooManyRequests {
				t.Errorf("status = %d, want 429", e.Status())
			}
			if e.RetryAfter <= 0 {
				t.Errorf("RetryAfter = %v, want > 0", e.RetryAfter)
			}
			if !strings.Contains(e.Message, tt.message) {
				t.Errorf("message %q does not name the limit %q", e.Message, tt.message)
			}
			hdr := http.Header{}
			e.SetHeaders(hdr)
			want := map[string]string{HeaderLimitRequests: itoa(tt.limit), HeaderRemainingRequests: "0"}
			for k, v := range want {
				if got := hdr.Get(k); got != v {
					t.Errorf("refusal header %s = %q, want %q", k, got, v)
				}
			}
			if hdr.Get(HeaderResetRequests) == "" || hdr.Get("Retry-After") == "" {
				t.Errorf("refusal headers %v: want %s and Retry-After", hdr, HeaderResetRequests)
			}
		})
	}
}

func TestHourlyOnlyForVirtualKeys(t *testing.T) {
	kv := &countingKV{KV: newMemKV(t)}
	l := newTest(kv, testPrices(t), Options{HourlyRequests: 1})
	h := pipeline.Chain(answer(1, 1), l.Stage(testLimits))
	user := &principal{Kind: identity.User, ID: "u"}
	for range 3 {
		if _, err := h(t.Context(), chatExchange(user, 1, 0)); err != nil {
			t.Fatalf("user request: %v", err)
		}
	}
	if n := kv.calls.Load(); n != 0 {
		t.Errorf("hourly cap on an SSO user: %d store calls, want 0", n)
	}
}

func TestTokenLimit(t *testing.T) {
	kv := newMemKV(t)
	l := newTest(kv, testPrices(t), Options{})
	p := &principal{Kind: identity.VirtualKey, ID: "k", TPMLimit: 3000}
	// Estimate 1000+1000 = 2000 tokens; the call uses 2500, so 500 more count.
	x := chatExchange(p, 1000, 1000)
	if _, err := pipeline.Chain(answer(1000, 1500), l.Stage(testLimits))(t.Context(), x); err != nil {
		t.Fatalf("first request: %v", err)
	}
	if got := x.Header.Get(HeaderRemainingTokens); got != "1000" {
		t.Errorf("%s after the first request = %q, want %q (the estimate counted)", HeaderRemainingTokens, got, "1000")
	}
	if got := x.Header.Get(HeaderLimitTokens); got != "3000" {
		t.Errorf("%s = %q, want 3000", HeaderLimitTokens, got)
	}
	l.Settled()
	r, err := kv.Window(t.Context(), windowKey(vkey("k").id(), "tpm"), time.Minute, 3000, 0)
	if err != nil || r.Used != 2500 {
		t.Fatalf("tpm window after a call using 2500 tokens: got %+v, %v, want 2500 used", r, err)
	}
	// 2500 + 600 > 3000: refused, and not counted.
	_, err = pipeline.Chain(answer(1, 1), l.Stage(testLimits))(t.Context(), chatExchange(p, 600, 0))
	e := wantRefusal(t, err, apierr.RateLimited, "rate_limit_exceeded")
	hdr := http.Header{}
	e.SetHeaders(hdr)
	if hdr.Get(HeaderLimitTokens) != "3000" || hdr.Get(HeaderRemainingTokens) != "500" || hdr.Get(HeaderResetTokens) == "" {
		t.Errorf("refusal headers = %v, want tokens limit 3000, remaining 500 and a reset", hdr)
	}
	// 2500 + 500 fits exactly; the over-estimate is given back: 100 used.
	if _, err := pipeline.Chain(answer(100, 0), l.Stage(testLimits))(t.Context(), chatExchange(p, 500, 0)); err != nil {
		t.Fatalf("request filling the window: %v", err)
	}
	l.Settled()
	if r, _ := kv.Window(t.Context(), windowKey(vkey("k").id(), "tpm"), time.Minute, 3000, 0); r.Used != 2600 {
		t.Errorf("tpm window = %d, want 2600 (2500 + the 100 used)", r.Used)
	}
}

// TestTokensSettleExactly checks that the tpm window ends at the actual
// usage whichever way the estimate missed, on both stores.
func TestTokensSettleExactly(t *testing.T) {
	stores := map[string]func(t *testing.T) store.KV{
		"memory": func(t *testing.T) store.KV { return newMemKV(t) },
		"redis":  func(t *testing.T) store.KV { return storetest.RedisKV(t) },
	}
	tests := []struct {
		name              string
		prompt, maxTokens int   // estimate: prompt + maxTokens
		used              int64 // actual total
		fail              bool  // the call fails without usage
	}{
		{"estimated 1000, used 100", 500, 500, 100, false},
		{"estimated 1000, used 1800", 500, 500, 1800, false},
		{"estimated 1000, exact", 500, 500, 1000, false},
		{"estimated 0, used 40", 0, 0, 40, false},
		{"failed call", 500, 500, 0, true},
	}
	for sname, open := range stores {
		for _, tt := range tests {
			t.Run(sname+"/"+tt.name, func(t *testing.T) {
				kv := open(t)
				l := newTest(kv, testPrices(t), Options{})
				p := &principal{Kind: identity.VirtualKey, ID: "k", TPMLimit: 100000}
				next := answer(tt.used/2, tt.used-tt.used/2)
				if tt.fail {
					next = func(context.Context, *pipeline.Exchange) (*pipeline.Response, error) {
						return nil, apierr.New(apierr.UpstreamError, "upstream_error", "upstream failed")
					}
				}
				x := chatExchange(p, tt.prompt, tt.maxTokens)
				_, _ = pipeline.Chain(next, l.Stage(testLimits))(t.Context(), x)
				l.Settled()
				r, err := kv.Window(t.Context(), windowKey(p.id(), "tpm"), time.Minute, 100000, 0)
				if err != nil || r.Used != tt.used {
					t.Errorf("tpm window after the call = %+v, %v, want %d used", r, err, tt.used)
				}
			})
		}
	}
}

func TestEstimate(t *testing.T) {
	mt, mct := 100, 50
	tests := []struct {
		name string
		x    *pipeline.Exchange
		want estimated
	}{
		{"chat", chatExchange(nil, 10, 0), estimated{10, 0}},
		{"chat max_tokens", chatExchange(nil, 10, 7), estimated{10, 7}},
		{"chat max_completion_tokens wins", &pipeline.Exchange{Chat: &llm.ChatRequest{
			MaxTokens: &mt, MaxCompletionTokens: &mct,
			Messages: []llm.Message{{Role: "user", Content: llm.Content{IsParts: true, Present: true, Parts: []llm.Part{{Type: "text", Text: "12345678"}, {Type: "image_url"}}}}},
		}}, estimated{2, 50}},
		{"body", &pipeline.Exchange{Body: []byte(`{"input":"abcdefgh","max_tokens":9}`)}, estimated{9, 9}},
		{"not json", &pipeline.Exchange{Body: []byte("--boundary\r\nContent-Disposition: form-data")}, estimated{0, 0}},
	}
	l := newTest(nil, nil, Options{})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := l.estimate(tt.x); got != tt.want {
				t.Errorf("estimate = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestTokenizerEstimate: by default the prompt is counted with OpenAI's
// tokenizer for OpenAI models, and from above for others, never at a
// quarter of the bytes (which let a provider billing four times more
// overshoot a cap by 28%).
func TestTokenizerEstimate(t *testing.T) {
	l := New(nil, nil, Options{})
	text := strings.Repeat("数据 🙂 x=42; ", 200) // 2,800 bytes: CJK, emoji, code
	chat := func(model string) *pipeline.Exchange {
		return &pipeline.Exchange{UpstreamModel: model, Chat: &llm.ChatRequest{Model: model,
			Messages: []llm.Message{{Role: "user", Content: llm.TextContent(text)}}}}
	}
	quarter := int64(len(text)) / 4
	openai, other := l.estimate(chat("gpt-4o-mini")), l.estimate(chat("claude-sonnet-4-5"))
	if want := tokens.ChatPrompt("gpt-4o-mini", chat("gpt-4o-mini").Chat); openai.prompt != want {
		t.Errorf("gpt-4o-mini prompt estimate = %d, want the tokenizer's %d", openai.prompt, want)
	}
	if openai.prompt <= quarter || other.prompt < openai.prompt {
		t.Errorf("estimates: openai %d, other %d; want both above a quarter of the bytes (%d), the other model's bound at least OpenAI's count",
			openai.prompt, other.prompt, quarter)
	}
	body := &pipeline.Exchange{Model: "text-embedding-3-small", Body: []byte(`{"model":"text-embedding-3-small","input":"` + text + `"}`)}
	if got := l.estimate(body).prompt; got != tokens.Body("text-embedding-3-small", body.Body) {
		t.Errorf("body estimate = %d, want the tokenizer's", got)
	}
}

// clock is an injectable clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time  { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.now = t }

func TestSpendReserveAndSettle(t *testing.T) {
	tests := []struct {
		name          string
		period        string
		before, after time.Time // across the period boundary
	}{
		{"daily", "daily", time.Date(2026, 3, 10, 23, 59, 50, 0, time.UTC), time.Date(2026, 3, 11, 0, 0, 5, 0, time.UTC)},
		{"monthly", "monthly", time.Date(2026, 1, 31, 23, 59, 59, 0, time.UTC), time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)},
		{"weekly", "weekly", time.Date(2026, 3, 15, 23, 0, 0, 0, time.UTC), time.Date(2026, 3, 16, 0, 0, 0, 0, time.UTC)}, // Sunday → Monday
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv := newMemKV(t)
			clk := &clock{now: tt.before}
			var events []BudgetEvent
			l := newTest(kv, testPrices(t), Options{Now: clk.Now, OnBudget: func(ev BudgetEvent) { events = append(events, ev) }})
			// Cap: 5000 µ$. Each request: estimate 1000 prompt + 1000
			// completion = 3000 µ$; actual 1000 + 2×250 = 1500 µ$.
			p := &principal{Kind: identity.VirtualKey, ID: "k", BudgetPeriod: tt.period, MaxBudgetUSD: 0.005}
			spend := func() float64 {
				t.Helper()
				s, err := l.Spend(t.Context(), "k", tt.period, p.MaxBudgetUSD)
				if err != nil {
					t.Fatalf("Spend: %v", err)
				}
				return s
			}
			var inFlight float64
			h := pipeline.Chain(func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
				inFlight = spend()
				return answer(1000, 250)(ctx, x)
			}, l.Stage(testLimits))
			call := func() error {
				_, err := h(t.Context(), chatExchange(p, 1000, 1000))
				return err
			}
			if err := call(); err != nil {
				t.Fatalf("first request: %v", err)
			}
			if !near(inFlight, 0.003) || !near(spend(), 0.0015) {
				t.Errorf("spend during/after the first request = %v/%v, want 0.003 (reserved) / 0.0015 (settled)", inFlight, spend())
			}
			if err := call(); err != nil {
				t.Fatalf("second request: %v", err)
			}
			if !near(inFlight, 0.0045) || !near(spend(), 0.003) {
				t.Errorf("spend during/after the second request = %v/%v, want 0.0045/0.003", inFlight, spend())
			}
			// 3000 + 3000 > 5000: refused with 402, nothing reserved.
			e := wantRefusal(t, call(), apierr.BudgetExceeded, "budget_exceeded")
			if e.Status() != http.StatusPaymentRequired || !strings.Contains(e.Message, tt.period) || !strings.Contains(e.Message, "$0.005") {
				t.Errorf("refusal: status %d, message %q; want 402 naming the %s period and the cap $0.005", e.Status(), e.Message, tt.period)
			}
			if !near(spend(), 0.003) {
				t.Errorf("spend after a refusal = %v, want 0.003", spend())
			}
			// The second request's reservation (1500 + 3000) passed 80 %
			// of the cap: one warning, and no cap event.
			if len(events) != 1 || events[0].Level != 80 || !near(events[0].SpentUSD, 0.0045) {
				t.Errorf("budget events before the cap was reached: %+v, want one at 80 %%", events)
			}
			// The period turns: a fresh counter.
			clk.Set(tt.after)
			if s := spend(); s != 0 {
				t.Errorf("spend in the new period = %v, want 0", s)
			}
			if err := call(); err != nil {
				t.Fatalf("request in the new period: %v", err)
			}
			if !near(spend(), 0.0015) {
				t.Errorf("spend in the new period after one request = %v, want 0.0015", spend())
			}
			// A request reserved in one period settles in that period's
			// counter even when it ends in the next.
			p2 := *p
			p2.ID = "k2"
			clk.Set(tt.before)
			_, err := pipeline.Chain(func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
				clk.Set(tt.after)
				return answer(1000, 250)(ctx, x)
			}, l.Stage(testLimits))(t.Context(), chatExchange(&p2, 1000, 1000))
			if err != nil {
				t.Fatalf("request across the boundary: %v", err)
			}
			if s, err := l.Spend(t.Context(), "k2", tt.period, 1); err != nil || s != 0 {
				t.Errorf("new period's spend after a request reserved in the old one = %v, %v, want 0", s, err)
			}
			clk.Set(tt.before)
			if s, err := l.Spend(t.Context(), "k2", tt.period, 1); err != nil || !near(s, 0.0015) {
				t.Errorf("old period's spend after a request reserved in it = %v, %v, want 0.0015", s, err)
			}
		})
	}
}

func TestSpendErrorsAndEvents(t *testing.T) {
	kv := newMemKV(t)
	var (
		mu     sync.Mutex
		events []BudgetEvent
	)
	l := newTest(kv, testPrices(t), Options{OnBudget: func(ev BudgetEvent) {
		// Raised at admission and by settlements, which run on their own goroutines.
		mu.Lock()
		defer mu.Unlock()
		events = append(events, ev)
	}})
	p := &principal{Kind: identity.VirtualKey, ID: "k", BudgetPeriod: "daily", MaxBudgetUSD: 0.005}
	spend := func() float64 {
		s, err := l.Spend(t.Context(), "k", "daily", p.MaxBudgetUSD)
		if err != nil {
			t.Fatalf("Spend: %v", err)
		}
		return s
	}
	// A call failing before any answer gives its reservation back.
	boom := apierr.New(apierr.UpstreamError, "upstream_error", "boom")
	_, err := pipeline.Chain(func(context.Context, *pipeline.Exchange) (*pipeline.Response, error) { return nil, boom }, l.Stage(testLimits))(t.Context(), chatExchange(p, 1000, 1000))
	if !errors.Is(err, boom) {
		t.Fatalf("failing call: got %v, want the handler's error", err)
	}
	if s := spend(); s != 0 {
		t.Errorf("spend after a failed call = %v, want 0", s)
	}
	// Actual cost above the estimate (max_tokens 1, 1000 answered): settled
	// in full, and the cap's crossing raises one event: 3000, then
	// 3000+1002 reserved and settled to 6000.
	for i := range 2 {
		_, err := pipeline.Chain(answer(1000, 1000), l.Stage(testLimits))(t.Context(), chatExchange(p, 1000, 1))
		if err != nil {
			t.Fatalf("request %d: %v", i+1, err)
		}
	}
	if !near(spend(), 0.006) {
		t.Errorf("spend = %v, want 0.006 (settled above the estimate)", spend())
	}
	// 80 % (4000 µ$) is passed by the second reservation (3000 + 1002),
	// the cap by its settlement (6000): one event each.
	want := []BudgetEvent{{KeyID: "k", Period: "daily", CapUSD: 0.005, SpentUSD: 0.004002, Level: 80},
		{KeyID: "k", Period: "daily", CapUSD: 0.005, SpentUSD: 0.006, Level: 100}}
	l.Settled()
	mu.Lock()
	got := slices.Clone(events)
	mu.Unlock()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("budget events (-want +got):\n%s", diff)
	}
	// Over the cap, even a request estimated at 0 (an unpriced model) is refused.
	x := chatExchange(p, 10, 0)
	x.Provider = "unpriced"
	_, err = pipeline.Chain(answer(1, 1), l.Stage(testLimits))(t.Context(), x)
	wantRefusal(t, err, apierr.BudgetExceeded, "budget_exceeded")
	l.Settled()
	mu.Lock()
	n := len(events)
	mu.Unlock()
	if n != 2 {
		t.Errorf("budget events after more requests = %d, want still 2", n)
	}
	if _, err := l.Spend(t.Context(), "k", "daily", 0); !errors.Is(err, ErrNotMetered) {
		t.Errorf("Spend without a cap: got %v, want ErrNotMetered", err)
	}
}

// sliceStream is an llm.Stream of fixed events.
type sliceStream struct {
	evs []sse.Event
	i   int
}

func (s *sliceStream) Next() (sse.Event, error) {
	if s.i >= len(s.evs) {
		return sse.Event{}, io.EOF
	}
	s.i++
	return s.evs[s.i-1], nil
}

func (s *sliceStream) Close() error { return nil }

// streamAnswer answers with a stream that sets usage and cost at its end,
// as the proxy's provider call does.
func streamAnswer(prompt, completion int64) pipeline.Handler {
	return func(_ context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		s := pipeline.Observe(&sliceStream{evs: []sse.Event{{Data: []byte("1")}, {Data: []byte("2")}}}, nil, func(error) {
			x.Usage = llm.Usage{PromptTokens: prompt, CompletionTokens: completion}
			x.Cost = float64(prompt+2*completion) / 1e6
		})
		return &pipeline.Response{Status: http.StatusOK, Stream: s}, nil
	}
}

func TestStreamsSettleAtTheEnd(t *testing.T) {
	for _, drain := range []bool{true, false} {
		name := map[bool]string{true: "drained", false: "abandoned"}[drain]
		t.Run(name, func(t *testing.T) {
			kv := newMemKV(t)
			l := newTest(kv, testPrices(t), Options{})
			p := &principal{Kind: identity.VirtualKey, ID: "k", TPMLimit: 100000, MaxBudgetUSD: 1}
			resp, err := pipeline.Chain(streamAnswer(1000, 1500), l.Stage(testLimits))(t.Context(), chatExchange(p, 1000, 1000))
			if err != nil {
				t.Fatalf("stage: %v", err)
			}
			spend := func() float64 {
				s, err := l.Spend(t.Context(), "k", "", 1)
				if err != nil {
					t.Fatalf("Spend: %v", err)
				}
				return s
			}
			if !near(spend(), 0.003) {
				t.Errorf("spend while the stream is open = %v, want 0.003 (the reservation)", spend())
			}
			if drain {
				for {
					if _, err := resp.Stream.Next(); err != nil {
						break
					}
				}
			} else if _, err := resp.Stream.Next(); err != nil {
				t.Fatalf("Next: %v", err)
			}
			_ = resp.Stream.Close()
			if !near(spend(), 0.004) {
				t.Errorf("spend after the stream ended = %v, want 0.004 (settled)", spend())
			}
			l.Settled()
			r, err := kv.Window(t.Context(), windowKey(vkey("k").id(), "tpm"), time.Minute, 100000, 0)
			if err != nil || r.Used != 2500 {
				t.Errorf("tpm window after the stream = %+v, %v, want 2500 used", r, err)
			}
		})
	}
}

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

func TestNoLimitsNoStoreCall(t *testing.T) {
	kv := &countingKV{KV: newMemKV(t)}
	l := newTest(kv, testPrices(t), Options{})
	h := pipeline.Chain(answer(1, 1), l.Stage(testLimits))
	for _, p := range []*principal{nil, vkey("k"), {Kind: identity.Admin, ID: "admin"}} {
		x := chatExchange(p, 10, 10)
		if _, err := h(t.Context(), x); err != nil {
			t.Fatalf("request: %v", err)
		}
		if len(x.Header) != 0 {
			t.Errorf("headers without limits: %v, want none", x.Header)
		}
	}
	if n := kv.calls.Load(); n != 0 {
		t.Errorf("store calls for principals without limits: %d, want 0", n)
	}
	// With a limit, the store is used.
	if _, err := h(t.Context(), chatExchange(&principal{Kind: identity.VirtualKey, ID: "k", RPMLimit: 5}, 1, 0)); err != nil {
		t.Fatalf("request: %v", err)
	}
	if kv.calls.Load() == 0 {
		t.Errorf("no store call for a principal with an rpm limit")
	}
}

func TestStoreDown(t *testing.T) {
	kv := memkv.New()
	_ = kv.Close() // every call now fails
	l := newTest(kv, testPrices(t), Options{HourlyRequests: 10, Log: slog.New(slog.DiscardHandler)})
	h := pipeline.Chain(answer(1, 1), l.Stage(testLimits))
	// Rate limits fail open.
	rate := &principal{Kind: identity.VirtualKey, ID: "k", RPMLimit: 1, TPMLimit: 1}
	for range 3 {
		if _, err := h(t.Context(), chatExchange(rate, 10, 0)); err != nil {
			t.Fatalf("rate-limited request with the store down: got %v, want it to pass (fail open)", err)
		}
	}
	// Spend caps fail closed.
	capped := &principal{Kind: identity.VirtualKey, ID: "k", MaxBudgetUSD: 10}
	_, err := h(t.Context(), chatExchange(capped, 10, 0))
	e := wantRefusal(t, err, apierr.Unavailable, "limits_store_unavailable")
	if e.Status() != http.StatusServiceUnavailable || e.Message != "limits store unavailable" {
		t.Errorf("got status %d, message %q, want 503 %q", e.Status(), e.Message, "limits store unavailable")
	}
}

// TestConcurrentRedis drives 64 goroutines through the stage on Redis: no
// window admits more than its limit, and the spend cap is never overshot by
// more than one request's estimate.
func TestConcurrentRedis(t *testing.T) {
	const workers, each = 64, 8
	t.Run("rpm", func(t *testing.T) {
		l := newTest(storetest.RedisKV(t), testPrices(t), Options{})
		p := &principal{Kind: identity.VirtualKey, ID: "k", RPMLimit: 100}
		h := pipeline.Chain(answer(1, 1), l.Stage(testLimits))
		var admitted, refused atomic.Int64
		var wg sync.WaitGroup
		for range workers {
			wg.Go(func() {
				for range each {
					_, err := h(context.Background(), chatExchange(p, 1, 0))
					switch {
					case err == nil:
						admitted.Add(1)
					case apierr.KindOf(err) == apierr.RateLimited:
						refused.Add(1)
					default:
						t.Errorf("request: %v", err)
					}
				}
			})
		}
		wg.Wait()
		if admitted.Load() != 100 || refused.Load() != workers*each-100 {
			t.Errorf("admitted %d, refused %d of %d requests with rpm 100: want exactly 100 admitted", admitted.Load(), refused.Load(), workers*each)
		}
	})
	t.Run("spend", func(t *testing.T) {
		l := newTest(storetest.RedisKV(t), testPrices(t), Options{})
		// Estimate 3000 µ$ per request; actual cost 1000–3000 µ$.
		const capUSD, estimate = 0.2, 3000
		p := &principal{Kind: identity.VirtualKey, ID: "k", MaxBudgetUSD: capUSD}
		var (
			wg       sync.WaitGroup
			admitted atomic.Int64
			spent    atomic.Int64 // µ$, the sum of the admitted requests' actual costs
			n        atomic.Int64
		)
		for range workers {
			wg.Go(func() {
				for range each {
					completion := 250 * (n.Add(1) % 5) // 0..1000
					h := pipeline.Chain(func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
						time.Sleep(time.Millisecond) // keep requests in flight together
						return answer(1000, completion)(ctx, x)
					}, l.Stage(testLimits))
					_, err := h(context.Background(), chatExchange(p, 1000, 1000))
					switch {
					case err == nil:
						admitted.Add(1)
						spent.Add(1000 + 2*completion)
					case apierr.KindOf(err) == apierr.BudgetExceeded:
					default:
						t.Errorf("request: %v", err)
					}
				}
			})
		}
		wg.Wait()
		got, err := l.Spend(context.Background(), "k", "", capUSD)
		if err != nil {
			t.Fatalf("Spend: %v", err)
		}
		if want := usd(spent.Load()); !near(got, want) {
			t.Errorf("Spend after %d admitted requests = %v, want %v (the sum of their costs)", admitted.Load(), got, want)
		}
		if got > capUSD+usd(estimate) {
			t.Errorf("Spend = %v, over the cap %v by more than one estimate (%v)", got, capUSD, usd(estimate))
		}
		if admitted.Load() >= workers*each {
			t.Errorf("every request was admitted: the cap never bit (admitted %d)", admitted.Load())
		}
	})
}

func near(a, b float64) bool { d := a - b; return d < 1e-9 && d > -1e-9 }

func itoa(n int) string { return strconv.Itoa(n) }

func TestRawSettlesAtTheEnd(t *testing.T) {
	l := newTest(newMemKV(t), testPrices(t), Options{})
	p := &principal{Kind: identity.VirtualKey, ID: "k", MaxBudgetUSD: 1}
	x := &pipeline.Exchange{Endpoint: pipeline.Speech, Principal: p.id(), Provider: "test", UpstreamModel: "model",
		Body: []byte(`{"input":"` + strings.Repeat("abcd", 999) + `","x":1}`)} // 4014 bytes: 1004 tokens
	resp, err := pipeline.Chain(func(_ context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		raw := pipeline.ObserveReader(io.NopCloser(strings.NewReader("audio")), func(error) { x.Cost = 0.0001 })
		return &pipeline.Response{Status: http.StatusOK, Raw: raw}, nil
	}, l.Stage(testLimits))(t.Context(), x)
	if err != nil {
		t.Fatalf("stage: %v", err)
	}
	// The reservation: 1004 prompt tokens at $1/M and, with no max_tokens,
	// DefaultCompletionReserve completion tokens at $2/M.
	if s, _ := l.Spend(t.Context(), "k", "", 1); !near(s, 0.001004+DefaultCompletionReserve*2e-6) {
		t.Errorf("spend while the body is open = %v, want %v (the reservation)", s, 0.001004+DefaultCompletionReserve*2e-6)
	}
	if _, err := io.ReadAll(resp.Raw); err != nil {
		t.Fatalf("read: %v", err)
	}
	if s, _ := l.Spend(t.Context(), "k", "", 1); !near(s, 0.0001) {
		t.Errorf("spend after the body ended = %v, want 0.0001 (settled)", s)
	}
}

// TestPanicSettles checks that a panic below the stage still settles the
// spend reservation and the tpm estimate to what was used, and goes on
// unchanged.
func TestPanicSettles(t *testing.T) {
	tests := []struct {
		name      string
		tokens    int64   // usage set before the panic
		cost      float64 // cost set before the panic
		wantSpend float64
	}{
		{"before the provider answered", 0, 0, 0},
		{"after usage was known", 300, 0.0005, 0.0005},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kv := newMemKV(t)
			l := newTest(kv, testPrices(t), Options{})
			p := &principal{Kind: identity.VirtualKey, ID: "k", TPMLimit: 100000, MaxBudgetUSD: 10, BudgetPeriod: "daily"}
			boom := errors.New("boom")
			next := func(_ context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
				x.Usage = llm.Usage{PromptTokens: tt.tokens}
				x.Cost = tt.cost
				panic(boom)
			}
			func() {
				defer func() {
					if v := recover(); v != boom {
						t.Errorf("recovered %v, want the original panic value %v", v, boom)
					}
				}()
				_, _ = pipeline.Chain(next, l.Stage(testLimits))(t.Context(), chatExchange(p, 500, 500))
				t.Errorf("the stage returned, want the panic to go on")
			}()
			l.Settled()
			r, err := kv.Window(t.Context(), windowKey(p.id(), "tpm"), time.Minute, 100000, 0)
			if err != nil || r.Used != tt.tokens {
				t.Errorf("tpm window after the panic = %+v, %v, want %d used", r, err, tt.tokens)
			}
			spent, err := l.Spend(t.Context(), "k", "daily", 10)
			if err != nil || spent != tt.wantSpend {
				t.Errorf("spend after the panic = %v, %v, want %v (the reservation settled)", spent, err, tt.wantSpend)
			}
		})
	}
}

// TestOneStoreCallAllOrNothing checks that the checks before the call are one
// store call, and that a request refused by any limit counts in none.
func TestOneStoreCallAllOrNothing(t *testing.T) {
	kv := &countingKV{KV: newMemKV(t)}
	l := newTest(kv, testPrices(t), Options{HourlyRequests: 100})
	p := &principal{Kind: identity.VirtualKey, ID: "k", RPMLimit: 2, TPMLimit: 100, MaxBudgetUSD: 0.001, BudgetPeriod: "daily"}
	var before int64 = -1
	next := func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		before = kv.calls.Load()
		return answer(5, 5)(ctx, x)
	}
	h := pipeline.Chain(next, l.Stage(testLimits))
	// Refused by tpm (estimate 200 > 100) and by the budget (4096
	// completion tokens reserved: $0.0082 > $0.001): nothing counted.
	_, err := h(t.Context(), chatExchange(p, 200, 0))
	wantRefusal(t, err, apierr.RateLimited, "rate_limit_exceeded")
	_, err = h(t.Context(), chatExchange(p, 10, 0))
	wantRefusal(t, err, apierr.BudgetExceeded, "budget_exceeded")
	// Both rpm slots are still free.
	for i := range 2 {
		l.Settled()
		start := kv.calls.Load()
		x := chatExchange(p, 10, 10)
		if _, err := h(t.Context(), x); err != nil {
			t.Fatalf("request %d after the refusals: %v", i+1, err)
		}
		if got, want := x.Header.Get(HeaderRemainingRequests), strconv.Itoa(1-i); got != want {
			t.Errorf("request %d: %s = %q, want %q", i+1, HeaderRemainingRequests, got, want)
		}
		if n := before - start; n != 1 {
			t.Errorf("request %d: %d store calls before the provider call, want 1", i+1, n)
		}
	}
	l.Settled()
	for _, w := range []struct {
		name string
		want int64
	}{{"rpm", 2}, {"rph", 2}, {"tpm", 20}} {
		r, err := kv.Window(t.Context(), windowKey(p.id(), w.name), time.Hour, 1000, 0)
		if err != nil || r.Used != w.want {
			t.Errorf("%s window = %+v, %v, want %d used", w.name, r, err, w.want)
		}
	}
}

func TestPeriods(t *testing.T) {
	now := time.Date(2026, 11, 22, 15, 4, 5, 0, time.UTC) // a Sunday
	cases := []struct {
		period     string
		start, end time.Time
	}{
		{"daily", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
		{"weekly", time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
		{"monthly", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		if s, e := PeriodStart(c.period, now), PeriodEnd(c.period, now); !s.Equal(c.start) || !e.Equal(c.end) {
			t.Errorf("%s: got %v–%v, want %v–%v", c.period, s, e, c.start, c.end)
		}
	}
}

// TestTinyCapStillCaps: a cap below a micro-dollar caps (it used to round
// to "no cap" and admit everything).
func TestTinyCapStillCaps(t *testing.T) {
	l := newTest(newMemKV(t), testPrices(t), Options{})
	p := &principal{Kind: identity.VirtualKey, ID: "k", MaxBudgetUSD: 0.0000001}
	_, err := pipeline.Chain(answer(10, 10), l.Stage(testLimits))(t.Context(), chatExchange(p, 10, 10))
	wantRefusal(t, err, apierr.BudgetExceeded, "budget_exceeded")
}

// TestAbsurdEstimateNeverFailsOpen: an estimate that overflowed used to
// make the store call fail, and rate limits failed open: 30 of 30
// requests passed an rpm of 5. Each part is clamped now.
func TestAbsurdEstimateNeverFailsOpen(t *testing.T) {
	l := newTest(newMemKV(t), testPrices(t), Options{Log: slog.New(slog.DiscardHandler)})
	p := &principal{Kind: identity.VirtualKey, ID: "k", RPMLimit: 5}
	huge := int(^uint(0) >> 1)
	admitted := 0
	for range 30 {
		x := chatExchange(p, 10, 0)
		x.Chat.MaxTokens = &huge
		if _, err := pipeline.Chain(answer(1, 1), l.Stage(testLimits))(t.Context(), x); err == nil {
			admitted++
		}
	}
	if admitted != 5 {
		t.Errorf("admitted %d of 30 requests with max_tokens %d on rpm 5, want 5", admitted, huge)
	}
	body := &pipeline.Exchange{Body: []byte(`{"max_tokens": 9223372036854775807, "prompt": "x"}`)}
	if e := l.estimate(body); e.tokens() <= 0 || e.completion != maxEstimate {
		t.Errorf("estimate of a body with max_tokens at int64's maximum = %+v, want the completion clamped to %d", e, int64(maxEstimate))
	}
	body.Body = []byte(`{"max_tokens": 1e300}`)
	if e := l.estimate(body); e.completion != maxEstimate {
		t.Errorf("estimate of max_tokens 1e300 = %+v, want the completion clamped", e)
	}
}

// TestSpendMeteredWithoutCap: with MeterSpend (the svc_vkey_spend_usd
// gauge), every virtual key that spends is reported from the shared
// counters, capped or not; a call that cost nothing makes no store call.
func TestSpendMeteredWithoutCap(t *testing.T) {
	kv := &countingKV{KV: newMemKV(t)}
	l := newTest(kv, testPrices(t), Options{MeterSpend: true})
	h := pipeline.Chain(answer(1000, 250), l.Stage(testLimits))
	for range 2 {
		if _, err := h(t.Context(), chatExchange(vkey("free"), 10, 0)); err != nil {
			t.Fatal(err)
		}
	}
	rpmOnly := &principal{Kind: identity.VirtualKey, ID: "rpm", RPMLimit: 100}
	capped := &principal{Kind: identity.VirtualKey, ID: "capped", MaxBudgetUSD: 1}
	for _, p := range []*principal{rpmOnly, capped} {
		if _, err := h(t.Context(), chatExchange(p, 10, 0)); err != nil {
			t.Fatal(err)
		}
	}
	l.Settled()
	got := l.Spends(t.Context())
	if len(got) != 3 || !near(got["free"], 0.003) || !near(got["rpm"], 0.0015) || !near(got["capped"], 0.0015) {
		t.Errorf("Spends = %v, want free 0.003 (two calls of $0.0015), rpm and capped 0.0015", got)
	}
	before := kv.calls.Load()
	if _, err := pipeline.Chain(answer(0, 0), l.Stage(testLimits))(t.Context(), chatExchange(vkey("free"), 10, 0)); err != nil {
		t.Fatal(err)
	}
	l.Settled()
	if n := kv.calls.Load() - before; n != 0 {
		t.Errorf("a call that cost nothing made %d store calls, want 0", n)
	}
}

// TestSpendMeterAcrossPeriods: spend metered for a key without limits lands
// in the counter of the period it was spent in, also when the period turns
// before the flush.
func TestSpendMeterAcrossPeriods(t *testing.T) {
	kv := newMemKV(t)
	clk := &clock{now: time.Date(2026, 3, 10, 23, 59, 59, 0, time.UTC)}
	l := newTest(kv, testPrices(t), Options{MeterSpend: true, Now: clk.Now})
	free := &principal{Kind: identity.VirtualKey, ID: "free", BudgetPeriod: "daily"}
	h := pipeline.Chain(answer(1000, 250), l.Stage(testLimits))
	if _, err := h(t.Context(), chatExchange(free, 10, 0)); err != nil {
		t.Fatal(err)
	}
	clk.Set(time.Date(2026, 3, 11, 0, 0, 1, 0, time.UTC))
	for range 2 {
		if _, err := h(t.Context(), chatExchange(free, 10, 0)); err != nil {
			t.Fatal(err)
		}
	}
	l.Settled()
	for day, want := range map[int]int64{10: 1500, 11: 3000} {
		key := spendKey(identity.VirtualKey, "free", "daily", time.Date(2026, 3, day, 0, 0, 0, 0, time.UTC))
		b, err := kv.Get(t.Context(), key)
		if err != nil || string(b) != strconv.FormatInt(want, 10) {
			t.Errorf("March %d spend counter = %q, %v; want %d micro-dollars", day, b, err, want)
		}
	}
	if got := l.Spends(t.Context())["free"]; !near(got, 0.003) {
		t.Errorf("Spends = %v, want the current day's 0.003", got)
	}
}

// TestOwnerShares: two callers whose limits name the same owner (a team)
// share its window and budget; a third with none of its own is free.
func TestOwnerShares(t *testing.T) {
	l := newTest(newMemKV(t), testPrices(t), Options{})
	team := &identity.Principal{Kind: identity.Team, ID: "eng"}
	lim := Limits{RPM: 3, MaxBudgetUSD: 1, Owner: team}
	ann, bob := &identity.Principal{Kind: identity.User, ID: "ann"}, &identity.Principal{Kind: identity.User, ID: "bob"}
	for i, p := range []*identity.Principal{ann, bob, ann} {
		a, err := l.Admit(t.Context(), p, lim, Estimate{CostUSD: 0.1})
		if err != nil {
			t.Fatalf("call %d: %v", i+1, err)
		}
		a.Settle(t.Context(), Used{CostUSD: 0.1})
	}
	if _, err := l.Admit(t.Context(), bob, lim, Estimate{CostUSD: 0.1}); err == nil {
		t.Error("the team's fourth call in a minute passed its RPM of 3")
	}
	if a, err := l.Admit(t.Context(), bob, Limits{RPM: 3}, Estimate{}); err != nil || a == nil {
		t.Errorf("bob's own window is not the team's: %v", err)
	}
}

// slowSettle delays the store's Settle, as a remote store under load would.
type slowSettle struct {
	store.KV
	delay time.Duration
}

func (s slowSettle) Settle(ctx context.Context, req store.SettleRequest) (store.SettleResult, error) {
	time.Sleep(s.delay)
	return s.KV.Settle(ctx, req)
}

// TestSettleNow: a call settled with SettleNow releases its reservation
// before it returns, so the caller's next call near the cap is admitted;
// with Settle the reservation may still be held (the race SettleNow is for).
func TestSettleNow(t *testing.T) {
	l := newTest(slowSettle{newMemKV(t), 50 * time.Millisecond}, testPrices(t), Options{})
	p := &identity.Principal{Kind: identity.VirtualKey, ID: "tools"}
	lim := Limits{MaxBudgetUSD: 0.6}
	call := func(settleNow bool) error {
		a, err := l.Admit(t.Context(), p, lim, Estimate{CostUSD: 0.25})
		if err != nil {
			return err
		}
		if settleNow {
			a.SettleNow(t.Context(), Used{}) // a cached call: it cost nothing
		} else {
			a.Settle(t.Context(), Used{})
		}
		return nil
	}
	for i := range 3 {
		if err := call(true); err != nil {
			t.Fatalf("call %d settled at once at no cost: %v, want admitted", i+1, err)
		}
	}
	// The same three calls with the settlement off the caller's path: the
	// third finds the first two reservations still held (0.75 > 0.6).
	var refused bool
	for range 3 {
		refused = refused || call(false) != nil
	}
	l.Settled()
	if !refused {
		t.Error("Settle released reservations before returning: this test no longer shows the race SettleNow closes")
	}
}
