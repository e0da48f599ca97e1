// Package storetest holds the conformance suites every store implementation
// runs from its own tests (ExerciseKV, ExerciseKeyStore,
// ExerciseProviderKeyStore, ExerciseLogStore), in the manner of Vault's
// physical.ExerciseBackend, and the helpers that give each test an isolated
// namespace on the shared PostgreSQL and Redis servers (PostgresURL, RedisKV).
//
// Only _test.go files may import storetest.
package storetest

import (
	"bytes"
	"errors"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/store"
)

// waitFor is how long the suites poll for something that should happen soon
// (a TTL to lapse, a message to arrive) before failing.
const waitFor = 5 * time.Second

// ExerciseKV checks that a store.KV behaves as the interface documents,
// including the atomic Window and Reserve (limits.go).
// newKV must return a new, empty KV (or one with its own key namespace) each
// time it is called; the suite closes it when the subtest ends, and subtests
// run in parallel.
func ExerciseKV(t *testing.T, newKV func(t *testing.T) store.KV) {
	t.Helper()
	open := func(t *testing.T) store.KV {
		t.Helper()
		t.Parallel()
		kv := newKV(t)
		t.Cleanup(func() {
			if err := kv.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
		return kv
	}

	t.Run("GetMissing", func(t *testing.T) {
		kv := open(t)
		_, err := kv.Get(t.Context(), "missing")
		if !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("Get(missing): got error %v, want store.ErrNotFound", err)
		}
	})

	t.Run("SetGet", func(t *testing.T) {
		kv := open(t)
		tests := []struct {
			name  string
			key   string
			value []byte
		}{
			{"text", "a", []byte("hello")},
			{"empty", "b", []byte{}},
			{"binary", "c", []byte{0, 1, 0xfe, 0xff, '\n', 0}},
			{"overwrite", "a", []byte("again")},
			{"key with spaces and colons", "x:y z/ü", []byte("v")},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				v := bytes.Clone(tt.value)
				if err := kv.Set(t.Context(), tt.key, v, 0); err != nil {
					t.Fatalf("Set: %v", err)
				}
				if len(v) > 0 {
					v[0] ^= 0xff // the store must have kept its own copy
				}
				got, err := kv.Get(t.Context(), tt.key)
				if err != nil {
					t.Fatalf("Get: %v", err)
				}
				if !bytes.Equal(got, tt.value) {
					t.Errorf("Get(%q): got %q, want %q", tt.key, got, tt.value)
				}
			})
		}
	})

	t.Run("Delete", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		for _, k := range []string{"a", "b", "keep"} {
			if err := kv.Set(ctx, k, []byte(k), 0); err != nil {
				t.Fatalf("Set(%q): %v", k, err)
			}
		}
		if err := kv.AppendLog(ctx, "log", store.LogLimit{MaxAge: time.Hour}, []byte("x")); err != nil {
			t.Fatalf("AppendLog: %v", err)
		}
		if err := kv.Delete(ctx, "a", "b", "log", "never-set"); err != nil {
			t.Fatalf("Delete: got error %v, want nil", err)
		}
		if err := kv.Delete(ctx); err != nil {
			t.Fatalf("Delete(): got error %v, want nil", err)
		}
		for _, k := range []string{"a", "b"} {
			if _, err := kv.Get(ctx, k); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get(%q) after Delete: got error %v, want store.ErrNotFound", k, err)
			}
		}
		if got, err := kv.ReadLog(ctx, "log", time.Time{}, 0); err != nil || len(got) != 0 {
			t.Errorf("ReadLog(log) after Delete: got %q, %v, want no entries", got, err)
		}
		if got, err := kv.Get(ctx, "keep"); err != nil || string(got) != "keep" {
			t.Errorf("Get(keep): got %q, %v, want %q", got, err, "keep")
		}
	})

	t.Run("TTL", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		const short = 80 * time.Millisecond
		start := time.Now()
		if err := kv.Set(ctx, "short", []byte("s"), short); err != nil {
			t.Fatalf("Set(short): %v", err)
		}
		if err := kv.Set(ctx, "long", []byte("l"), time.Hour); err != nil {
			t.Fatalf("Set(long): %v", err)
		}
		if err := kv.Set(ctx, "forever", []byte("f"), 0); err != nil {
			t.Fatalf("Set(forever): %v", err)
		}
		_, err := kv.Get(ctx, "short")
		if time.Since(start) < short/2 && err != nil {
			t.Errorf("Get(short) before its ttl: got error %v, want the value", err)
		}
		waitNotFound(t, kv, "short")
		for _, k := range []string{"long", "forever"} {
			if _, err := kv.Get(ctx, k); err != nil {
				t.Errorf("Get(%q) after the short ttl lapsed: got error %v, want the value", k, err)
			}
		}
		if err := kv.Set(ctx, "short", []byte("s2"), time.Hour); err != nil {
			t.Fatalf("Set(short) again: %v", err)
		}
		if got, err := kv.Get(ctx, "short"); err != nil || string(got) != "s2" {
			t.Errorf("Get(short) after it expired and was set again: got %q, %v, want %q", got, err, "s2")
		}
	})

	t.Run("IncrBy", func(t *testing.T) {
		kv := open(t)
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
	})

	t.Run("IncrByTTL", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		const short = 80 * time.Millisecond
		// A new counter gets the ttl, and later increments do not extend it.
		if _, err := kv.IncrBy(ctx, "window", 1, short); err != nil {
			t.Fatalf("IncrBy: %v", err)
		}
		if _, err := kv.IncrBy(ctx, "window", 1, time.Hour); err != nil {
			t.Fatalf("IncrBy: %v", err)
		}
		// An existing counter without expiry does not get one.
		if _, err := kv.IncrBy(ctx, "total", 1, 0); err != nil {
			t.Fatalf("IncrBy: %v", err)
		}
		if _, err := kv.IncrBy(ctx, "total", 1, short); err != nil {
			t.Fatalf("IncrBy: %v", err)
		}
		waitNotFound(t, kv, "window")
		if got, err := kv.IncrBy(ctx, "window", 5, time.Hour); err != nil || got != 5 {
			t.Errorf("IncrBy after the window expired: got %d, %v, want 5", got, err)
		}
		time.Sleep(2 * short)
		if got, err := kv.Get(ctx, "total"); err != nil || string(got) != "2" {
			t.Errorf("Get(total) after a later IncrBy with a ttl: got %q, %v, want %q (ttl applies only on create)", got, err, "2")
		}
	})

	t.Run("IncrByConcurrent", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		const workers, each = 50, 20
		var (
			wg   sync.WaitGroup
			mu   sync.Mutex
			seen = make([]int64, 0, workers*each)
		)
		errs := make(chan error, workers)
		for range workers {
			wg.Go(func() {
				for range each {
					n, err := kv.IncrBy(ctx, "counter", 1, time.Hour)
					if err != nil {
						errs <- err
						return
					}
					mu.Lock()
					seen = append(seen, n)
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
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
		if got, err := kv.Get(ctx, "counter"); err != nil || string(got) != strconv.Itoa(workers*each) {
			t.Errorf("Get(counter): got %q, %v, want %d", got, err, workers*each)
		}
	})

	t.Run("AppendLogOrder", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		if err := kv.AppendLog(ctx, "log", store.LogLimit{MaxAge: time.Hour}, []byte("a"), []byte("b"), []byte("c")); err != nil {
			t.Fatalf("AppendLog: %v", err)
		}
		if err := kv.AppendLog(ctx, "log", store.LogLimit{MaxAge: time.Hour}, []byte("d")); err != nil {
			t.Fatalf("AppendLog: %v", err)
		}
		if err := kv.AppendLog(ctx, "log", store.LogLimit{MaxAge: time.Hour}); err != nil {
			t.Fatalf("AppendLog with no values: %v", err)
		}
		tests := []struct {
			name  string
			key   string
			limit int
			want  []string
		}{
			{"all", "log", 0, []string{"a", "b", "c", "d"}},
			{"limit", "log", 2, []string{"a", "b"}},
			{"limit above size", "log", 10, []string{"a", "b", "c", "d"}},
			{"missing log", "nolog", 0, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := kv.ReadLog(ctx, tt.key, time.Time{}, tt.limit)
				if err != nil {
					t.Fatalf("ReadLog: %v", err)
				}
				if diff := cmp.Diff(tt.want, strs(got)); diff != "" {
					t.Errorf("ReadLog(%q, limit %d) (-want +got):\n%s", tt.key, tt.limit, diff)
				}
			})
		}
	})

	t.Run("AppendLogSince", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		// Implementations may stamp entries with millisecond precision: keep
		// the mark a few milliseconds away from every append.
		const gap = 15 * time.Millisecond
		if err := kv.AppendLog(ctx, "log", store.LogLimit{MaxAge: time.Hour}, []byte("a"), []byte("b")); err != nil {
			t.Fatalf("AppendLog: %v", err)
		}
		time.Sleep(gap)
		mark := time.Now()
		time.Sleep(gap)
		if err := kv.AppendLog(ctx, "log", store.LogLimit{MaxAge: time.Hour}, []byte("c"), []byte("d")); err != nil {
			t.Fatalf("AppendLog: %v", err)
		}
		tests := []struct {
			name  string
			since time.Time
			limit int
			want  []string
		}{
			{"zero since", time.Time{}, 0, []string{"a", "b", "c", "d"}},
			{"since mark", mark, 0, []string{"c", "d"}},
			{"since mark, limit", mark, 1, []string{"c"}},
			{"since future", time.Now().Add(time.Minute), 0, nil},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				got, err := kv.ReadLog(ctx, "log", tt.since, tt.limit)
				if err != nil {
					t.Fatalf("ReadLog: %v", err)
				}
				if diff := cmp.Diff(tt.want, strs(got)); diff != "" {
					t.Errorf("ReadLog (-want +got):\n%s", diff)
				}
			})
		}
	})

	t.Run("AppendLogTrim", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		const maxAge = 100 * time.Millisecond
		if err := kv.AppendLog(ctx, "log", store.LogLimit{MaxAge: maxAge}, []byte("old1"), []byte("old2")); err != nil {
			t.Fatalf("AppendLog: %v", err)
		}
		time.Sleep(maxAge + maxAge/2)
		if err := kv.AppendLog(ctx, "log", store.LogLimit{MaxAge: maxAge}, []byte("new")); err != nil {
			t.Fatalf("AppendLog: %v", err)
		}
		got, err := kv.ReadLog(ctx, "log", time.Time{}, 0)
		if err != nil {
			t.Fatalf("ReadLog: %v", err)
		}
		// "new" itself may already have aged out on a slow machine.
		if g := strs(got); len(g) > 1 || (len(g) == 1 && g[0] != "new") {
			t.Errorf("ReadLog after entries aged past maxAge: got %q, want [new]", g)
		}
		// The whole log expires maxAge after the last append.
		deadline := time.Now().Add(waitFor)
		for {
			got, err := kv.ReadLog(ctx, "log", time.Time{}, 0)
			if err != nil {
				t.Fatalf("ReadLog: %v", err)
			}
			if len(got) == 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("ReadLog %v after the last append: got %q, want the log expired", waitFor, strs(got))
			}
			time.Sleep(10 * time.Millisecond)
		}
		// maxAge 0 keeps entries.
		if err := kv.AppendLog(ctx, "keep", store.LogLimit{MaxAge: 0}, []byte("x")); err != nil {
			t.Fatalf("AppendLog(maxAge 0): %v", err)
		}
		if got, err := kv.ReadLog(ctx, "keep", time.Time{}, 0); err != nil || len(got) != 1 {
			t.Errorf("ReadLog after AppendLog with maxAge 0: got %q, %v, want [x]", strs(got), err)
		}
	})

	t.Run("AppendLogMaxLen", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		const maxLen, total = 1000, 5000
		lim := store.LogLimit{MaxAge: time.Hour, MaxLen: maxLen}
		for start := 0; start < total; start += 500 {
			batch := make([][]byte, 500)
			for i := range batch {
				batch[i] = []byte(strconv.Itoa(start + i))
			}
			if err := kv.AppendLog(ctx, "capped", lim, batch...); err != nil {
				t.Fatalf("AppendLog: %v", err)
			}
		}
		got, err := kv.ReadLog(ctx, "capped", time.Time{}, 0)
		if err != nil {
			t.Fatalf("ReadLog: %v", err)
		}
		// Redis trims whole stream nodes (100 entries by default), so allow a
		// little more than MaxLen, never less, and always the newest.
		if len(got) < maxLen || len(got) > maxLen+250 {
			t.Fatalf("ReadLog after %d appends with MaxLen %d: got %d entries", total, maxLen, len(got))
		}
		if last := string(got[len(got)-1]); last != strconv.Itoa(total-1) {
			t.Errorf("newest entry = %s, want %d", last, total-1)
		}
		if first, want := string(got[0]), strconv.Itoa(total-len(got)); first != want {
			t.Errorf("oldest kept entry = %s, want %s (the oldest are dropped first)", first, want)
		}
	})

	t.Run("PublishSubscribe", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		if err := kv.Publish(ctx, "nobody", []byte("lost")); err != nil {
			t.Fatalf("Publish with no subscriber: got error %v, want nil", err)
		}
		s1 := subscribe(t, kv, "ch")
		s2 := subscribe(t, kv, "ch")
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

		if err := s1.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
		if err := s1.Close(); err != nil {
			t.Errorf("second Close: got error %v, want nil", err)
		}
		waitClosed(t, s1)
		if err := kv.Publish(ctx, "ch", []byte("m3")); err != nil {
			t.Fatalf("Publish: %v", err)
		}
		if got := receive(t, s2); got != "m3" {
			t.Errorf("remaining subscription: got %q, want %q", got, "m3")
		}
	})

	t.Run("SlowSubscriber", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		s := subscribe(t, kv, "ch")
		const n = 1000
		done := make(chan error, 1)
		go func() {
			for i := range n {
				if err := kv.Publish(ctx, "ch", []byte(strconv.Itoa(i))); err != nil {
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
		if got := receive(t, s); got != "0" {
			t.Errorf("first message: got %q, want %q", got, "0")
		}
	})

	exerciseWindow(t, open)
	exerciseReserve(t, open)
	exerciseAdmit(t, open)

	t.Run("Ping", func(t *testing.T) {
		kv := open(t)
		if err := kv.Ping(t.Context()); err != nil {
			t.Errorf("Ping: got error %v, want nil", err)
		}
	})

	t.Run("Close", func(t *testing.T) {
		kv := open(t)
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
		if _, err := kv.Get(t.Context(), "k"); err == nil || errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get after Close: got error %v, want a closed error", err)
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
func waitNotFound(t *testing.T, kv store.KV, key string) {
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

func subscribe(t *testing.T, kv store.KV, channel string) store.Subscription {
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
