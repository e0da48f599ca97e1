// Package storetest holds the conformance suites every store implementation
// runs from its own tests, in the manner of Vault's physical.ExerciseBackend:
// one per hot-state building block of package store (ExerciseValues,
// ExerciseCounters, ExerciseLogs, ExerciseBus, run by memkv and rediskv;
// ExerciseStreams, run by rediskv and the local spool), and one per record
// interface a domain owns (ExerciseKeyStore for auth,
// ExerciseProviderKeyStore for keyvault, ExerciseAuditStore for audit,
// ExerciseRoutingStore for route), run by each domain's SQL implementation on
// SQLite and PostgreSQL from the domain's external test package. It also
// gives each test an isolated namespace on the shared PostgreSQL and Redis
// servers (PostgresURL, RedisKV).
//
// Only _test.go files may import storetest.
package storetest

import (
	"errors"
	"io"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// waitFor is how long the suites poll for something that should happen soon
// (a TTL to lapse, a message to arrive) before failing.
const waitFor = 5 * time.Second

// opener returns what each subtest of a block's suite calls for a store of
// its own: it runs the subtest in parallel, opens the store with newStore
// and, when the store is an io.Closer, closes it when the subtest ends.
func opener[S any](newStore func(t *testing.T) S) func(t *testing.T) S {
	return func(t *testing.T) S {
		t.Helper()
		t.Parallel()
		s := newStore(t)
		if c, ok := any(s).(io.Closer); ok {
			t.Cleanup(func() {
				if err := c.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			})
		}
		return s
	}
}

// afterClose checks, for a store that is an io.Closer, that Close may be
// called twice and that op (a call of the block's, named name) then fails
// with an error other than store.ErrNotFound.
func afterClose[S any](t *testing.T, open func(t *testing.T) S, name string, op func(s S) error) {
	t.Run("AfterClose", func(t *testing.T) {
		s := open(t)
		c, ok := any(s).(io.Closer)
		if !ok {
			t.Skip("the store has no Close")
		}
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := c.Close(); err != nil {
			t.Errorf("second Close: got error %v, want nil", err)
		}
		if err := op(s); err == nil || errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s after Close: got error %v, want a closed error", name, err)
		}
	})
}

func strs(bs [][]byte) []string {
	if len(bs) == 0 {
		return nil
	}
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

// waitNotFound polls until key is gone, failing after waitFor.
func waitNotFound(t *testing.T, kv store.Values, key string) {
	t.Helper()
	deadline := time.Now().Add(waitFor)
	for {
		_, err := kv.Get(t.Context(), key)
		if errors.Is(err, store.ErrNotFound) {
			return
		}
		if err != nil {
			t.Fatalf("Get(%q): %v", key, err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("Get(%q) %v after its ttl: got a value, want store.ErrNotFound", key, waitFor)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func subscribe(t *testing.T, kv store.Bus, channel string) store.Subscription {
	t.Helper()
	s, err := kv.Subscribe(t.Context(), channel)
	if err != nil {
		t.Fatalf("Subscribe(%q): %v", channel, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// receive returns the next message of s, failing if none comes within waitFor.
func receive(t *testing.T, s store.Subscription) string {
	t.Helper()
	select {
	case m, ok := <-s.C():
		if !ok {
			t.Fatalf("subscription closed, want a message")
		}
		return string(m)
	case <-time.After(waitFor):
		t.Fatalf("no message within %v", waitFor)
		return ""
	}
}

// waitClosed drains s until its channel closes, failing after waitFor.
func waitClosed(t *testing.T, s store.Subscription) {
	t.Helper()
	timeout := time.After(waitFor)
	for {
		select {
		case _, ok := <-s.C():
			if !ok {
				return
			}
		case <-timeout:
			t.Fatalf("subscription channel not closed %v after Close", waitFor)
		}
	}
}
