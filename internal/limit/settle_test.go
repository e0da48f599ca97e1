package limit

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/store"
)

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

// heldSettle holds the store's Settle while a gate is set, as a remote
// store under load would delay it.
type heldSettle struct {
	store.KV
	gate *atomic.Pointer[chan struct{}]
}

func (s heldSettle) Settle(ctx context.Context, req store.SettleRequest) (store.SettleResult, error) {
	if g := s.gate.Load(); g != nil {
		select {
		case <-*g:
		case <-time.After(5 * time.Second): // a Settle on the caller's path: the test fails, not hangs
		}
	}
	return s.KV.Settle(ctx, req)
}

// TestSettleNow: a call settled with SettleNow releases its reservation
// before it returns, so the caller's next call near the cap is admitted;
// with Settle the reservation may still be held (the race SettleNow is for).
func TestSettleNow(t *testing.T) {
	gate := new(atomic.Pointer[chan struct{}])
	l := newTest(heldSettle{newMemKV(t), gate}, testPrices(t), Options{})
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
	held := make(chan struct{})
	gate.Store(&held)
	var refused bool
	for range 3 {
		refused = refused || call(false) != nil
	}
	close(held)
	l.Settled()
	if !refused {
		t.Error("Settle released reservations before returning: this test no longer shows the race SettleNow closes")
	}
}
