package storetest

import (
	"context"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/svc-gateway/svc/internal/store"
)

// StreamsCaps says what a store.Streams implementation supports beyond one
// consumer at a time.
type StreamsCaps struct {
	// MultiConsumer: several consumers of one group read at once, each
	// entry pending for one consumer only, and a consumer's pending entries
	// are given to another only once idle for claimIdle (rediskv). Without
	// it (the local spool) the suite reads with one consumer at a time and
	// does not check whose pending entries are whose.
	MultiConsumer bool
}

// The group every stream test reads as.
const group = "g"

// ExerciseStreams checks that a store's Streams behave as store.Streams
// documents: order and values, at-least-once delivery (a consumer resumes
// its own pending entries, another claims them once idle), acknowledgement,
// trimming that never removes an unacknowledged entry, StreamInfo's
// figures, StreamUnacked, blocking reads, and, with caps.MultiConsumer,
// concurrent consumers of one group. newStore follows ExerciseValues'
// rules.
//
// "Never delivered again" (after an ack; a live consumer's entries to
// another before claimIdle) is checked within one store's life: the suite
// never reopens a store, and an implementation may deliver unacknowledged
// entries again after a restart (at least once), which its own tests cover.
func ExerciseStreams[S store.Streams](t *testing.T, newStore func(t *testing.T) S, caps StreamsCaps) {
	t.Helper()
	open := opener(newStore)

	t.Run("AppendReadAck", func(t *testing.T) { streamAppendReadAck(t, open(t)) })
	t.Run("Values", func(t *testing.T) { streamValues(t, open(t)) })
	t.Run("ResumeOwnPending", func(t *testing.T) { streamResume(t, open(t)) })
	t.Run("ClaimIdle", func(t *testing.T) { streamClaim(t, open(t), caps) })
	t.Run("Ack", func(t *testing.T) { streamAck(t, open(t)) })
	t.Run("TrimMaxLen", func(t *testing.T) { streamTrimMaxLen(t, open(t)) })
	t.Run("TrimMaxAge", func(t *testing.T) { streamTrimMaxAge(t, open(t)) })
	t.Run("Info", func(t *testing.T) { streamInfo(t, open(t)) })
	t.Run("Unacked", func(t *testing.T) { streamUnacked(t, open(t)) })
	t.Run("Block", func(t *testing.T) { streamBlock(t, open(t)) })
	t.Run("TwoConsumers", func(t *testing.T) {
		if !caps.MultiConsumer {
			t.Skip("one consumer at a time (StreamsCaps.MultiConsumer unset)")
		}
		streamTwoConsumers(t, open(t))
	})
	afterClose(t, open, "StreamRead", func(s S) error {
		_, err := s.StreamRead(context.Background(), "s", group, "c1", 1, 0, 0)
		return err
	})
}

func streamAppendReadAck(t *testing.T, s store.Streams) {
	ctx := t.Context()
	if got := readStream(t, s, "missing", "c1", 10, 0); len(got) != 0 {
		t.Errorf("StreamRead of a missing stream: got %q, want none", values(got))
	}
	appendStream(t, s, "s", "a", "b", "c")
	appendStream(t, s, "s", "d")
	if err := s.StreamAppend(ctx, "s"); err != nil {
		t.Fatalf("StreamAppend with no values: %v", err)
	}
	before := time.Now()
	got := readStream(t, s, "s", "c1", 10, 0)
	if diff := cmp.Diff([]string{"a", "b", "c", "d"}, values(got)); diff != "" {
		t.Errorf("StreamRead (-want +got):\n%s", diff)
	}
	seen := map[string]bool{}
	for _, e := range got {
		if e.ID == "" || seen[e.ID] {
			t.Errorf("entry %q: ID %q empty or repeated", e.Value, e.ID)
		}
		seen[e.ID] = true
		if d := e.Time.Sub(before); d < -time.Minute || d > time.Minute {
			t.Errorf("entry %q: Time %v, want within a minute of %v", e.Value, e.Time, before)
		}
	}
	ackEntries(t, s, "s", got...)
	if got := readStream(t, s, "s", "c1", 10, 0); len(got) != 0 {
		t.Errorf("StreamRead after every entry was acknowledged: got %q, want none", values(got))
	}

	// count bounds each read; acknowledged entries never come back.
	appendStream(t, s, "paged", "1", "2", "3", "4", "5")
	for _, want := range [][]string{{"1", "2"}, {"3", "4"}, {"5"}, nil} {
		got := readStream(t, s, "paged", "c1", 2, 0)
		if diff := cmp.Diff(want, values(got)); diff != "" {
			t.Errorf("StreamRead(count 2) (-want +got):\n%s", diff)
		}
		ackEntries(t, s, "paged", got...)
	}
}

func streamValues(t *testing.T, s store.Streams) {
	big := make([]byte, 64<<10)
	for i := range big {
		big[i] = byte(i)
	}
	in := [][]byte{nil, {}, []byte("x"), {0, 0xff, '\n'}, big}
	if err := s.StreamAppend(t.Context(), "s", in...); err != nil {
		t.Fatalf("StreamAppend: %v", err)
	}
	got := readStream(t, s, "s", "c1", 10, 0)
	if len(got) != len(in) {
		t.Fatalf("StreamRead: got %d entries, want %d", len(got), len(in))
	}
	for i, e := range got {
		if string(e.Value) != string(in[i]) {
			t.Errorf("entry %d: got a value of %d bytes %.16q, want %d bytes %.16q", i, len(e.Value), e.Value, len(in[i]), in[i])
		}
	}
}

// streamResume: a consumer reading again gets its own unacknowledged
// entries first, then new ones.
func streamResume(t *testing.T, s store.Streams) {
	appendStream(t, s, "s", "1", "2", "3", "4", "5")
	if got := readStream(t, s, "s", "c1", 3, 0); !cmp.Equal(values(got), []string{"1", "2", "3"}) {
		t.Fatalf("first StreamRead(count 3): got %q, want [1 2 3]", values(got))
	}
	appendStream(t, s, "s", "6", "7")
	got := readStream(t, s, "s", "c1", 10, 0)
	if diff := cmp.Diff([]string{"1", "2", "3", "4", "5", "6", "7"}, values(got)); diff != "" {
		t.Errorf("StreamRead by the same consumer (-want +got):\n%s", diff)
	}
	// Delivered again, its pending entries are still pending: a count too
	// small for all of them gives the oldest.
	if got := readStream(t, s, "s", "c1", 2, 0); !cmp.Equal(values(got), []string{"1", "2"}) {
		t.Errorf("StreamRead(count 2) with 7 pending: got %q, want [1 2]", values(got))
	}
	ackEntries(t, s, "s", got...)
	if got := readStream(t, s, "s", "c1", 10, 0); len(got) != 0 {
		t.Errorf("StreamRead after acknowledging all: got %q, want none", values(got))
	}
}

// streamClaim: entries read and never acknowledged reach a consumer of
// another name once idle for claimIdle.
func streamClaim(t *testing.T, s store.Streams, caps StreamsCaps) {
	appendStream(t, s, "s", "0", "1", "2", "3", "4")
	if got := readStream(t, s, "s", "c1", 10, 0); len(got) != 5 {
		t.Fatalf("StreamRead by c1: got %q, want 5 entries", values(got))
	}
	if caps.MultiConsumer {
		for _, idle := range []time.Duration{0, time.Hour} {
			if got := readStreamIdle(t, s, "s", "c2", 10, idle, 0); len(got) != 0 {
				t.Errorf("StreamRead by c2 (claimIdle %v) of c1's fresh entries: got %q, want none", idle, values(got))
			}
		}
	}
	var claimed []store.StreamEntry
	deadline := time.Now().Add(waitFor)
	for len(claimed) < 5 && time.Now().Before(deadline) {
		claimed = append(claimed, readStreamIdle(t, s, "s", "c2", 10, 50*time.Millisecond, 0)...)
		time.Sleep(10 * time.Millisecond)
	}
	if diff := cmp.Diff([]string{"0", "1", "2", "3", "4"}, values(claimed)); diff != "" {
		t.Fatalf("entries c2 claimed within %v (-want +got):\n%s", waitFor, diff)
	}
	if caps.MultiConsumer {
		if got := readStream(t, s, "s", "c1", 10, 0); len(got) != 0 {
			t.Errorf("StreamRead by c1 after c2 claimed its entries: got %q, want none", values(got))
		}
	}
	ackEntries(t, s, "s", claimed...)
	if got := unacked(t, s, "s", 10); len(got) != 0 {
		t.Errorf("StreamUnacked after c2 acknowledged: got %q, want none", values(got))
	}
	if info := streamInfoOf(t, s, "s"); info.Backlog() != 0 || info.Pending != 0 {
		t.Errorf("StreamInfo after c2 acknowledged: Pending %d, Backlog %d, want 0, 0", info.Pending, info.Backlog())
	}
	if got := readStreamIdle(t, s, "s", "c3", 10, time.Millisecond, 0); len(got) != 0 {
		t.Errorf("StreamRead by c3 after every entry was acknowledged: got %q, want none", values(got))
	}
}

func streamAck(t *testing.T, s store.Streams) {
	ctx := t.Context()
	appendStream(t, s, "other", "o")
	foreign := readStream(t, s, "other", "c1", 1, 0)
	appendStream(t, s, "s", "1", "2", "3")
	got := readStream(t, s, "s", "c1", 10, 0)
	if len(got) != 3 || len(foreign) != 1 {
		t.Fatalf("StreamRead: got %d and %d entries, want 3 and 1", len(got), len(foreign))
	}
	ackEntries(t, s, "s", got[0])
	ackEntries(t, s, "s", got[0]) // repeated
	for name, call := range map[string]func() error{
		"no IDs":                  func() error { return s.StreamAck(ctx, "s", group) },
		"an ID of another stream": func() error { return s.StreamAck(ctx, "s", group, foreign[0].ID) },
		"a missing stream":        func() error { return s.StreamAck(ctx, "missing", group, got[1].ID) },
		"a missing group":         func() error { return s.StreamAck(ctx, "s", "nogroup", got[1].ID) },
	} {
		if err := call(); err != nil {
			t.Errorf("StreamAck with %s: got error %v, want nil", name, err)
		}
	}
	if got := unacked(t, s, "s", 10); !cmp.Equal(values(got), []string{"3", "2"}) {
		t.Errorf("StreamUnacked after acknowledging 1: got %q, want [3 2]", values(got))
	}
	if info := streamInfoOf(t, s, "s"); info.Pending != 2 || info.Backlog() != 2 {
		t.Errorf("StreamInfo after acknowledging 1 of 3: Pending %d, Backlog %d, want 2, 2", info.Pending, info.Backlog())
	}
	if got := readStream(t, s, "s", "c1", 10, 0); !cmp.Equal(values(got), []string{"2", "3"}) {
		t.Errorf("StreamRead after acknowledging 1: got %q, want [2 3]", values(got))
	}
	// The other stream's entry is still pending there.
	if got := unacked(t, s, "other", 10); !cmp.Equal(values(got), []string{"o"}) {
		t.Errorf("StreamUnacked(other) after acking its ID on s: got %q, want [o]", values(got))
	}
}

func streamTrimMaxLen(t *testing.T, s store.Streams) {
	// A stream with no group keeps everything.
	appendStream(t, s, "nogroup", numbers(0, 10)...)
	trimStream(t, s, "nogroup", store.LogLimit{MaxLen: 1}, 0)

	// 100 delivered, the first 40 acknowledged: only those go.
	appendStream(t, s, "s", numbers(0, 100)...)
	got := readStream(t, s, "s", "c1", 100, 0)
	if len(got) != 100 {
		t.Fatalf("StreamRead(count 100): got %d entries, want 100", len(got))
	}
	ackEntries(t, s, "s", got[:40]...)
	trimStream(t, s, "s", store.LogLimit{}, 0) // zero limits do not trim
	trimStream(t, s, "s", store.LogLimit{MaxLen: 10}, 40)
	trimStream(t, s, "s", store.LogLimit{MaxLen: 10}, 0)
	if info := streamInfoOf(t, s, "s"); info.Length != 60 || info.Pending != 60 {
		t.Errorf("StreamInfo after the trim: Length %d, Pending %d, want 60, 60", info.Length, info.Pending)
	}
	if got := readStream(t, s, "s", "c1", 100, 0); !cmp.Equal(values(got), numbers(40, 100)) {
		t.Errorf("StreamRead after the trim: got %q, want 40…99", values(got))
	}

	// Acknowledged entries after an unacknowledged one stay.
	appendStream(t, s, "gap", numbers(0, 20)...)
	got = readStream(t, s, "gap", "c1", 20, 0)
	ackEntries(t, s, "gap", got[10:]...)
	trimStream(t, s, "gap", store.LogLimit{MaxLen: 1}, 0)
	ackEntries(t, s, "gap", got[:5]...)
	trimStream(t, s, "gap", store.LogLimit{MaxLen: 1}, 5)

	// Undelivered entries stay; once everything is acknowledged, MaxLen holds.
	appendStream(t, s, "all", numbers(0, 30)...)
	ackEntries(t, s, "all", readStream(t, s, "all", "c1", 20, 0)...)
	trimStream(t, s, "all", store.LogLimit{MaxLen: 1}, 20)
	if info := streamInfoOf(t, s, "all"); info.Length != 10 || info.Undelivered != 10 {
		t.Errorf("StreamInfo: Length %d, Undelivered %d, want 10, 10", info.Length, info.Undelivered)
	}
	ackEntries(t, s, "all", readStream(t, s, "all", "c1", 20, 0)...)
	trimStream(t, s, "all", store.LogLimit{MaxLen: 1}, 9)
	if got := unacked(t, s, "all", 10); len(got) > 1 {
		t.Errorf("StreamUnacked after all acknowledged and trimmed to 1: got %q, want at most the acknowledged [29]", values(got))
	}
}

func streamTrimMaxAge(t *testing.T, s store.Streams) {
	appendStream(t, s, "s", numbers(0, 50)...)
	got := readStream(t, s, "s", "c1", 50, 0)
	if len(got) != 50 {
		t.Fatalf("StreamRead(count 50): got %d entries, want 50", len(got))
	}
	ackEntries(t, s, "s", got[:20]...)
	trimStream(t, s, "s", store.LogLimit{MaxAge: time.Hour}, 0)
	const maxAge = 20 * time.Millisecond
	var removed int64
	deadline := time.Now().Add(waitFor)
	for removed < 20 && time.Now().Before(deadline) {
		time.Sleep(maxAge)
		n, err := s.StreamTrim(t.Context(), "s", group, store.LogLimit{MaxAge: maxAge})
		if err != nil {
			t.Fatalf("StreamTrim: %v", err)
		}
		removed += n
	}
	if removed != 20 {
		t.Errorf("StreamTrim(MaxAge %v) of 50 old entries, 20 acknowledged: removed %d, want 20", maxAge, removed)
	}
	if got := readStream(t, s, "s", "c1", 50, 0); !cmp.Equal(values(got), numbers(20, 50)) {
		t.Errorf("StreamRead after the trim: got %q, want 20…49", values(got))
	}
}

func streamInfo(t *testing.T, s store.Streams) {
	if diff := cmp.Diff(store.StreamInfo{}, streamInfoOf(t, s, "missing"), cmpopts.EquateEmpty()); diff != "" {
		t.Errorf("StreamInfo of a missing stream (-want +got):\n%s", diff)
	}
	appendStream(t, s, "s", numbers(0, 10)...)
	all := unacked(t, s, "s", 10) // newest first, with their times
	if len(all) != 10 {
		t.Fatalf("StreamUnacked with no group: got %d entries, want 10", len(all))
	}
	slices.Reverse(all)
	check := func(when string, want store.StreamInfo) {
		t.Helper()
		got := streamInfoOf(t, s, "s")
		for _, c := range got.Consumers {
			if c.Idle < 0 || c.Idle > time.Minute {
				t.Errorf("StreamInfo %s: consumer %s idle %v, want within [0, 1m]", when, c.Name, c.Idle)
			}
		}
		// A consumer with nothing pending may be listed or not.
		got.Consumers = slices.DeleteFunc(got.Consumers, func(c store.StreamConsumer) bool { return c.Pending == 0 })
		opts := cmp.Options{cmpopts.EquateEmpty(), cmpopts.IgnoreFields(store.StreamConsumer{}, "Idle")}
		if diff := cmp.Diff(want, got, opts); diff != "" {
			t.Errorf("StreamInfo %s (-want +got):\n%s", when, diff)
		}
	}
	check("with no group", store.StreamInfo{Length: 10, Undelivered: 10, OldestUnacked: all[0].Time})

	got := readStream(t, s, "s", "c1", 4, 0)
	ackEntries(t, s, "s", got[:2]...)
	consumers := []store.StreamConsumer{{Name: "c1", Pending: 2}}
	check("with 2 of 4 delivered acknowledged", store.StreamInfo{Length: 10, Pending: 2, Undelivered: 6, OldestUnacked: got[2].Time, Consumers: consumers})
	if b := streamInfoOf(t, s, "s").Backlog(); b != 8 {
		t.Errorf("Backlog: got %d, want 8", b)
	}
	ackEntries(t, s, "s", got[2:]...)
	check("with all 4 delivered acknowledged", store.StreamInfo{Length: 10, Undelivered: 6, OldestUnacked: all[4].Time})
	ackEntries(t, s, "s", readStream(t, s, "s", "c1", 10, 0)...)
	check("with all acknowledged", store.StreamInfo{Length: 10})
}

func streamUnacked(t *testing.T, s store.Streams) {
	if got := unacked(t, s, "missing", 10); len(got) != 0 {
		t.Errorf("StreamUnacked of a missing stream: got %q, want none", values(got))
	}
	appendStream(t, s, "s", "v0", "v1", "v2", "v3", "v4")
	want := func(when string, limit int, want ...string) {
		t.Helper()
		if diff := cmp.Diff(want, values(unacked(t, s, "s", limit))); diff != "" {
			t.Errorf("StreamUnacked(limit %d) %s (-want +got):\n%s", limit, when, diff)
		}
	}
	want("with no group", 10, "v4", "v3", "v2", "v1", "v0")
	want("with no group", 2, "v4", "v3")
	ackEntries(t, s, "s", readStream(t, s, "s", "c1", 2, 0)...)
	want("after v0, v1 acknowledged", 10, "v4", "v3", "v2")
	pending := readStream(t, s, "s", "c1", 10, 0) // v2, v3, v4
	want("with v2…v4 pending", 10, "v4", "v3", "v2")
	want("with v2…v4 pending", 1, "v4")
	// An acknowledged entry newer than an unacknowledged one may come too.
	ackEntries(t, s, "s", pending[1])
	got := values(unacked(t, s, "s", 10))
	if got = slices.DeleteFunc(got, func(v string) bool { return v == "v3" }); !cmp.Equal(got, []string{"v4", "v2"}) {
		t.Errorf("StreamUnacked with v2, v4 pending: got %q (v3 allowed), want [v4 v2]", got)
	}
	ackEntries(t, s, "s", pending...)
	want("after all acknowledged", 10)
}

func streamBlock(t *testing.T, s store.Streams) {
	// block 0 and a block below the store's resolution return at once
	// (Redis's BLOCK 0 would wait forever).
	for _, block := range []time.Duration{0, time.Microsecond} {
		type result struct {
			got []store.StreamEntry
			err error
		}
		done := make(chan result, 1)
		go func() {
			got, err := s.StreamRead(context.Background(), "empty", group, "c1", 1, 0, block)
			done <- result{got, err}
		}()
		select {
		case r := <-done:
			if r.err != nil || len(r.got) != 0 {
				t.Errorf("StreamRead(block %v) of an empty stream: got %q, %v, want none", block, values(r.got), r.err)
			}
		case <-time.After(waitFor):
			t.Fatalf("StreamRead(block %v) of an empty stream still waiting after %v", block, waitFor)
		}
	}
	// A blocked read returns an entry appended while it waits.
	appended := make(chan error, 1)
	go func() {
		time.Sleep(100 * time.Millisecond)
		appended <- s.StreamAppend(context.Background(), "s", []byte("late"))
	}()
	got := readStream(t, s, "s", "c1", 10, 2*time.Second)
	if err := <-appended; err != nil {
		t.Fatalf("StreamAppend: %v", err)
	}
	if !cmp.Equal(values(got), []string{"late"}) {
		t.Errorf("StreamRead(block 2s) with an append 100ms later: got %q, want [late]", values(got))
	}
}

// streamTwoConsumers: two consumers reading one group while entries are
// appended never both get an entry, and together get all.
func streamTwoConsumers(t *testing.T, s store.Streams) {
	const total = 1000
	var (
		mu    sync.Mutex
		seen  = map[string]string{} // value → consumer
		dups  []string
		count atomic.Int64
		wg    sync.WaitGroup
	)
	wg.Go(func() {
		for i := 0; i < total; i += 10 {
			if err := s.StreamAppend(context.Background(), "s", bytesOf(numbers(i, i+10))...); err != nil {
				t.Errorf("StreamAppend: %v", err)
				return
			}
		}
	})
	deadline := time.Now().Add(2 * waitFor)
	for _, c := range []string{"c1", "c2"} {
		wg.Go(func() {
			for count.Load() < total && time.Now().Before(deadline) {
				got, err := s.StreamRead(context.Background(), "s", group, c, 7, time.Hour, 50*time.Millisecond)
				if err != nil {
					t.Errorf("StreamRead(%s): %v", c, err)
					return
				}
				mu.Lock()
				for _, e := range got {
					if other, ok := seen[string(e.Value)]; ok {
						dups = append(dups, string(e.Value)+" to "+other+" and "+c)
					}
					seen[string(e.Value)] = c
				}
				mu.Unlock()
				count.Add(int64(len(got)))
				if err := s.StreamAck(context.Background(), "s", group, ids(got)...); err != nil {
					t.Errorf("StreamAck(%s): %v", c, err)
					return
				}
			}
		})
	}
	wg.Wait()
	if len(dups) > 0 {
		t.Errorf("entries delivered to both consumers: %q", dups)
	}
	for _, v := range numbers(0, total) {
		if _, ok := seen[v]; !ok {
			t.Errorf("entry %s reached neither consumer", v)
		}
	}
}

func appendStream(t *testing.T, s store.Streams, key string, vals ...string) {
	t.Helper()
	if err := s.StreamAppend(t.Context(), key, bytesOf(vals)...); err != nil {
		t.Fatalf("StreamAppend(%q): %v", key, err)
	}
}

// readStream reads as consumer of group, claiming nothing.
func readStream(t *testing.T, s store.Streams, key, consumer string, count int, block time.Duration) []store.StreamEntry {
	t.Helper()
	return readStreamIdle(t, s, key, consumer, count, 0, block)
}

func readStreamIdle(t *testing.T, s store.Streams, key, consumer string, count int, claimIdle, block time.Duration) []store.StreamEntry {
	t.Helper()
	got, err := s.StreamRead(context.Background(), key, group, consumer, count, claimIdle, block)
	if err != nil {
		t.Fatalf("StreamRead(%q, %s): %v", key, consumer, err)
	}
	return got
}

func ackEntries(t *testing.T, s store.Streams, key string, es ...store.StreamEntry) {
	t.Helper()
	if err := s.StreamAck(t.Context(), key, group, ids(es)...); err != nil {
		t.Fatalf("StreamAck(%q): %v", key, err)
	}
}

func trimStream(t *testing.T, s store.Streams, key string, lim store.LogLimit, want int64) {
	t.Helper()
	n, err := s.StreamTrim(t.Context(), key, group, lim)
	if err != nil {
		t.Fatalf("StreamTrim(%q, %+v): %v", key, lim, err)
	}
	if n != want {
		t.Errorf("StreamTrim(%q, %+v): removed %d, want %d", key, lim, n, want)
	}
}

func streamInfoOf(t *testing.T, s store.Streams, key string) store.StreamInfo {
	t.Helper()
	info, err := s.StreamInfo(t.Context(), key, group)
	if err != nil {
		t.Fatalf("StreamInfo(%q): %v", key, err)
	}
	return info
}

func unacked(t *testing.T, s store.Streams, key string, limit int) []store.StreamEntry {
	t.Helper()
	got, err := s.StreamUnacked(t.Context(), key, group, limit)
	if err != nil {
		t.Fatalf("StreamUnacked(%q): %v", key, err)
	}
	return got
}

func values(es []store.StreamEntry) []string {
	if len(es) == 0 {
		return nil
	}
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = string(e.Value)
	}
	return out
}

func ids(es []store.StreamEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// numbers returns the decimal strings from..to-1.
func numbers(from, to int) []string {
	out := make([]string, 0, to-from)
	for i := from; i < to; i++ {
		out = append(out, strconv.Itoa(i))
	}
	return out
}

func bytesOf(vals []string) [][]byte {
	out := make([][]byte, len(vals))
	for i, v := range vals {
		out[i] = []byte(v)
	}
	return out
}
