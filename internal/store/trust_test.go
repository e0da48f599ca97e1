package store_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// pingableBus is a gated bus whose pings fail while down is set.
type pingableBus struct {
	*storetest.EndableBus
	down atomic.Bool
}

var errNoAnswer = errors.New("no answer")

func (b *pingableBus) Ping(ctx context.Context) error {
	if b.down.Load() {
		return errNoAnswer
	}
	return b.EndableBus.Ping(ctx)
}

// trustedCache is what a Trust's owner keeps: entries filled only while
// trusted, emptied by Flush. It records what Run told it.
type trustedCache struct {
	trust store.Trust

	mu   sync.Mutex
	seen seen
}

// seen is what the cache holds and was told.
type seen struct {
	entries map[string]bool
	// atFlush and atLost are whether the cache was trusted during each
	// Flush and each Lost.
	atFlush, atLost []bool
	flips           []bool
	msgs            []string
	lost            []error
	badFlip         bool // a flip's error did not match its direction
}

// put adds k when trusted, as a lookup that read the store fills a cache,
// or whatever Trust says when force is set (a fill that checked Trusted
// before a flip).
func (c *trustedCache) put(k string, force bool) {
	if !force && !c.trust.Trusted() {
		return
	}
	c.mu.Lock()
	c.seen.entries[k] = true
	c.mu.Unlock()
}

// record runs f on what the cache saw, under its lock.
func (c *trustedCache) record(f func(s *seen)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.seen)
}

func (c *trustedCache) hooks() store.TrustHooks {
	return store.TrustHooks{
		Flush: func() {
			c.record(func(s *seen) {
				clear(s.entries)
				s.atFlush = append(s.atFlush, c.trust.Trusted())
			})
		},
		BusFlipped: func(down bool, err error) {
			c.record(func(s *seen) {
				s.flips = append(s.flips, down)
				s.badFlip = s.badFlip || down != errors.Is(err, errNoAnswer)
			})
		},
		Message: func(msg []byte) { c.record(func(s *seen) { s.msgs = append(s.msgs, string(msg)) }) },
		Lost: func(err error) error {
			c.record(func(s *seen) {
				s.lost = append(s.lost, err)
				s.atLost = append(s.atLost, c.trust.Trusted())
			})
			return nil
		},
	}
}

// now is a copy of what the cache saw.
func (c *trustedCache) now() seen {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.seen
	s.entries = maps.Clone(s.entries)
	s.atFlush, s.atLost = slices.Clone(s.atFlush), slices.Clone(s.atLost)
	s.flips, s.msgs, s.lost = slices.Clone(s.flips), slices.Clone(s.msgs), slices.Clone(s.lost)
	return s
}

// runTrust runs c's Trust over a gated bus until the test ends.
func runTrust(t *testing.T) (*trustedCache, *pingableBus) {
	t.Helper()
	bus := &pingableBus{EndableBus: &storetest.EndableBus{KV: memkv.New(), Gate: make(chan error)}}
	c := &trustedCache{seen: seen{entries: map[string]bool{}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.trust.Run(ctx, bus, "ch", c.hooks()) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Error("Run did not return within 5s of its context ending")
		}
		bus.KV.Close()
	})
	return c, bus
}

// TestTrustFollowing: nothing is trusted before the first subscription
// or after a failed Subscribe; the cache is emptied when a subscription is
// made, before it is trusted; notices reach Message; when the
// subscription ends trust is withdrawn before Lost runs, and the cache is
// left to Lost.
func TestTrustFollowing(t *testing.T) {
	c, bus := runTrust(t)
	c.put("early", false)
	if c.trust.Trusted() || c.trust.Following() {
		t.Fatal("trusted before the first subscription")
	}
	bus.Gate <- errNoAnswer
	storetest.Until(t, time.Second, "the failure told", func() bool { return len(c.now().lost) == 1 })
	c.put("after a failure", false)
	if s := c.now(); c.trust.Trusted() || len(s.entries) != 0 || len(s.atFlush) != 0 || !errors.Is(s.lost[0], errNoAnswer) {
		t.Fatalf("after a failed Subscribe: trusted %v, entries %v, %d flushes, lost %v; want false, none, 0, the error",
			c.trust.Trusted(), s.entries, len(s.atFlush), s.lost)
	}

	c.put("stale", true) // as if filled by a Run before
	bus.Gate <- nil
	storetest.Until(t, 2*time.Second, "trusted once subscribed", c.trust.Trusted)
	c.put("k", false)
	if s := c.now(); !maps.Equal(s.entries, map[string]bool{"k": true}) || !slices.Equal(s.atFlush, []bool{false}) {
		t.Fatalf("subscribed: entries %v, want k only; trusted during each flush %v, want [false]", s.entries, s.atFlush)
	}
	if err := bus.Publish(t.Context(), "ch", []byte("notice")); err != nil {
		t.Fatal(err)
	}
	storetest.Until(t, time.Second, "the notice passed on", func() bool { return slices.Equal(c.now().msgs, []string{"notice"}) })

	bus.EndAll() // the next Subscribe waits on the gate
	storetest.Until(t, time.Second, "the end told", func() bool { return len(c.now().lost) == 2 })
	s := c.now()
	if c.trust.Trusted() || c.trust.Following() || s.atLost[1] || !errors.Is(s.lost[1], store.ErrSubscriptionEnded) {
		t.Errorf("after the end: trusted %v, following %v, trusted during Lost %v, lost %v; want false, false, false, ErrSubscriptionEnded",
			c.trust.Trusted(), c.trust.Following(), s.atLost[1], s.lost[1])
	}
	if len(s.entries) != 1 || len(s.atFlush) != 1 {
		t.Errorf("after the end: %d entries, %d flushes; want 1, 1 (Lost empties the cache, not Trust)", len(s.entries), len(s.atFlush))
	}
}

// TestTrustBusDown: while the bus does not answer its pings the cache is
// not trusted, though followed; each flip empties it (trust withdrawn
// before, given back before) and is told; when the bus answers again it
// is trusted again.
func TestTrustBusDown(t *testing.T) {
	c, bus := runTrust(t)
	bus.Gate <- nil
	storetest.Until(t, 2*time.Second, "trusted once subscribed", c.trust.Trusted)
	c.put("k", false)

	bus.down.Store(true)
	wait := 3 * store.WatchEvery
	storetest.Until(t, wait, "untrusted with the bus down", func() bool { return !c.trust.Trusted() })
	storetest.Until(t, time.Second, "the flip told", func() bool { return len(c.now().flips) == 1 })
	c.put("while down", false)
	if s := c.now(); len(s.entries) != 0 || !slices.Equal(s.atFlush, []bool{false, false}) || !c.trust.Following() {
		t.Fatalf("bus down: entries %v, trusted during each flush %v, following %v; want none, [false false], true",
			s.entries, s.atFlush, c.trust.Following())
	}

	c.put("stale", true) // a fill that checked Trusted before the flip
	bus.down.Store(false)
	storetest.Until(t, wait, "trusted with the bus back", c.trust.Trusted)
	storetest.Until(t, time.Second, "the flip told", func() bool { return len(c.now().flips) == 2 })
	if s := c.now(); len(s.entries) != 0 || !slices.Equal(s.atFlush, []bool{false, false, true}) {
		t.Errorf("bus back: entries %v, trusted during each flush %v; want none, [false false true]", s.entries, s.atFlush)
	}
	c.put("k", false)
	s := c.now()
	if len(s.entries) != 1 || !slices.Equal(s.flips, []bool{true, false}) || s.badFlip || len(s.lost) != 0 {
		t.Errorf("bus back: %d entries after a fill, flips %v (error with down only: %v), lost %v; want 1, [true false], true, none",
			len(s.entries), s.flips, !s.badFlip, s.lost)
	}
}

// TestTrustRunAgain: a Run that ended while the bus was down leaves no
// flag behind; the next Run, with the bus answering, trusts once
// subscribed.
func TestTrustRunAgain(t *testing.T) {
	bus := &pingableBus{EndableBus: &storetest.EndableBus{KV: memkv.New(), Gate: make(chan error, 1)}}
	t.Cleanup(func() { bus.KV.Close() })
	var tr store.Trust
	run := func() (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- tr.Run(ctx, bus, "ch", store.TrustHooks{}) }()
		return func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Run: %v", err)
			}
		}
	}
	bus.Gate <- nil
	stop := run()
	storetest.Until(t, 2*time.Second, "trusted once subscribed", tr.Trusted)
	bus.down.Store(true)
	storetest.Until(t, 3*store.WatchEvery, "untrusted with the bus down", func() bool { return !tr.Trusted() })
	stop()

	bus.down.Store(false)
	bus.Gate <- nil
	stop = run()
	defer stop()
	storetest.Until(t, 2*time.Second, "trusted by the next Run, the bus answering", tr.Trusted)
}
