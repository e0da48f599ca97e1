package storetest

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sync/errgroup"

	"github.com/svc-gateway/svc/internal/store"
)

// CounterKV is what ExerciseCounters runs on: the counters, and the Values
// that share their key space. Get reads a counter as its decimal integer (as
// limit, route and health read spend and figures back), and a counter
// operation on a value Set as a decimal integer counts from it.
type CounterKV interface {
	store.Counters
	store.Values
}

// ExerciseCounters checks that a store's Counters behave as store.Counters
// documents: IncrBy, Window, Reserve, Admit and Settle, their expiry, and
// their atomicity under concurrent callers (limits.go, admit.go). newStore
// follows ExerciseValues' rules.
func ExerciseCounters[S CounterKV](t *testing.T, newStore func(t *testing.T) S) {
	t.Helper()
	open := opener(newStore)
	counters := func(t *testing.T) CounterKV { return open(t) }

	t.Run("IncrBy", func(t *testing.T) { incrBy(t, counters(t)) })
	t.Run("IncrByTTL", func(t *testing.T) { incrByTTL(t, counters(t)) })
	t.Run("IncrByConcurrent", func(t *testing.T) { incrByConcurrent(t, counters(t)) })

	exerciseWindow(t, counters)
	exerciseReserve(t, counters)
	exerciseAdmit(t, counters)

	afterClose(t, open, "IncrBy", func(kv S) error {
		_, err := kv.IncrBy(context.Background(), "k", 1, 0)
		return err
	})
}

// incrBy checks IncrBy's results step by step, on new and existing
// counters, that Get reads a counter as its decimal integer, and IncrBy on
// values: one Set as a decimal integer counts from it, another is an error.
func incrBy(t *testing.T, kv CounterKV) {
	ctx := t.Context()
	steps := []struct {
		key   string
		delta int64
		want  int64
	}{
		{"n", 1, 1},
		{"n", 1, 2},
		{"n", 40, 42},
		{"n", -50, -8},
		{"n", 0, -8},
		{"m", -3, -3},
		{"z", 0, 0},
	}
	for i, s := range steps {
		got, err := kv.IncrBy(ctx, s.key, s.delta, 0)
		if err != nil {
			t.Fatalf("step %d: IncrBy(%q, %d): %v", i, s.key, s.delta, err)
		}
		if got != s.want {
			t.Errorf("step %d: IncrBy(%q, %d): got %d, want %d", i, s.key, s.delta, got, s.want)
		}
	}
	if got, err := kv.Get(ctx, "n"); err != nil || string(got) != "-8" {
		t.Errorf("Get(n) after IncrBy: got %q, %v, want %q", got, err, "-8")
	}
	if err := kv.Set(ctx, "set", []byte("41"), 0); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if got, err := kv.IncrBy(ctx, "set", 1, 0); err != nil || got != 42 {
		t.Errorf("IncrBy on a value set as %q: got %d, %v, want 42", "41", got, err)
	}
	if err := kv.Set(ctx, "text", []byte("not a number"), 0); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if got, err := kv.IncrBy(ctx, "text", 1, 0); err == nil {
		t.Errorf("IncrBy on a non-integer value: got %d, nil error, want an error", got)
	}
}

// incrByTTL checks IncrBy's ttl: a new counter gets it and expires, later
// increments do not extend it, and a counter made without one never gets one.
func incrByTTL(t *testing.T, kv CounterKV) {
	ctx := t.Context()
	const short = 80 * time.Millisecond
	// A new counter gets the ttl, and later increments do not extend it.
	window, _ := BeforeExpiry(t, short, 32*short, "window", func(key string, ttl time.Duration) {
		if _, err := kv.IncrBy(ctx, key, 1, ttl); err != nil {
			t.Fatalf("IncrBy: %v", err)
		}
		if _, err := kv.IncrBy(ctx, key, 1, time.Hour); err != nil {
			t.Fatalf("IncrBy: %v", err)
		}
	})
	// An existing counter without expiry does not get one.
	if _, err := kv.IncrBy(ctx, "total", 1, 0); err != nil {
		t.Fatalf("IncrBy: %v", err)
	}
	if _, err := kv.IncrBy(ctx, "total", 1, short); err != nil {
		t.Fatalf("IncrBy: %v", err)
	}
	waitNotFound(t, kv, window)
	if got, err := kv.IncrBy(ctx, window, 5, time.Hour); err != nil || got != 5 {
		t.Errorf("IncrBy after the window expired: got %d, %v, want 5", got, err)
	}
	time.Sleep(2 * short)
	if got, err := kv.Get(ctx, "total"); err != nil || string(got) != "2" {
		t.Errorf("Get(total) after a later IncrBy with a ttl: got %q, %v, want %q (ttl applies only on create)", got, err, "2")
	}
}

// BeforeExpiry runs calls, which must finish within a ttl (create a
// counter with it and write it again, restart the store holding it), on key
// with ttl short, and returns the key and ttl once they took less than the
// ttl. When they took longer (a busy machine stalled, so the counter may
// have expired before the calls were done, and any answer is right) it runs
// them again on a new key with twice the ttl, up to longest; then it skips
// the test.
func BeforeExpiry(t *testing.T, short, longest time.Duration, key string, calls func(key string, ttl time.Duration)) (string, time.Duration) {
	t.Helper()
	for i, ttl := 0, short; ; i, ttl = i+1, 2*ttl {
		k := key
		if i > 0 {
			k += "-" + strconv.Itoa(i)
		}
		start := time.Now()
		calls(k, ttl)
		d := time.Since(start)
		if d < ttl {
			return k, ttl
		}
		if ttl >= longest {
			t.Skipf("the calls on %s took %v, over its ttl %v: the machine stalls too long to check the ttl", k, d, ttl)
		}
		t.Logf("the calls on %s took %v, over its ttl %v: again with twice the ttl", k, d, ttl)
	}
}

// incrByConcurrent checks that concurrent IncrBy calls on one counter each
// get a distinct value, together 1..n, and leave the counter at n.
func incrByConcurrent(t *testing.T, kv CounterKV) {
	const workers, each = 50, 20
	seen, err := incrConcurrently(t.Context(), kv, "counter", workers, each)
	if err != nil {
		t.Fatalf("IncrBy: %v", err)
	}
	slices.Sort(seen)
	want := make([]int64, workers*each)
	for i := range want {
		want[i] = int64(i + 1)
	}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("values returned by %d concurrent IncrBy calls are not 1..%d (-want +got):\n%s", workers*each, workers*each, diff)
	}
	if got, err := kv.Get(t.Context(), "counter"); err != nil || string(got) != strconv.Itoa(workers*each) {
		t.Errorf("Get(counter): got %q, %v, want %d", got, err, workers*each)
	}
}

// incrConcurrently has workers goroutines each add 1 to key each times
// (with a ttl of an hour), and returns the values IncrBy returned, in no
// order, or the first error a worker met (that worker then stops).
func incrConcurrently(ctx context.Context, kv CounterKV, key string, workers, each int) ([]int64, error) {
	var (
		g    errgroup.Group
		mu   sync.Mutex
		seen = make([]int64, 0, workers*each)
	)
	for range workers {
		g.Go(func() error {
			for range each {
				n, err := kv.IncrBy(ctx, key, 1, time.Hour)
				if err != nil {
					return err
				}
				mu.Lock()
				seen = append(seen, n)
				mu.Unlock()
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return seen, nil
}
