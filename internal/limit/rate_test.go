package limit

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

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
