package storetest

import (
	"context"
	"errors"
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

// Until polls cond every 5 ms until it holds, and fails the test naming
// what it waited for if it has not within the given time (a bound that
// keeps a broken test from hanging, not a timing assertion, unless the
// test says so). It returns how long it waited.
func Until(t testing.TB, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	Eventually(t, within, func() error {
		if !cond() {
			return errors.New("still waiting for " + what)
		}
		return nil
	})
	return time.Since(start)
}
