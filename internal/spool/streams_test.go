package spool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/store"
)

func storeLimit() store.LogLimit { return store.LogLimit{} }

func TestUnacked(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	vals := []string{"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"}
	appendAll(t, s, vals...)
	unacked := func(limit int) []string {
		t.Helper()
		got, err := s.StreamUnacked(context.Background(), testKey, testGroup, limit)
		if err != nil {
			t.Fatalf("StreamUnacked(%d): %v", limit, err)
		}
		return values(got)
	}
	tests := []struct {
		limit int
		want  []string
	}{
		{3, []string{"9", "8", "7"}},
		{1, []string{"9"}},
		{0, nil},
		{20, []string{"9", "8", "7", "6", "5", "4", "3", "2", "1", "0"}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, unacked(tt.limit)); diff != "" {
			t.Errorf("undelivered, limit %d (-want +got):\n%s", tt.limit, diff)
		}
	}
	got := read(t, s, "c", 10)
	ack(t, s, got[9].ID, got[8].ID, got[0].ID, got[1].ID)
	if diff := cmp.Diff([]string{"7", "6", "5"}, unacked(3)); diff != "" {
		t.Errorf("after acknowledging 0, 1, 8, 9 (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"7", "6", "5", "4", "3", "2"}, unacked(10)); diff != "" {
		t.Errorf("after acknowledging 0, 1, 8, 9, limit 10 (-want +got):\n%s", diff)
	}
}

// waitBlocked waits until n readers wait for an Append.
func waitBlocked(t *testing.T, s *Spool, n int) {
	t.Helper()
	for {
		s.mu.Lock()
		w := s.waiters
		s.mu.Unlock()
		if w == n {
			return
		}
		runtime.Gosched()
	}
}

type readResult struct {
	entries []store.StreamEntry
	err     error
}

func readAsync(ctx context.Context, s *Spool, block time.Duration) <-chan readResult {
	ch := make(chan readResult, 1)
	go func() {
		es, err := s.StreamRead(ctx, testKey, testGroup, "w", 10, -1, block)
		ch <- readResult{es, err}
	}()
	return ch
}

func TestBlockAndWake(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	ch := readAsync(context.Background(), s, time.Hour)
	waitBlocked(t, s, 1)
	appendAll(t, s, "wake")
	r := <-ch
	if r.err != nil || !slices.Equal(values(r.entries), []string{"wake"}) {
		t.Fatalf("blocked read = %q, %v; want [wake]", values(r.entries), r.err)
	}
	if s.waiters != 0 {
		t.Errorf("%d waiters left", s.waiters)
	}

	got, err := s.StreamRead(context.Background(), testKey, testGroup, "x", 10, -1, 10*time.Millisecond)
	if err != nil || len(got) != 0 {
		t.Errorf("read with nothing new, block 10ms = %q, %v; want nothing", values(got), err)
	}
	if s.waiters != 0 {
		t.Errorf("%d waiters left after a timed-out read", s.waiters)
	}
}

func TestBlockCancel(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	ch := readAsync(ctx, s, time.Hour)
	waitBlocked(t, s, 1)
	cancel()
	if r := <-ch; !errors.Is(r.err, context.Canceled) {
		t.Fatalf("cancelled read: %v, want context.Canceled", r.err)
	}
	if s.waiters != 0 {
		t.Errorf("%d waiters left after a cancelled read", s.waiters)
	}
	if _, err := s.StreamRead(ctx, testKey, testGroup, "w", 10, -1, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("read with a cancelled context: %v, want context.Canceled", err)
	}
}

func TestCloseWakesReaders(t *testing.T) {
	s := open(t, t.TempDir(), Options{})
	ch := readAsync(context.Background(), s, time.Hour)
	waitBlocked(t, s, 1)
	s.Close()
	if r := <-ch; !errors.Is(r.err, ErrClosed) {
		t.Fatalf("read blocked across Close: %v, want ErrClosed", r.err)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := s.Append([]byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Append after Close: %v, want ErrClosed", err)
	}
	if _, err := s.StreamInfo(context.Background(), testKey, testGroup); !errors.Is(err, ErrClosed) {
		t.Errorf("StreamInfo after Close: %v, want ErrClosed", err)
	}
}

func TestClaim(t *testing.T) {
	clk := newClock()
	s := open(t, t.TempDir(), Options{Now: clk.Now})
	appendAll(t, s, "a", "b", "c", "d")
	readAs := func(consumer string, count int, claimIdle time.Duration) []string {
		t.Helper()
		got, err := s.StreamRead(context.Background(), testKey, testGroup, consumer, count, claimIdle, 0)
		if err != nil {
			t.Fatalf("StreamRead(%s): %v", consumer, err)
		}
		return values(got)
	}
	steps := []struct {
		name      string
		advance   time.Duration
		consumer  string
		count     int
		claimIdle time.Duration
		want      []string
	}{
		{"c1 reads two", 0, "c1", 2, time.Minute, []string{"a", "b"}},
		{"c2 cannot claim yet", 30 * time.Second, "c2", 1, time.Minute, []string{"c"}},
		{"c1 rereads its own", 0, "c1", 5, time.Minute, []string{"a", "b", "d"}},
		{"c2 claims c1's idle entries", 2 * time.Minute, "c2", 10, time.Minute, []string{"c", "a", "b", "d"}},
		{"c1 has nothing left", 0, "c1", 10, time.Minute, nil},
		{"claimIdle 0 never claims", time.Hour, "c1", 10, 0, nil},
		{"c1 claims back, oldest first", 0, "c1", 2, time.Minute, []string{"a", "b"}},
	}
	for _, st := range steps {
		clk.Add(st.advance)
		if diff := cmp.Diff(st.want, readAs(st.consumer, st.count, st.claimIdle)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", st.name, diff)
		}
	}
	in := info(t, s)
	want := []store.StreamConsumer{{Name: "c1", Pending: 2, Idle: 0}, {Name: "c2", Pending: 2, Idle: time.Hour}}
	if diff := cmp.Diff(want, in.Consumers); diff != "" {
		t.Errorf("consumers (-want +got):\n%s", diff)
	}
	if in.Pending != 4 || in.Undelivered != 0 {
		t.Errorf("StreamInfo = %+v, want 4 pending", in)
	}
}

func TestKeyAndGroup(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir(), Options{})
	if err := s.StreamAppend(ctx, "other", []byte("x")); !errors.Is(err, ErrStream) {
		t.Errorf("StreamAppend to another key: %v, want ErrStream", err)
	}
	if err := s.StreamAppend(ctx, testKey, []byte("x")); err != nil {
		t.Fatalf("StreamAppend: %v", err)
	}
	if _, err := s.StreamRead(ctx, "other", testGroup, "c", 1, 0, 0); !errors.Is(err, ErrStream) {
		t.Errorf("StreamRead of another key: %v, want ErrStream", err)
	}
	if _, err := s.StreamInfo(ctx, testKey, "any"); err != nil {
		t.Errorf("StreamInfo before a group read: %v", err)
	}
	if _, err := s.StreamRead(ctx, testKey, testGroup, "c", 1, 0, 0); err != nil {
		t.Fatalf("StreamRead: %v", err)
	}
	if err := s.StreamAck(ctx, testKey, "other", "0000000100000000"); err != nil {
		t.Errorf("StreamAck with another group: %v, want nil (nothing pending there)", err)
	}
	if in := info(t, s); in.Pending != 1 {
		t.Errorf("after StreamAck with another group: %d pending, want 1", in.Pending)
	}
	for name, err := range map[string]error{
		"StreamRead":    second(s.StreamRead(ctx, testKey, "other", "c", 1, 0, 0)),
		"StreamInfo":    second(s.StreamInfo(ctx, testKey, "other")),
		"StreamUnacked": second(s.StreamUnacked(ctx, testKey, "other", 1)),
		"StreamTrim":    second(s.StreamTrim(ctx, testKey, "other", storeLimit())),
	} {
		if !errors.Is(err, ErrStream) {
			t.Errorf("%s with another group: %v, want ErrStream", name, err)
		}
	}
	fixed := open(t, t.TempDir(), Options{Key: "k", Group: "g"})
	if _, err := fixed.StreamRead(ctx, "k", "h", "c", 1, 0, 0); !errors.Is(err, ErrStream) {
		t.Errorf("StreamRead with a group other than Options.Group: %v, want ErrStream", err)
	}
}

func second[T any](_ T, err error) error { return err }

func TestOptions(t *testing.T) {
	for _, opt := range []Options{
		{SegmentBytes: 10},
		{SegmentBytes: MaxSegmentBytes + 1},
		{SegmentBytes: 4096, MaxBytes: 1024},
	} {
		if _, err := Open(t.TempDir(), opt); err == nil {
			t.Errorf("Open(%+v) accepted", opt)
		}
	}
}

func TestCorruptCursor(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{})
	appendAll(t, s, "a", "b")
	got := read(t, s, "c", 1)
	ack(t, s, ids(got)...)
	s.Close()
	if err := os.WriteFile(filepath.Join(dir, cursorName), []byte("garbage"), 0o600); err != nil {
		t.Fatal(err)
	}
	var log logBuf
	s = open(t, dir, Options{Logger: log.logger()})
	if got := drain(t, s, true); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("with an unreadable cursor: %q, want everything again", got)
	}
	if log.String() == "" {
		t.Error("an unreadable cursor was not logged")
	}
}

// TestCursorFormats checks the cursor file: written in place as a v2
// record with a checksum, read back; a v1 cursor of an earlier version read
// (and replaced by a v2 one); a record whose checksum does not match read
// as no cursor, so everything is delivered again and that is logged.
func TestCursorFormats(t *testing.T) {
	tests := []struct {
		name    string
		rewrite func(rec string, seg, off uint32) string
		want    []string
		logged  bool
	}{
		{"v2 as written", func(rec string, _, _ uint32) string { return rec }, []string{"b"}, false},
		{"v1 of an earlier version", func(_ string, seg, off uint32) string { return fmt.Sprintf("v1 %d %d\n", seg, off) }, []string{"b"}, false},
		{"v2 with a wrong checksum", func(rec string, _, _ uint32) string { return rec[:25] + "00000000\n" }, []string{"a", "b"}, true},
		{"v2 with another offset", func(_ string, seg, off uint32) string {
			return fmt.Sprintf("v2 %010d %010d", seg, off+1) + string(cursorRecord(position(seg, off)))[24:]
		}, []string{"a", "b"}, true},
		{"v2 cut short", func(rec string, _, _ uint32) string { return rec[:20] }, []string{"a", "b"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, Options{})
			appendAll(t, s, "a", "b")
			ack(t, s, ids(read(t, s, "c", 1))...)
			s.Close()
			path := filepath.Join(dir, cursorName)
			rec, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var seg, off, crc uint32
			if _, err := fmt.Sscanf(string(rec), "v2 %d %d %x\n", &seg, &off, &crc); err != nil || len(rec) != cursorSize {
				t.Fatalf("cursor file %q (%v), want a v2 record of %d bytes", rec, err, cursorSize)
			}
			if err := os.WriteFile(path, []byte(tc.rewrite(string(rec), seg, off)), 0o600); err != nil {
				t.Fatal(err)
			}
			var log logBuf
			s = open(t, dir, Options{Logger: log.logger()})
			if got := drain(t, s, false); !slices.Equal(got, tc.want) {
				t.Errorf("delivered %q, want %q", got, tc.want)
			}
			if logged := strings.Contains(log.String(), "unreadable cursor"); logged != tc.logged {
				t.Errorf("unreadable cursor logged: %v, want %v (log: %s)", logged, tc.logged, log.String())
			}
			if rec, err := os.ReadFile(path); err != nil || len(rec) != cursorSize || !strings.HasPrefix(string(rec), "v2 ") {
				t.Errorf("cursor file after Open: %q (%v), want a v2 record", rec, err)
			}
		})
	}
}

func TestTrim(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	s := open(t, t.TempDir(), Options{Now: clk.Now})
	trim := func(lim store.LogLimit, want int64) {
		t.Helper()
		n, err := s.StreamTrim(ctx, testKey, testGroup, lim)
		if err != nil || n != want {
			t.Errorf("StreamTrim(%+v) = %d, %v; want %d", lim, n, err, want)
		}
	}
	appendAll(t, s, "0", "1", "2", "3", "4")
	trim(store.LogLimit{MaxLen: 1}, 0) // no group yet: everything stays
	clk.Add(time.Hour)
	appendAll(t, s, "5", "6", "7", "8", "9")
	got := read(t, s, "c", 10)
	ack(t, s, ids(got[:3])...)
	ack(t, s, ids(got[4:8])...) // 4…7 acknowledged after 3, which is not
	trim(store.LogLimit{}, 0)
	trim(store.LogLimit{MaxAge: 2 * time.Hour}, 0)
	trim(store.LogLimit{MaxAge: 30 * time.Minute}, 3) // 0…2; 3 is not acknowledged
	trim(store.LogLimit{MaxLen: 1}, 0)
	if in := info(t, s); in.Length != 7 || in.Backlog() != 3 || !in.OldestUnacked.Equal(got[3].Time) {
		t.Errorf("StreamInfo = %+v, want Length 7, backlog 3, the oldest unacknowledged 3's time", in)
	}
	ack(t, s, got[3].ID)
	trim(store.LogLimit{MaxLen: 4}, 3) // 3…5: the 4 newest stay
	if in := info(t, s); in.Length != 4 || !in.OldestUnacked.Equal(got[8].Time) {
		t.Errorf("StreamInfo = %+v, want Length 4, the oldest unacknowledged 8's time", in)
	}
	if got := values(read(t, s, "c", 10)); !slices.Equal(got, []string{"8", "9"}) {
		t.Errorf("pending after the trims: %q, want [8 9]", got)
	}
}
