package spool

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/store"
)

func TestAppendReadAckRestart(t *testing.T) {
	dir := t.TempDir()
	clk := newClock()
	s := open(t, dir, Options{Now: clk.Now})
	appendAll(t, s, "a", "b")
	if err := s.Append([]byte("c"), []byte(""), []byte("d")); err != nil {
		t.Fatalf("Append: %v", err)
	}
	got := read(t, s, "c1", 10)
	if diff := cmp.Diff([]string{"a", "b", "c", "", "d"}, values(got)); diff != "" {
		t.Fatalf("first read (-want +got):\n%s", diff)
	}
	for i := 1; i < len(got); i++ {
		if got[i].ID <= got[i-1].ID {
			t.Errorf("IDs not increasing: %q then %q", got[i-1].ID, got[i].ID)
		}
	}
	if !got[0].Time.Equal(clk.Now()) {
		t.Errorf("entry time %v, want %v", got[0].Time, clk.Now())
	}
	ack(t, s, got[0].ID, got[1].ID)
	ack(t, s, got[4].ID) // out of order: kept in memory only
	ack(t, s, got[0].ID, "nonsense", "ffffffffffffffff")
	in := info(t, s)
	if in.Length != 5 || in.Pending != 2 || in.Undelivered != 0 || in.Backlog() != 2 {
		t.Errorf("StreamInfo = %+v, want Length 5, Pending 2, Undelivered 0", in)
	}
	if !in.OldestUnacked.Equal(clk.Now()) {
		t.Errorf("OldestUnacked = %v, want %v", in.OldestUnacked, clk.Now())
	}
	if again := read(t, s, "c1", 10); !slices.Equal(values(again), []string{"c", ""}) {
		t.Errorf("c1's own pending = %q, want [c \"\"]", values(again))
	}
	s.Close()

	s = open(t, dir, Options{})
	got = read(t, s, "c2", 10)
	if diff := cmp.Diff([]string{"c", "", "d"}, values(got)); diff != "" {
		t.Fatalf("after restart (-want +got):\n%s", diff)
	}
	ack(t, s, ids(got)...)
	s.Close()

	s = open(t, dir, Options{})
	if got := read(t, s, "c3", 10); len(got) != 0 {
		t.Errorf("after everything was acknowledged: %q, want nothing", values(got))
	}
	appendAll(t, s, "e")
	if got := drain(t, s, false); !slices.Equal(got, []string{"e"}) {
		t.Errorf("after appending again: %q, want [e]", got)
	}
}

func TestTornTail(t *testing.T) {
	tests := []struct {
		name string
		tail func(frame []byte) []byte
	}{
		{"half a frame", func(f []byte) []byte { return f[:len(f)/2] }},
		{"part of a header", func(f []byte) []byte { return f[:headerSize-3] }},
		{"whole frame but the last byte", func(f []byte) []byte { return f[:len(f)-1] }},
		{"zeros", func(f []byte) []byte { return make([]byte, len(f)+10) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := open(t, dir, Options{})
			appendAll(t, s, "one", "two", "three")
			s.Close()

			frame := make([]byte, headerSize+100)
			putHeader(frame, []byte(strings.Repeat("z", 100)), 1)
			copy(frame[headerSize:], strings.Repeat("z", 100))
			seg := segFiles(t, dir)[0]
			before := diskBytes(t, dir)
			f, err := os.OpenFile(seg, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.Write(tt.tail(frame)); err != nil {
				t.Fatal(err)
			}
			f.Close()

			var log logBuf
			s = open(t, dir, Options{Logger: log.logger()})
			if !strings.Contains(log.String(), "torn tail") {
				t.Errorf("log %q does not report a torn tail", log.String())
			}
			if got := diskBytes(t, dir); got != before {
				t.Errorf("segment is %d bytes after Open, want %d (truncated)", got, before)
			}
			appendAll(t, s, "four")
			s.Close()
			s = open(t, dir, Options{})
			if got, want := drain(t, s, true), []string{"one", "two", "three", "four"}; !slices.Equal(got, want) {
				t.Errorf("read %q, want %q", got, want)
			}
		})
	}
}

// corrupt flips a byte of the payload of the frame carrying value in dir's
// segment files.
func corrupt(t *testing.T, dir, value string) {
	t.Helper()
	for _, p := range segFiles(t, dir) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if i := strings.Index(string(b), value); i >= 0 {
			b[i] ^= 0xff
			if err := os.WriteFile(p, b, 0o600); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("no frame carries %q", value)
}

func TestCorruptMiddleFrame(t *testing.T) {
	// 8 frames of 116 bytes per 1 KiB segment.
	vals := make([]string, 24)
	for i := range vals {
		vals[i] = fmt.Sprintf("v%02d-%s", i, strings.Repeat("p", 96))
	}
	t.Run("sealed segment", func(t *testing.T) {
		dir := t.TempDir()
		s := open(t, dir, Options{SegmentBytes: 1024})
		appendAll(t, s, vals...)
		s.Close()
		if n := len(segFiles(t, dir)); n != 3 {
			t.Fatalf("%d segments, want 3", n)
		}
		corrupt(t, dir, "v03-") // the 4th frame of the first segment

		var log logBuf
		s = open(t, dir, Options{SegmentBytes: 1024, Logger: log.logger()})
		if !strings.Contains(log.String(), "corrupt frame") {
			t.Errorf("log %q does not report the corrupt frame", log.String())
		}
		want := append(slices.Clone(vals[:3]), vals[8:]...)
		if got := drain(t, s, true); !slices.Equal(got, want) {
			t.Errorf("read %d entries %.20q…, want %d: the first segment up to the corrupt frame, then the others", len(got), got, len(want))
		}
	})
	t.Run("last segment", func(t *testing.T) {
		dir := t.TempDir()
		s := open(t, dir, Options{SegmentBytes: 1024})
		appendAll(t, s, vals[:6]...)
		s.Close()
		corrupt(t, dir, "v02-")

		var log logBuf
		s = open(t, dir, Options{SegmentBytes: 1024, Logger: log.logger()})
		if !strings.Contains(log.String(), "corrupt frame") {
			t.Errorf("log %q does not report the corrupt frame", log.String())
		}
		appendAll(t, s, "after")
		s.Close()
		if n := len(segFiles(t, dir)); n != 2 {
			t.Errorf("%d segments, want 2: the damaged one is sealed, not appended to", n)
		}
		s = open(t, dir, Options{SegmentBytes: 1024})
		want := []string{vals[0], vals[1], "after"}
		if got := drain(t, s, true); !slices.Equal(got, want) {
			t.Errorf("read %.20q, want %.20q", got, want)
		}
		if n := len(segFiles(t, dir)); n != 1 {
			t.Errorf("%d segments after acknowledging everything, want 1", n)
		}
	})
}

func TestFull(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{SegmentBytes: 1024, MaxBytes: 2048})
	v := strings.Repeat("f", 84) // 100-byte frames: 10 per segment
	for range 20 {
		appendAll(t, s, v)
	}
	if err := s.Append([]byte(v)); !errors.Is(err, ErrFull) {
		t.Fatalf("Append past MaxBytes: %v, want ErrFull", err)
	}
	if got := s.Bytes(); got != 2000 || diskBytes(t, dir) != 2000 {
		t.Fatalf("Bytes() = %d, on disk %d, want 2000", got, diskBytes(t, dir))
	}
	if err := s.Append([]byte(v), make([]byte, 2000)); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Append larger than a segment: %v, want ErrTooLarge", err)
	}
	// Room for the first of two frames only: neither is written.
	drainN(t, s, 10)
	for range 9 {
		appendAll(t, s, v)
	}
	if err := s.Append([]byte(v), []byte(v)); !errors.Is(err, ErrFull) {
		t.Fatalf("two frames with room for one: %v, want ErrFull", err)
	}
	if got := s.Frames(); got != 19 {
		t.Errorf("Frames() = %d, want 19: nothing of the refused call", got)
	}
	if got := s.Bytes(); got != diskBytes(t, dir) {
		t.Errorf("Bytes() = %d, on disk %d", got, diskBytes(t, dir))
	}
	s.Close()
	s = open(t, dir, Options{SegmentBytes: 1024, MaxBytes: 2048})
	if got := len(drain(t, s, true)); got != 19 {
		t.Errorf("after reopening: %d entries, want 19", got)
	}
}

// drainN reads and acknowledges n entries.
func drainN(t *testing.T, s *Spool, n int) {
	t.Helper()
	got := read(t, s, "n", n)
	if len(got) != n {
		t.Fatalf("read %d, want %d", len(got), n)
	}
	ack(t, s, ids(got)...)
}

func TestRotationAndDeletion(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir, Options{SegmentBytes: 1024})
	vals := seq(strings.Repeat("r", 80), 100)
	appendAll(t, s, vals...)
	files := segFiles(t, dir)
	if len(files) < 10 {
		t.Fatalf("%d segment files, want at least 10", len(files))
	}
	for _, p := range files {
		if fi, _ := os.Stat(p); fi.Size() > 1024 {
			t.Errorf("%s is %d bytes, over the segment size", p, fi.Size())
		}
	}
	got := read(t, s, "c", 100)
	if !slices.Equal(values(got), vals) {
		t.Fatalf("read %d entries, want the 100 appended in order", len(got))
	}
	ack(t, s, ids(got[:50])...)
	left := segFiles(t, dir)
	if len(left) >= len(files) || left[len(left)-1] != files[len(files)-1] {
		t.Errorf("after acknowledging half: %d of %d segments, want fewer, the newest kept", len(left), len(files))
	}
	if s.Bytes() != diskBytes(t, dir) {
		t.Errorf("Bytes() = %d, on disk %d", s.Bytes(), diskBytes(t, dir))
	}
	s.Close()
	s = open(t, dir, Options{SegmentBytes: 1024})
	if got := drain(t, s, true); !slices.Equal(got, vals[50:]) {
		t.Fatalf("after restart: %d entries, want the 50 unacknowledged", len(got))
	}
	if n := len(segFiles(t, dir)); n != 1 {
		t.Errorf("%d segment files once everything is acknowledged, want 1", n)
	}
	// The last segment's acknowledged frames stay until trimmed.
	in := info(t, s)
	if in.Length == 0 || in.Backlog() != 0 || !in.OldestUnacked.IsZero() {
		t.Errorf("StreamInfo = %+v, want acknowledged entries only", in)
	}
	if n, err := s.StreamTrim(context.Background(), testKey, testGroup, store.LogLimit{MaxLen: 1}); err != nil || n != in.Length-1 {
		t.Errorf("StreamTrim(MaxLen 1) = %d, %v; want %d, nil", n, err, in.Length-1)
	}
}

func TestConcurrentAppends(t *testing.T) {
	dir := t.TempDir()
	// Small segments: they rotate, and are deleted while being read.
	s := open(t, dir, Options{SegmentBytes: 4096})
	const writers, each = 32, 200
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				if err := s.Append([]byte(fmt.Sprintf("%d/%d", g, i))); err != nil {
					t.Errorf("Append: %v", err)
					return
				}
			}
		})
	}
	// A reader drains while the writers write.
	var got []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for len(got) < writers*each {
			es, err := s.StreamRead(context.Background(), testKey, testGroup, "r", 500, -1, time.Minute)
			if err != nil {
				t.Errorf("StreamRead: %v", err)
				return
			}
			got = append(got, values(es)...)
			if err := s.StreamAck(context.Background(), testKey, testGroup, ids(es)...); err != nil {
				t.Errorf("StreamAck: %v", err)
				return
			}
		}
	}()
	// An observer lists the newest entries and the state meanwhile.
	stop := make(chan struct{})
	observed := make(chan struct{})
	go func() {
		defer close(observed)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := s.StreamUnacked(context.Background(), testKey, testGroup, 50); err != nil {
				t.Errorf("StreamUnacked: %v", err)
				return
			}
			if _, err := s.StreamInfo(context.Background(), testKey, testGroup); err != nil {
				t.Errorf("StreamInfo: %v", err)
				return
			}
		}
	}()
	wg.Wait()
	<-done
	close(stop)
	<-observed
	if n := len(segFiles(t, dir)); n != 1 {
		t.Errorf("%d segment files once everything is acknowledged, want 1", n)
	}
	seen := make(map[string]bool)
	last := make([]int, writers)
	for i := range last {
		last[i] = -1
	}
	for _, v := range got {
		if seen[v] {
			t.Fatalf("%s delivered twice", v)
		}
		seen[v] = true
		var g, i int
		fmt.Sscanf(v, "%d/%d", &g, &i)
		if i <= last[g] {
			t.Errorf("writer %d: %d after %d", g, i, last[g])
		}
		last[g] = i
	}
	if len(seen) != writers*each {
		t.Fatalf("%d distinct entries, want %d", len(seen), writers*each)
	}
	s.Close()
	s = open(t, dir, Options{})
	if got := drain(t, s, false); len(got) != 0 {
		t.Errorf("after restart: %d entries delivered again, want none", len(got))
	}
}
