package storetest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// BusKV is what ExerciseBus runs on: the bus, Ping (a consumer that must
// know whether notifications flow asks it) and Close, which ends every
// subscription.
type BusKV interface {
	store.Bus
	Ping(ctx context.Context) error
	Close() error
}

// ExerciseBus checks that a store's Bus behaves as store.Bus documents:
// fan-out per channel, a slow subscriber never blocking Publish (and its
// subscription ending once it missed a message), Ping, and Close ending
// subscriptions. newStore follows ExerciseValues' rules.
func ExerciseBus[S BusKV](t *testing.T, newStore func(t *testing.T) S) {
	t.Helper()
	open := opener(newStore)

	t.Run("PublishSubscribe", func(t *testing.T) { publishSubscribe(t, open(t)) })
	t.Run("SlowSubscriber", func(t *testing.T) { slowSubscriber(t, open(t)) })
	t.Run("Ping", func(t *testing.T) {
		kv := open(t)
		if err := kv.Ping(t.Context()); err != nil {
			t.Errorf("Ping: got error %v, want nil", err)
		}
	})
	t.Run("Close", func(t *testing.T) { busClose(t, open(t)) })
}

// publishSubscribe checks that Publish without subscribers succeeds, that
// every subscriber of a channel gets its messages in order and only its
// channel's (busFanOut), and that a subscription closed (twice) ends while
// the others go on.
func publishSubscribe(t *testing.T, kv BusKV) {
	s1, s2 := busFanOut(t, kv)
	if err := s1.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s1.Close(); err != nil {
		t.Errorf("second Close: got error %v, want nil", err)
	}
	waitClosed(t, s1)
	if err := kv.Publish(t.Context(), "ch", []byte("m3")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if got := receive(t, s2); got != "m3" {
		t.Errorf("remaining subscription: got %q, want %q", got, "m3")
	}
}

// busFanOut checks that Publish with no subscriber succeeds, that two
// subscribers of "ch" both get its messages (an empty one too) in order,
// and that a subscriber of "other" gets only that channel's; it returns
// the two subscriptions to "ch".
func busFanOut(t *testing.T, kv BusKV) (s1, s2 store.Subscription) {
	ctx := t.Context()
	if err := kv.Publish(ctx, "nobody", []byte("lost")); err != nil {
		t.Fatalf("Publish with no subscriber: got error %v, want nil", err)
	}
	s1 = subscribe(t, kv, "ch")
	s2 = subscribe(t, kv, "ch")
	other := subscribe(t, kv, "other")
	for _, m := range []string{"m1", "m2", ""} {
		if err := kv.Publish(ctx, "ch", []byte(m)); err != nil {
			t.Fatalf("Publish(%q): %v", m, err)
		}
	}
	for i, s := range []store.Subscription{s1, s2} {
		for _, want := range []string{"m1", "m2", ""} {
			if got := receive(t, s); got != want {
				t.Errorf("subscription %d: got %q, want %q", i+1, got, want)
			}
		}
	}
	// A subscriber of another channel sees only its own channel's messages.
	if err := kv.Publish(ctx, "other", []byte("o1")); err != nil {
		t.Fatalf("Publish: %v", err)
	}
	if got := receive(t, other); got != "o1" {
		t.Errorf("subscription to other: got %q, want %q", got, "o1")
	}
	return s1, s2
}

// slowSubscriber checks that Publish does not block on a subscriber that
// never reads, and that such a subscriber gets the first messages, in
// order, then has its subscription ended: it missed the others and must
// know it did.
func slowSubscriber(t *testing.T, kv BusKV) {
	s := subscribe(t, kv, "ch")
	const n = 1000
	publishUnblocked(t, kv, "ch", n)
	got := receivedUntilEnded(t, s, n)
	if got == 0 || got >= n {
		t.Errorf("a subscriber that never read got %d of %d messages before its subscription ended, want some and not all", got, n)
	}
}

// publishUnblocked publishes "0".."n-1" on channel, failing if a Publish
// fails or the n calls have not returned within 30 s.
func publishUnblocked(t *testing.T, kv BusKV, channel string, n int) {
	ctx := t.Context()
	done := make(chan error, 1)
	go func() {
		for i := range n {
			if err := kv.Publish(ctx, channel, []byte(strconv.Itoa(i))); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Publish: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%d Publish calls to a subscriber that never reads did not return", n)
	}
}

// receivedUntilEnded reads s until its subscription ends, checking that
// message i is "i", and returns how many it got; it fails if s is still
// subscribed after 10 s (of n messages published).
func receivedUntilEnded(t *testing.T, s store.Subscription, n int) int {
	got := 0
	for deadline := time.After(10 * time.Second); ; got++ {
		var msg []byte
		var ok bool
		select {
		case msg, ok = <-s.C():
		case <-deadline:
			t.Fatalf("a subscriber that missed messages: still subscribed after %d of %d, want its subscription ended", got, n)
		}
		if !ok {
			return got
		}
		if string(msg) != strconv.Itoa(got) {
			t.Fatalf("message %d: got %q, want %q", got, msg, strconv.Itoa(got))
		}
	}
}

// busClose checks that KV.Close ends a subscription, that the
// subscription's Close and a second KV.Close then succeed, and that
// Publish, Subscribe and Ping then fail.
func busClose(t *testing.T, kv BusKV) {
	s := subscribe(t, kv, "ch")
	if err := kv.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	waitClosed(t, s)
	if err := s.Close(); err != nil {
		t.Errorf("Subscription.Close after KV.Close: got error %v, want nil", err)
	}
	if err := kv.Close(); err != nil {
		t.Errorf("second Close: got error %v, want nil", err)
	}
	if err := kv.Publish(t.Context(), "ch", []byte("m")); err == nil {
		t.Errorf("Publish after Close: got nil error, want a closed error")
	}
	if s, err := kv.Subscribe(t.Context(), "ch"); err == nil {
		s.Close()
		t.Errorf("Subscribe after Close: got nil error, want a closed error")
	}
	if err := kv.Ping(t.Context()); err == nil {
		t.Errorf("Ping after Close: got nil error, want a closed error")
	}
}
