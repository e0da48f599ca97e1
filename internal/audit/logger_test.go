package audit_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

func newLogger(t *testing.T, opt audit.Options) (*audit.Logger, *audit.SQLStore, *memkv.KV, *metrics.Metrics) {
	t.Helper()
	return newLoggerOn(t, "sqlite://"+filepath.Join(t.TempDir(), "a.db"), opt)
}

func newLoggerOn(t *testing.T, url string, opt audit.Options) (*audit.Logger, *audit.SQLStore, *memkv.KV, *metrics.Metrics) {
	t.Helper()
	db := audit.NewSQLStore(storetest.OpenSQL(t, url))
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	m := metrics.New(nil)
	return audit.NewLogger(db, kv, m, slog.New(slog.NewTextHandler(io.Discard, nil)), opt), db, kv, m
}

func entry(i int) *audit.Entry {
	start := time.Now().Add(-time.Second)
	x := &pipeline.Exchange{ID: "req-" + strconv.Itoa(i), Start: start, End: start.Add(10 * time.Millisecond),
		Endpoint: pipeline.Chat, Provider: "openai", Model: "gpt-4o-mini", Status: 200, Cost: 0.001}
	return audit.FromExchange(x, 5*time.Millisecond)
}

func TestCloseDrainsAndLateEntriesLand(t *testing.T) {
	l, db, kv, _ := newLogger(t, audit.Options{QueueSize: 1000, FlushInterval: time.Hour})
	for i := 0; i < 300; i++ {
		l.Record(entry(i))
	}
	l.Close() // the hour-long tick never came: Close must drain
	l.Record(entry(1000))
	_, total, err := db.QueryLogs(context.Background(), audit.Query{Limit: 1})
	if err != nil || total != 301 {
		t.Fatalf("after Close: %d records (%v), want 301", total, err)
	}
	hot, err := kv.ReadLog(context.Background(), audit.HotLogKey, time.Time{}, 0)
	if err != nil || len(hot) != 301 {
		t.Errorf("hot tier has %d entries (%v), want 301", len(hot), err)
	}
}

func TestFullQueueWritesDirectly(t *testing.T) {
	l, db, _, m := newLogger(t, audit.Options{QueueSize: 2, FlushInterval: time.Hour})
	defer l.Close()
	for i := 0; i < 10; i++ {
		l.Record(entry(i))
	}
	if got := counter(t, m, "svc_audit_direct_writes_total"); got != 8 {
		t.Errorf("direct writes = %v, want 8 (queue of 2, 10 entries)", got)
	}
	_, total, _ := db.QueryLogs(context.Background(), audit.Query{Limit: 1})
	if total != 8 {
		t.Errorf("records before the tick = %d, want the 8 written directly", total)
	}
}

func TestHotTierCapped(t *testing.T) {
	l, _, kv, _ := newLogger(t, audit.Options{QueueSize: 5000, FlushInterval: 10 * time.Millisecond, HotMaxEntries: 100})
	for i := 0; i < 1000; i++ {
		l.Record(entry(i))
	}
	l.Close()
	hot, _ := kv.ReadLog(context.Background(), audit.HotLogKey, time.Time{}, 0)
	if len(hot) != 100 {
		t.Errorf("hot tier = %d entries, want the cap of 100", len(hot))
	}
}

func TestFlushedWithinInterval(t *testing.T) {
	l, db, _, _ := newLogger(t, audit.Options{QueueSize: 100, FlushInterval: 50 * time.Millisecond})
	defer l.Close()
	l.Record(entry(1))
	deadline := time.Now().Add(time.Second)
	for time.Now().Before(deadline) {
		if _, total, _ := db.QueryLogs(context.Background(), audit.Query{Limit: 1}); total == 1 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("entry not persisted within a second")
}

func counter(t *testing.T, m *metrics.Metrics, name string) float64 {
	t.Helper()
	fams, err := m.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			return f.GetMetric()[0].GetCounter().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}

// TestUnsafeTextKeepsTheBatch checks that an entry whose model name a caller
// filled with a NUL byte and invalid UTF-8 is stored (escaped) and does not
// cost the other entries of its batch: on PostgreSQL it once lost them all.
func TestUnsafeTextKeepsTheBatch(t *testing.T) {
	backends := []struct {
		name string
		url  func(t *testing.T) string
	}{
		{"SQLite", func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "a.db") }},
		{"Postgres", func(t *testing.T) string { return storetest.PostgresURL(t) }},
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			l, db, _, m := newLoggerOn(t, b.url(t), audit.Options{QueueSize: 100, FlushInterval: time.Hour})
			const n, bad = 60, 35
			for i := range n {
				e := entry(i)
				if i == bad {
					e.Model = "gpt-4o-mini\x00\xff"
					e.Provider = "openai\x00"
				}
				l.Record(e)
			}
			l.Close()
			_, total, err := db.QueryLogs(context.Background(), audit.Query{})
			if err != nil || total != n {
				t.Errorf("records stored: got %d (%v), want %d", total, err, n)
			}
			got, _, err := db.QueryLogs(context.Background(), audit.Query{Model: "gpt-4o-mini\x00\xff"})
			if err != nil || len(got) != 1 {
				t.Fatalf("QueryLogs by the raw model: got %d records (%v), want 1", len(got), err)
			}
			if want := `gpt-4o-mini\x00\xff`; got[0].Model != want || got[0].RequestID != "req-35" {
				t.Errorf("stored record: got model %q, request id %q, want %q, %q", got[0].Model, got[0].RequestID, want, "req-35")
			}
			if got := counter(t, m, "svc_audit_write_failures_total"); got != 0 {
				t.Errorf("svc_audit_write_failures_total: got %v, want 0", got)
			}
		})
	}
}

// scriptedStore answers InsertLogs with errs in turn (nil once they run out)
// and counts the calls.
type scriptedStore struct {
	audit.Store
	mu    sync.Mutex
	errs  []error
	calls int
}

func (s *scriptedStore) InsertLogs(ctx context.Context, recs []audit.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if len(s.errs) == 0 {
		return nil
	}
	err := s.errs[0]
	s.errs = s.errs[1:]
	return err
}

// TestWriteRetries checks the writer's answer to a failed batch: a data error
// (the store kept every other record) is not retried; another error is
// retried until a retry succeeds, writeAttempts times at most. Each failed
// write counts once.
func TestWriteRetries(t *testing.T) {
	dataErr := &audit.DataError{Escaped: []string{"req-1"}, Rejected: []string{"req-2", "req-3"}, Err: errors.New("refused")}
	down := errors.New("connection refused")
	tests := []struct {
		name         string
		errs         []error
		wantCalls    int
		wantFailures float64
	}{
		{"stored", nil, 1, 0},
		{"data error", []error{dataErr}, 1, 1},
		{"wrapped data error", []error{fmt.Errorf("store: %w", dataErr)}, 1, 1},
		{"down, then up", []error{down, down}, 3, 2},
		{"down for good", []error{down, down, down, down, down, down}, 5, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			s := &scriptedStore{errs: tt.errs}
			kv := memkv.New()
			defer kv.Close()
			m := metrics.New(nil)
			l := audit.NewLogger(s, kv, m, slog.New(slog.NewTextHandler(io.Discard, nil)), audit.Options{FlushInterval: time.Hour})
			for i := range 4 {
				l.Record(entry(i))
			}
			l.Close()
			if s.calls != tt.wantCalls {
				t.Errorf("InsertLogs calls: got %d, want %d", s.calls, tt.wantCalls)
			}
			if got := counter(t, m, "svc_audit_write_failures_total"); got != tt.wantFailures {
				t.Errorf("svc_audit_write_failures_total: got %v, want %v", got, tt.wantFailures)
			}
		})
	}
}
