package sqlstore_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// TestCounters checks the durable counters' table: rows replaced by
// absolute values, removed, expired, and keys of any bytes kept exactly.
func TestCounters(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			c := sqlstore.NewCounters(open(t, b.url(t)))
			ctx := t.Context()
			now := time.Now()
			later := now.Add(time.Hour).Truncate(time.Microsecond).UTC()
			soon := now.Add(time.Minute).Truncate(time.Microsecond).UTC()
			odd := "k\x00\xff:é"
			save := func(set []memkv.Counter, gone []string, at time.Time) {
				t.Helper()
				if err := c.SaveCounters(ctx, set, gone, at); err != nil {
					t.Fatalf("SaveCounters: %v", err)
				}
			}
			load := func(at time.Time) []memkv.Counter {
				t.Helper()
				got, err := c.LoadCounters(ctx, at)
				if err != nil {
					t.Fatalf("LoadCounters: %v", err)
				}
				slices.SortFunc(got, func(a, b memkv.Counter) int { return strings.Compare(a.Key, b.Key) })
				return got
			}
			if got := load(now); len(got) != 0 {
				t.Fatalf("LoadCounters on an empty table: got %v", got)
			}
			many := make([]memkv.Counter, 700) // more than one statement's worth
			for i := range many {
				many[i] = memkv.Counter{Key: "many:" + strings.Repeat("x", i%7) + string(rune('a'+i%26)) + string(rune(i)), Value: int64(i)}
			}
			save(append([]memkv.Counter{
				{Key: "a", Value: 1},
				{Key: "b", Value: -2, Expires: later},
				{Key: "soon", Value: 3, Expires: soon},
				{Key: odd, Value: 1 << 62},
			}, many...), nil, now)
			save([]memkv.Counter{{Key: "a", Value: 10, Expires: later}}, []string{"b", "missing"}, now)
			manyKeys := make([]string, len(many))
			for i, m := range many {
				manyKeys[i] = m.Key
			}
			save(nil, manyKeys, now)
			want := []memkv.Counter{{Key: "a", Value: 10, Expires: later}, {Key: odd, Value: 1 << 62}, {Key: "soon", Value: 3, Expires: soon}}
			slices.SortFunc(want, func(a, b memkv.Counter) int { return strings.Compare(a.Key, b.Key) })
			if diff := cmp.Diff(want, load(now)); diff != "" {
				t.Errorf("LoadCounters (-want +got):\n%s", diff)
			}
			// A counter expired at the time of the load is not returned, and
			// the next save removes it.
			if diff := cmp.Diff(slices.DeleteFunc(slices.Clone(want), func(c memkv.Counter) bool { return c.Key == "soon" }),
				load(soon)); diff != "" {
				t.Errorf("LoadCounters after an expiry (-want +got):\n%s", diff)
			}
			save(nil, nil, soon)
			if got := load(now); len(got) != 2 {
				t.Errorf("LoadCounters after a save past an expiry: got %d counters, want 2 (the expired one removed)", len(got))
			}
		})
	}
}

// TestMemKVRestart: the in-process KV over the durable counters keeps a
// spend counter across a restart, with its expiry: it reserves spend,
// closes, and a new KV over the same database has the counter back, which
// still refuses what the cap refuses and expires when it would have.
func TestMemKVRestart(t *testing.T) {
	keep := func(key string) bool { return strings.HasPrefix(key, "limit:") }
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			url := b.url(t)
			ctx := t.Context()
			openKV := func() *memkv.KV {
				t.Helper()
				kv, err := memkv.Open(ctx, memkv.Options{Durable: sqlstore.NewCounters(open(t, url)), Keep: keep})
				if err != nil {
					t.Fatalf("memkv.Open: %v", err)
				}
				return kv
			}
			// The restart must come within the ttl (storetest.BeforeExpiry
			// runs it again with a longer one after a stall).
			var (
				kv         *memkv.KV
				start      time.Time
				got        []byte
				gerr, rerr error
				ok         bool
				total      int64
			)
			t.Cleanup(func() {
				if kv != nil {
					kv.Close()
				}
			})
			key, ttl := storetest.BeforeExpiry(t, 1500*time.Millisecond, 6*time.Second, "limit:spend", func(key string, ttl time.Duration) {
				if kv != nil {
					kv.Close()
				}
				first := openKV()
				start = time.Now()
				if ok, total, err := first.Reserve(ctx, key, 700, 1000, ttl); err != nil || !ok || total != 700 {
					t.Fatalf("Reserve: got %v, %d, %v, want 700 reserved", ok, total, err)
				}
				if _, err := first.IncrBy(ctx, "cache:other", 1, 0); err != nil {
					t.Fatal(err)
				}
				if err := first.Close(); err != nil {
					t.Fatalf("Close: %v", err)
				}
				kv = openKV()
				got, gerr = kv.Get(ctx, key)
				ok, total, rerr = kv.Reserve(ctx, key, 400, 1000, ttl)
			})
			if gerr != nil || string(got) != "700" {
				t.Fatalf("Get(%s) after the restart: got %q, %v, want %q", key, got, gerr, "700")
			}
			if _, err := kv.Get(ctx, "cache:other"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get(cache:other), not durable, after the restart: got %v, want store.ErrNotFound", err)
			}
			if rerr != nil || ok || total != 700 {
				t.Errorf("Reserve over the cap after the restart: got %v, %d, %v, want refused at 700", ok, total, rerr)
			}
			deadline := start.Add(ttl + 5*time.Second)
			for {
				_, err := kv.Get(ctx, key)
				if errors.Is(err, store.ErrNotFound) {
					break
				}
				if err != nil || time.Now().After(deadline) {
					t.Fatalf("Get(%s) 5s after its ttl: %v, want it expired", key, err)
				}
				time.Sleep(10 * time.Millisecond)
			}
			if gone := time.Since(start); gone < ttl {
				t.Errorf("the counter expired %v after it was created, want its ttl %v (the expiry was not kept)", gone, ttl)
			}
		})
	}
}

// TestDurableMemKVConformance runs the Values and Counters suites on an
// in-process KV that keeps every key in SQLite and writes every 10 ms:
// durability changes nothing a caller sees.
func TestDurableMemKVConformance(t *testing.T) {
	newKV := func(t *testing.T) *memkv.KV {
		db := storetest.OpenSQL(t, "sqlite://"+filepath.Join(t.TempDir(), "svc.db"))
		kv, err := memkv.Open(t.Context(), memkv.Options{Durable: sqlstore.NewCounters(db),
			Keep: func(string) bool { return true }, FlushEvery: 10 * time.Millisecond})
		if err != nil {
			t.Fatalf("memkv.Open: %v", err)
		}
		return kv
	}
	t.Run("Values", func(t *testing.T) { storetest.ExerciseValues(t, newKV) })
	t.Run("Counters", func(t *testing.T) { storetest.ExerciseCounters(t, newKV) })
}
