package store_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// shortRetry keeps the tests of retries quick.
const shortRetry = 20 * time.Millisecond

// events records what Follow told its hooks, as "subscribed", "msg <m>"
// and "lost <err>".
type events chan string

func (e events) hooks(lost func(error) error) store.FollowHooks {
	return store.FollowHooks{
		Subscribed: func() { e <- "subscribed" },
		Message:    func(msg []byte) { e <- "msg " + string(msg) },
		Lost: func(err error) error {
			e <- "lost " + err.Error()
			if lost != nil {
				return lost(err)
			}
			return nil
		},
		Retry: shortRetry,
	}
}

// next is the next event, failing the test if none comes within 5 s.
func (e events) next(t *testing.T) string {
	t.Helper()
	select {
	case ev := <-e:
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event from Follow within 5s")
		return ""
	}
}

func (e events) expect(t *testing.T, want ...string) {
	t.Helper()
	for _, w := range want {
		if got := e.next(t); got != w {
			t.Fatalf("event %q, want %q", got, w)
		}
	}
}

// follow runs store.Follow in a goroutine and returns its result channel.
func follow(ctx context.Context, bus store.Subscriber, h store.FollowHooks) <-chan error {
	done := make(chan error, 1)
	go func() { done <- store.Follow(ctx, bus, "ch", h) }()
	return done
}

// returned is Follow's result, failing the test unless it came within d.
func returned(t *testing.T, done <-chan error, d time.Duration) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("Follow did not return within %v", d)
		return nil
	}
}

// TestFollowBus: on memkv and Redis, messages arrive in order after
// Subscribed; a store that ends the subscription (Close) is reported as
// ErrSubscriptionEnded, and the failing Subscribe after it (the store is
// closed) is retried; Follow returns nil when ctx ends.
func TestFollowBus(t *testing.T) {
	for _, b := range []struct {
		name string
		open func(t *testing.T) store.KV
	}{
		{"memkv", func(*testing.T) store.KV { return memkv.New() }},
		{"redis", func(t *testing.T) store.KV { return storetest.RedisKV(t) }},
	} {
		t.Run(b.name, func(t *testing.T) {
			kv := b.open(t)
			defer kv.Close()
			ev := make(events, 100)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := follow(ctx, kv, ev.hooks(nil))
			ev.expect(t, "subscribed")
			var want []string
			for i := range 20 {
				m := fmt.Sprint("m", i)
				if err := kv.Publish(ctx, "ch", []byte(m)); err != nil {
					t.Fatal(err)
				}
				want = append(want, "msg "+m)
			}
			ev.expect(t, want...)
			if err := kv.Close(); err != nil {
				t.Fatal(err)
			}
			ev.expect(t, "lost "+store.ErrSubscriptionEnded.Error())
			// Closed, the store refuses to subscribe: Follow keeps retrying.
			for range 2 {
				if got := ev.next(t); got == "subscribed" || got == "lost "+store.ErrSubscriptionEnded.Error() {
					t.Fatalf("event %q after the store closed, want a failed Subscribe", got)
				}
			}
			cancel()
			if err := returned(t, done, time.Second); err != nil {
				t.Errorf("Follow returned %v, want nil", err)
			}
		})
	}
}

// TestFollowNoGoroutineLeft: once Follow returned, nothing it started runs
// (memkv: its sweeper is there before and after).
func TestFollowNoGoroutineLeft(t *testing.T) {
	kv := memkv.New()
	defer kv.Close()
	before := runtime.NumGoroutine()
	ev := make(events, 100)
	ctx, cancel := context.WithCancel(t.Context())
	done := follow(ctx, kv, ev.hooks(nil))
	ev.expect(t, "subscribed")
	cancel()
	if err := returned(t, done, time.Second); err != nil {
		t.Fatalf("Follow returned %v, want nil", err)
	}
	ev.expect(t, "lost "+context.Canceled.Error())
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after Follow returned, %d before", runtime.NumGoroutine(), before)
		}
		time.Sleep(time.Millisecond)
	}
}

// fakeBus fails its first failures Subscribes, then hands out
// subscriptions the test ends by closing their channel. A blocking one's
// Subscribe closes entered (when set) and waits for ctx to end, then fails
// with errDown.
type fakeBus struct {
	failures int
	blocking bool
	entered  chan struct{}
	mu       sync.Mutex
	calls    []time.Time // of Subscribe
	subs     []*fakeSub
	open     int
}

type fakeSub struct {
	bus    *fakeBus
	ch     chan []byte
	once   sync.Once
	closed bool
}

var errDown = errors.New("bus down")

func (b *fakeBus) Subscribe(ctx context.Context, _ string) (store.Subscription, error) {
	if b.blocking {
		b.mu.Lock()
		if b.entered != nil {
			close(b.entered)
			b.entered = nil
		}
		b.mu.Unlock()
		<-ctx.Done()
		return nil, errDown
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls = append(b.calls, time.Now())
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if len(b.calls) <= b.failures {
		return nil, errDown
	}
	s := &fakeSub{bus: b, ch: make(chan []byte, 16)}
	b.subs = append(b.subs, s)
	b.open++
	return s, nil
}

func (s *fakeSub) C() <-chan []byte { return s.ch }

func (s *fakeSub) Close() error {
	s.bus.mu.Lock()
	defer s.bus.mu.Unlock()
	if !s.closed {
		s.closed = true
		s.bus.open--
	}
	return nil
}

// end closes the channel of subscription i, as a store ending it does.
func (b *fakeBus) end(i int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.subs[i].once.Do(func() { close(b.subs[i].ch) })
}

func (b *fakeBus) sub(i int) *fakeSub {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.subs[i]
}

func (b *fakeBus) isClosed(i int) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.subs[i].closed
}

func (b *fakeBus) state() (calls, open int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.calls), b.open
}

// TestFollowRetriesFailures: each failed Subscribe is reported with its
// error and retried after Retry; then the messages flow.
func TestFollowRetriesFailures(t *testing.T) {
	bus := &fakeBus{failures: 3}
	ev := make(events, 100)
	ctx, cancel := context.WithCancel(t.Context())
	done := follow(ctx, bus, ev.hooks(nil))
	ev.expect(t, "lost bus down", "lost bus down", "lost bus down", "subscribed")
	bus.sub(0).ch <- []byte("a")
	bus.sub(0).ch <- []byte("b")
	ev.expect(t, "msg a", "msg b")
	cancel()
	if err := returned(t, done, time.Second); err != nil {
		t.Errorf("Follow returned %v, want nil", err)
	}
	ev.expect(t, "lost "+context.Canceled.Error())
	bus.mu.Lock()
	defer bus.mu.Unlock()
	for i := 1; i < len(bus.calls); i++ {
		if gap := bus.calls[i].Sub(bus.calls[i-1]); gap < shortRetry {
			t.Errorf("Subscribe %d came %v after the failure before it, want ≥ %v", i+1, gap, shortRetry)
		}
	}
	if bus.open != 0 {
		t.Errorf("%d subscriptions left open", bus.open)
	}
}

// TestFollowResubscribesAfterEnd: a subscription whose channel closes is
// closed, reported as ErrSubscriptionEnded and replaced at once.
func TestFollowResubscribesAfterEnd(t *testing.T) {
	bus := &fakeBus{}
	ev := make(events, 100)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	h := ev.hooks(nil)
	h.Retry = time.Hour // an end is not a failure: no wait
	done := follow(ctx, bus, h)
	ev.expect(t, "subscribed")
	bus.sub(0).ch <- []byte("a")
	bus.end(0)
	ev.expect(t, "msg a", "lost "+store.ErrSubscriptionEnded.Error(), "subscribed")
	if !bus.isClosed(0) {
		t.Error("the ended subscription was not closed")
	}
	bus.sub(1).ch <- []byte("b")
	ev.expect(t, "msg b")
	cancel()
	if err := returned(t, done, time.Second); err != nil {
		t.Errorf("Follow returned %v, want nil", err)
	}
	if calls, open := bus.state(); calls != 2 || open != 0 {
		t.Errorf("%d Subscribes, %d left open; want 2, 0", calls, open)
	}
}

// TestFollowLostStops: an error from Lost ends Follow, which returns it
// and subscribes no more.
func TestFollowLostStops(t *testing.T) {
	stop := errors.New("stop")
	for _, tc := range []struct {
		name     string
		failures int
		end      bool
	}{
		{"failed subscribe", 1, false},
		{"ended subscription", 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bus := &fakeBus{failures: tc.failures}
			ev := make(events, 100)
			done := follow(t.Context(), bus, ev.hooks(func(error) error { return stop }))
			if tc.end {
				ev.expect(t, "subscribed")
				bus.end(0)
			}
			if err := returned(t, done, time.Second); !errors.Is(err, stop) {
				t.Errorf("Follow returned %v, want Lost's error", err)
			}
			if calls, open := bus.state(); calls != 1 || open != 0 {
				t.Errorf("%d Subscribes, %d left open; want 1, 0", calls, open)
			}
		})
	}
}

// TestFollowReturnsWhenCtxEnds: Follow returns nil at once when ctx ends,
// while it waits to retry (however long Retry is), reads or subscribes
// (Lost is then told ctx's error), and without subscribing when ctx has
// already ended; Lost's error does not matter then.
func TestFollowReturnsWhenCtxEnds(t *testing.T) {
	t.Run("waiting to retry", func(t *testing.T) {
		bus := &fakeBus{failures: 1 << 30}
		ev := make(events, 100)
		ctx, cancel := context.WithCancel(t.Context())
		h := ev.hooks(nil)
		h.Retry = time.Hour
		done := follow(ctx, bus, h)
		ev.expect(t, "lost bus down")
		cancel()
		if err := returned(t, done, time.Second); err != nil {
			t.Errorf("Follow returned %v, want nil", err)
		}
	})
	t.Run("reading", func(t *testing.T) {
		bus := &fakeBus{}
		ev := make(events, 100)
		ctx, cancel := context.WithCancel(t.Context())
		done := follow(ctx, bus, ev.hooks(func(err error) error { return err }))
		ev.expect(t, "subscribed")
		cancel()
		if err := returned(t, done, time.Second); err != nil {
			t.Errorf("Follow returned %v, want nil", err)
		}
		ev.expect(t, "lost "+context.Canceled.Error())
		if calls, open := bus.state(); calls != 1 || open != 0 {
			t.Errorf("%d Subscribes, %d left open; want 1, 0", calls, open)
		}
	})
	t.Run("subscribing", func(t *testing.T) {
		ev := make(events, 100)
		ctx, cancel := context.WithCancel(t.Context())
		entered := make(chan struct{})
		done := follow(ctx, &fakeBus{blocking: true, entered: entered}, ev.hooks(nil))
		select {
		case <-entered:
		case <-time.After(5 * time.Second):
			t.Fatal("Follow did not subscribe within 5s")
		}
		cancel()
		if err := returned(t, done, time.Second); err != nil {
			t.Errorf("Follow returned %v, want nil", err)
		}
		// Subscribe's own error (errDown) is not what ended it.
		ev.expect(t, "lost "+context.Canceled.Error())
	})
	t.Run("ended before", func(t *testing.T) {
		bus := &fakeBus{}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if err := store.Follow(ctx, bus, "ch", store.FollowHooks{}); err != nil {
			t.Errorf("Follow returned %v, want nil", err)
		}
		if calls, _ := bus.state(); calls != 0 {
			t.Errorf("%d Subscribes with ctx ended, want 0", calls)
		}
	})
}

// TestFollowNilHooks: hooks left nil are skipped.
func TestFollowNilHooks(t *testing.T) {
	bus := &fakeBus{failures: 1}
	ctx, cancel := context.WithCancel(t.Context())
	done := follow(ctx, bus, store.FollowHooks{Retry: shortRetry})
	deadline := time.Now().Add(5 * time.Second)
	for {
		calls, open := bus.state()
		if calls == 2 && open == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d Subscribes, %d open; want a retry that subscribed", calls, open)
		}
		time.Sleep(time.Millisecond)
	}
	bus.sub(0).ch <- []byte("ignored")
	bus.end(0)
	cancel()
	if err := returned(t, done, time.Second); err != nil {
		t.Errorf("Follow returned %v, want nil", err)
	}
}

// endingBus accepts every Subscribe with a subscription already ended.
type endingBus struct{ calls atomic.Int64 }

func (b *endingBus) Subscribe(context.Context, string) (store.Subscription, error) {
	b.calls.Add(1)
	ch := make(chan []byte)
	close(ch)
	return closedSub{ch}, nil
}

type closedSub struct{ ch chan []byte }

func (s closedSub) C() <-chan []byte { return s.ch }
func (s closedSub) Close() error     { return nil }

// TestFollowDoesNotSpin: a store that ends every subscription as soon as it
// is made, before any message, is waited for as after a failed Subscribe.
func TestFollowDoesNotSpin(t *testing.T) {
	bus := &endingBus{}
	ctx, cancel := context.WithTimeout(t.Context(), 350*time.Millisecond)
	defer cancel()
	if err := store.Follow(ctx, bus, "c", store.FollowHooks{Retry: 100 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	if n := bus.calls.Load(); n > 5 {
		t.Errorf("%d Subscribes in 350 ms with a 100 ms retry: Follow spins", n)
	}
}
