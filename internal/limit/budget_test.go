package limit

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/pipeline"
)

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
		// Settlements run on their own goroutines: without this wait the
		// first could land after the second reservation and the two
		// crossings be raised in either order.
		l.Settled()
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
