package storetest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/store"
)

// LogKV is what ExerciseLogs runs on: the logs, and Values' Delete, which
// removes a log as it removes a value.
type LogKV interface {
	store.Logs
	Delete(ctx context.Context, keys ...string) error
}

// ExerciseLogs checks that a store's Logs behave as store.Logs documents:
// order, since, trimming by age and length, expiry, and deletion. newStore
// follows ExerciseValues' rules.
func ExerciseLogs[S LogKV](t *testing.T, newStore func(t *testing.T) S) {
	t.Helper()
	open := opener(newStore)

	t.Run("AppendLogOrder", func(t *testing.T) { logOrder(t, open(t)) })
	t.Run("AppendLogSince", func(t *testing.T) { logSince(t, open(t)) })
	t.Run("AppendLogTrim", func(t *testing.T) { logTrim(t, open(t)) })
	t.Run("AppendLogMaxLen", func(t *testing.T) { logMaxLen(t, open(t)) })
	t.Run("DeleteLog", func(t *testing.T) { logDelete(t, open(t)) })

	afterClose(t, open, "ReadLog", func(kv S) error {
		_, err := kv.ReadLog(context.Background(), "log", time.Time{}, 0)
		return err
	})
}

// logOrder checks that ReadLog returns appended entries oldest first, up to
// a limit, that an append with no values adds nothing, and that a missing
// log reads as empty.
func logOrder(t *testing.T, kv LogKV) {
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
}

// logSince checks that ReadLog returns only the entries appended after
// since (all for a zero since, none for a future one), up to a limit.
func logSince(t *testing.T, kv LogKV) {
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
}

// logTrim checks trimming by age: entries older than maxAge are dropped on
// append, the whole log expires maxAge after its last append, and maxAge 0
// keeps entries.
func logTrim(t *testing.T, kv LogKV) {
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
	waitLogExpired(t, kv, "log")
	// maxAge 0 keeps entries.
	if err := kv.AppendLog(ctx, "keep", store.LogLimit{MaxAge: 0}, []byte("x")); err != nil {
		t.Fatalf("AppendLog(maxAge 0): %v", err)
	}
	if got, err := kv.ReadLog(ctx, "keep", time.Time{}, 0); err != nil || len(got) != 1 {
		t.Errorf("ReadLog after AppendLog with maxAge 0: got %q, %v, want [x]", strs(got), err)
	}
}

// waitLogExpired polls until the log at key reads as empty, failing at
// once if ReadLog errs and after waitFor if the log still has entries.
func waitLogExpired(t *testing.T, kv LogKV, key string) {
	t.Helper()
	Eventually(t, waitFor, func() error {
		got, err := kv.ReadLog(t.Context(), key, time.Time{}, 0)
		if err != nil {
			t.Fatalf("ReadLog: %v", err)
		}
		if len(got) != 0 {
			return fmt.Errorf("ReadLog after the last append: got %q, want the log expired", strs(got))
		}
		return nil
	})
}

// logMaxLen checks trimming by length: after many appends with MaxLen, the
// log keeps about MaxLen entries (never fewer), the newest, oldest first.
func logMaxLen(t *testing.T, kv LogKV) {
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
}

// logDelete checks that Delete removes a log (ignoring keys never set) and
// leaves other logs alone.
func logDelete(t *testing.T, kv LogKV) {
	ctx := t.Context()
	for _, k := range []string{"log", "keep"} {
		if err := kv.AppendLog(ctx, k, store.LogLimit{MaxAge: time.Hour}, []byte("x")); err != nil {
			t.Fatalf("AppendLog(%q): %v", k, err)
		}
	}
	if err := kv.Delete(ctx, "log", "never-set"); err != nil {
		t.Fatalf("Delete: got error %v, want nil", err)
	}
	if got, err := kv.ReadLog(ctx, "log", time.Time{}, 0); err != nil || len(got) != 0 {
		t.Errorf("ReadLog(log) after Delete: got %q, %v, want no entries", got, err)
	}
	if got, err := kv.ReadLog(ctx, "keep", time.Time{}, 0); err != nil || len(got) != 1 {
		t.Errorf("ReadLog(keep): got %q, %v, want [x]", strs(got), err)
	}
}
