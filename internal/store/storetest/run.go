package storetest

import (
	"context"
	"testing"
	"time"
)

// Background runs run (a component's Run loop: a bus follower, a
// notifier) until the test ends, then cancels its context and fails the
// test unless it returned nil.
func Background(t testing.TB, run func(context.Context) error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

// Eventually polls cond every 5 ms until it returns nil, and fails the
// test with cond's last error if it has not within the given time.
func Eventually(t testing.TB, within time.Duration, cond func() error) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		err := cond()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", within, err)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
