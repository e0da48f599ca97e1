package rediskv_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/redis/go-redis/v9"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/rediskv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

func TestStreams(t *testing.T) {
	storetest.RedisKV(t)
	storetest.ExerciseStreams(t, open, storetest.StreamsCaps{MultiConsumer: true})
}

// rawClient is a client of the test server, to do to a KV's streams what
// svc never does (XDEL, foreign fields); key gives a KV key's Redis key.
func rawClient(t *testing.T) *redis.Client {
	t.Helper()
	opts, err := redis.ParseURL(os.Getenv(storetest.RedisURLEnv))
	if err != nil {
		t.Fatalf("parse %s: %v", storetest.RedisURLEnv, err)
	}
	c := redis.NewClient(opts)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func appendN(t testing.TB, kv *rediskv.KV, key string, n int) {
	t.Helper()
	vals := make([][]byte, n)
	for i := range vals {
		vals[i] = []byte(strconv.Itoa(i))
	}
	if err := kv.StreamAppend(context.Background(), key, vals...); err != nil {
		t.Fatalf("StreamAppend: %v", err)
	}
}

func read(t testing.TB, kv *rediskv.KV, key string, count int) []store.StreamEntry {
	t.Helper()
	got, err := kv.StreamRead(context.Background(), key, "g", "c1", count, 0, 0)
	if err != nil {
		t.Fatalf("StreamRead: %v", err)
	}
	return got
}

func vals(es []store.StreamEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, string(e.Value))
	}
	return out
}

func ids(es []store.StreamEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.ID)
	}
	return out
}

// TestStreamDeletedPending checks that entries deleted (XDEL) while
// pending are acknowledged and skipped, and that a read still fills its
// count from the entries after them.
func TestStreamDeletedPending(t *testing.T) {
	kv := storetest.RedisKV(t)
	raw := rawClient(t)
	ctx := t.Context()
	appendN(t, kv, "s", 5)
	got := read(t, kv, "s", 5)
	if err := raw.XDel(ctx, kv.Prefix()+"s", got[1].ID, got[2].ID).Err(); err != nil {
		t.Fatalf("XDEL: %v", err)
	}
	if got := read(t, kv, "s", 3); !cmp.Equal(vals(got), []string{"0", "3", "4"}) {
		t.Errorf("StreamRead(count 3) with entries 1, 2 deleted: got %q, want [0 3 4]", vals(got))
	}
	info, err := kv.StreamInfo(ctx, "s", "g")
	if err != nil {
		t.Fatalf("StreamInfo: %v", err)
	}
	if info.Pending != 3 || info.Length != 3 {
		t.Errorf("StreamInfo: Pending %d, Length %d, want 3, 3 (the deleted entries acknowledged)", info.Pending, info.Length)
	}
}

// TestStreamUndeliveredCounted checks Undelivered when Redis cannot report
// the group's lag (an entry deleted after the last delivery).
func TestStreamUndeliveredCounted(t *testing.T) {
	kv := storetest.RedisKV(t)
	raw := rawClient(t)
	ctx := t.Context()
	appendN(t, kv, "s", 6)
	read(t, kv, "s", 1)
	all, err := kv.StreamUnacked(ctx, "s", "g", 10)
	if err != nil {
		t.Fatalf("StreamUnacked: %v", err)
	}
	if err := raw.XDel(ctx, kv.Prefix()+"s", all[2].ID).Err(); err != nil { // entry 3
		t.Fatalf("XDEL: %v", err)
	}
	info, err := kv.StreamInfo(ctx, "s", "g")
	if err != nil {
		t.Fatalf("StreamInfo: %v", err)
	}
	if info.Length != 5 || info.Pending != 1 || info.Undelivered != 4 {
		t.Errorf("StreamInfo: Length %d, Pending %d, Undelivered %d, want 5, 1, 4", info.Length, info.Pending, info.Undelivered)
	}
}

// TestStreamForeignEntry checks that an entry without the value field (not
// written by StreamAppend) is delivered with no value instead of failing
// every read.
func TestStreamForeignEntry(t *testing.T) {
	kv := storetest.RedisKV(t)
	raw := rawClient(t)
	if err := raw.XAdd(t.Context(), &redis.XAddArgs{Stream: kv.Prefix() + "s", Values: []any{"other", "x"}}).Err(); err != nil {
		t.Fatalf("XADD: %v", err)
	}
	appendN(t, kv, "s", 1)
	got := read(t, kv, "s", 10)
	if len(got) != 2 || got[0].Value != nil || string(got[1].Value) != "0" {
		t.Errorf("StreamRead: got %q, want [\"\" 0]", vals(got))
	}
}

// TestStreamRecreated checks that a read re-creates the group of a stream
// deleted and appended to again, and reads it from its start.
func TestStreamRecreated(t *testing.T) {
	kv := storetest.RedisKV(t)
	appendN(t, kv, "s", 2)
	read(t, kv, "s", 10)
	if err := kv.Delete(t.Context(), "s"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	appendN(t, kv, "s", 1)
	if got := read(t, kv, "s", 10); !cmp.Equal(vals(got), []string{"0"}) {
		t.Errorf("StreamRead after the stream was deleted and appended to: got %q, want [0]", vals(got))
	}
}

// TestStreamTrimBudget checks that one StreamTrim removes at most 10,000
// entries by MaxLen and that later calls continue.
func TestStreamTrimBudget(t *testing.T) {
	kv := storetest.RedisKV(t)
	ctx := t.Context()
	appendN(t, kv, "s", 25001)
	if err := kv.StreamAck(ctx, "s", "g", ids(read(t, kv, "s", 25001))...); err != nil {
		t.Fatalf("StreamAck: %v", err)
	}
	for _, want := range []int64{10000, 10000, 5000, 0} {
		n, err := kv.StreamTrim(ctx, "s", "g", store.LogLimit{MaxLen: 1})
		if err != nil {
			t.Fatalf("StreamTrim: %v", err)
		}
		if n != want {
			t.Errorf("StreamTrim(MaxLen 1) of 25,001 acknowledged entries: removed %d, want %d", n, want)
		}
	}
}

// BenchmarkStreams measures appending a batch of 256 values of 1 KB, and
// reading and acknowledging 256 entries.
func BenchmarkStreams(b *testing.B) {
	kv := storetest.RedisKV(b)
	ctx := context.Background()
	batch := make([][]byte, 256)
	for i := range batch {
		batch[i] = make([]byte, 1024)
	}
	b.Run("Append256x1KB", func(b *testing.B) {
		b.SetBytes(256 * 1024)
		i := 0
		for b.Loop() {
			if err := kv.StreamAppend(ctx, "append", batch...); err != nil {
				b.Fatal(err)
			}
			if i++; i%64 == 0 { // keep the server's memory bounded
				b.StopTimer()
				if err := kv.Delete(ctx, "append"); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		}
	})
	b.Run("ReadAck256", func(b *testing.B) {
		b.SetBytes(256 * 1024)
		for b.Loop() {
			b.StopTimer()
			if err := kv.StreamAppend(ctx, "read", batch...); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			got, err := kv.StreamRead(ctx, "read", "g", "c1", 256, time.Minute, 0)
			if err != nil || len(got) != 256 {
				b.Fatalf("StreamRead: %d entries, %v", len(got), err)
			}
			if err := kv.StreamAck(ctx, "read", "g", ids(got)...); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			if _, err := kv.StreamTrim(ctx, "read", "g", store.LogLimit{MaxLen: 1}); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
	})
}
