package spool

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

const (
	testKey   = "vas:spool"
	testGroup = "bridge"
)

// logBuf is a log sink tests can read.
type logBuf struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func (l *logBuf) logger() *slog.Logger { return slog.New(slog.NewTextHandler(l, nil)) }

// clock is a settable clock for Options.Now.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// open opens a spool in dir with opt (Key set to testKey when empty),
// failing the test on an error, and closes it when the test ends.
func open(t testing.TB, dir string, opt Options) *Spool {
	t.Helper()
	if opt.Key == "" {
		opt.Key = testKey
	}
	s, err := Open(dir, opt)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func appendAll(t testing.TB, s *Spool, values ...string) {
	t.Helper()
	for _, v := range values {
		if err := s.Append([]byte(v)); err != nil {
			t.Fatalf("Append(%q): %v", v, err)
		}
	}
}

func read(t testing.TB, s *Spool, consumer string, count int) []store.StreamEntry {
	t.Helper()
	got, err := s.StreamRead(context.Background(), testKey, testGroup, consumer, count, -1, 0)
	if err != nil {
		t.Fatalf("StreamRead(%s, %d): %v", consumer, count, err)
	}
	return got
}

// drain reads every entry not yet delivered, acknowledging them when ack
// is set, and returns their values in order.
func drain(t testing.TB, s *Spool, ack bool) []string {
	t.Helper()
	var out []string
	for {
		got := read(t, s, "drain", 1000)
		if len(got) == 0 {
			return out
		}
		// Own pending entries come first on every read: only ack ends them.
		if !ack {
			return append(out, values(got)...)
		}
		out = append(out, values(got)...)
		if err := s.StreamAck(context.Background(), testKey, testGroup, ids(got)...); err != nil {
			t.Fatalf("StreamAck: %v", err)
		}
	}
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

func ack(t testing.TB, s *Spool, ids ...string) {
	t.Helper()
	if err := s.StreamAck(context.Background(), testKey, testGroup, ids...); err != nil {
		t.Fatalf("StreamAck: %v", err)
	}
}

func info(t testing.TB, s *Spool) store.StreamInfo {
	t.Helper()
	i, err := s.StreamInfo(context.Background(), testKey, testGroup)
	if err != nil {
		t.Fatalf("StreamInfo: %v", err)
	}
	return i
}

// segFiles lists the segment files in dir.
func segFiles(t testing.TB, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "*.seg"))
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(m)
	return m
}

// diskBytes is the total size of dir's segment files.
func diskBytes(t testing.TB, dir string) int64 {
	t.Helper()
	var n int64
	for _, p := range segFiles(t, dir) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}

func seq(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strings.Repeat("x", i%7) + "-" + strconv.Itoa(i)
	}
	return out
}
