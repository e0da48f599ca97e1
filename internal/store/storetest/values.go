package storetest

import (
	"bytes"
	"errors"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// ExerciseValues checks that a store.Values behaves as the interface
// documents: copies kept, overwrite, Delete, TTL. newStore must return a new,
// empty store (or one with its own key namespace) each time it is called;
// subtests run in parallel, and a store that is an io.Closer is closed when
// its subtest ends (and checked to refuse operations after Close).
func ExerciseValues[S store.Values](t *testing.T, newStore func(t *testing.T) S) {
	t.Helper()
	open := opener(newStore)

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
		if err := kv.Delete(ctx, "a", "b", "never-set"); err != nil {
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

	afterClose(t, open, "Get", func(kv S) error {
		_, err := kv.Get(t.Context(), "k")
		return err
	})
}
