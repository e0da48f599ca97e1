package keyvault

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// refusingKV is a pubsubKV whose Subscribe fails after ok successful ones.
type refusingKV struct {
	*pubsubKV
	ok    int
	tries int // Subscribe calls, under pubsubKV.mu
}

var errRefused = errors.New("subscribe refused")

func (kv *refusingKV) Subscribe(ctx context.Context, channel string) (store.Subscription, error) {
	kv.mu.Lock()
	kv.tries++
	kv.mu.Unlock()
	if kv.ok == 0 {
		return nil, errRefused
	}
	kv.ok--
	return kv.pubsubKV.Subscribe(ctx, channel)
}

// TestRunRetriesSubscribe: when either of Run's two subscriptions is
// refused, Run closes the other and tries again; it ends (nil) with its
// context, leaving none open.
func TestRunRetriesSubscribe(t *testing.T) {
	for ok := range 2 {
		kv := &refusingKV{pubsubKV: &pubsubKV{buffer: 4}, ok: ok}
		v := New(newMemStore(), testSealer(1), kv, nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- v.Run(ctx) }()
		waitFor(t, func() bool { kv.mu.Lock(); defer kv.mu.Unlock(); return kv.tries > ok+1 })
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("subscription %d refused: Run returned %v, want nil when its context ends", ok+1, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("subscription %d refused: Run did not return after its context ended", ok+1)
		}
		if n := kv.subscribers(); n != 0 {
			t.Errorf("subscription %d refused: %d subscriptions left open", ok+1, n)
		}
	}
}

// TestRunResubscribes: when its subscriptions end (the bus lost a
// message), Run drops what it cached and subscribes again, and a change
// announced then reaches the cache.
func TestRunResubscribes(t *testing.T) {
	ctx := t.Context()
	bus, st, v, w := replicas()
	done := make(chan error, 1)
	runCtx, cancel := context.WithCancel(ctx)
	go func() { done <- v.Run(runCtx) }()
	waitFor(t, func() bool { return bus.subscribers() == 2 })
	if _, err := w.Put(ctx, "openai", openAIKey); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { k, err := v.Key(ctx, "openai"); return err == nil && k == openAIKey })

	bus.endAll()
	waitFor(t, func() bool {
		v.mu.RLock()
		defer v.mu.RUnlock()
		return bus.subscriptionsMade() == 4 && v.following
	})
	// Cached again after the new round (a second lookup reads nothing):
	// only the notice can replace it before the cache's TTL.
	if k, err := v.Key(ctx, "openai"); err != nil || k != openAIKey {
		t.Fatalf("Key after resubscribing: %q, %v", k, err)
	}
	reads := st.reads.Load()
	if _, err := v.Key(ctx, "openai"); err != nil || st.reads.Load() != reads {
		t.Fatalf("Key after resubscribing is not served from the cache (%d store reads, %v)", st.reads.Load()-reads, err)
	}
	const rotated = "sk-proj-rotated0000000000000000000000000000"
	if _, err := w.Put(ctx, "openai", rotated); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { k, err := v.Key(ctx, "openai"); return err == nil && k == rotated })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: got %v, want nil", err)
	}
}

// TestRunNoticesPendingEnded: when only the subscription Key's cache check
// reads ends, with no message and no lookup to notice it, Run still starts
// a new round (within about a second).
func TestRunNoticesPendingEnded(t *testing.T) {
	bus := &pubsubKV{buffer: 4}
	v := New(newMemStore(), testSealer(1), bus, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- v.Run(ctx) }()
	waitFor(t, func() bool { return bus.subscribers() == 2 })
	bus.end(0) // pending: Run subscribes it first
	waitFor(t, func() bool { return bus.subscriptionsMade() == 4 && bus.subscribers() == 2 })
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: got %v, want nil", err)
	}
}

// TestBetweenRoundsReadsTheStore: after its subscriptions ended and before
// Run has subscribed again, a change announced goes unheard, so Key must
// not serve what it cached then: it reads the store on every call.
func TestBetweenRoundsReadsTheStore(t *testing.T) {
	ctx := t.Context()
	bus, st, _, w := replicas()
	// v's bus refuses every subscription after Run's first two: once they
	// end, Run stays between rounds.
	v := New(st, testSealer(1), &refusingKV{pubsubKV: bus, ok: 2}, nil)
	run(t, v)
	if _, err := w.Put(ctx, "openai", openAIKey); err != nil {
		t.Fatal(err)
	}

	bus.endAll()
	waitFor(t, func() bool {
		v.mu.RLock()
		defer v.mu.RUnlock()
		return !v.following
	})
	if k, err := v.Key(ctx, "openai"); err != nil || k != openAIKey {
		t.Fatalf("Key between rounds: %q, %v", k, err)
	}
	const rotated = "sk-proj-rotated0000000000000000000000000000"
	if _, err := w.Put(ctx, "openai", rotated); err != nil {
		t.Fatal(err)
	}
	if k, err := v.Key(ctx, "openai"); err != nil || k != rotated {
		t.Fatalf("Key between rounds after an unheard change: %q, %v; want the new key", k, err)
	}
}

// replicas returns a bus, a store and two vaults over them: v, to run, and
// w, another replica's, not running.
func replicas() (*pubsubKV, *memStore, *Vault, *Vault) {
	bus := &pubsubKV{buffer: 4}
	st := newMemStore()
	return bus, st, New(st, testSealer(1), bus, nil), New(st, testSealer(1), bus, nil)
}
