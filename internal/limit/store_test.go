package limit

import (
	"context"
	"log/slog"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

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
