package audit_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

func newLogger(t *testing.T, opt audit.Options) (*audit.Logger, *sqlstore.DB, *memkv.KV, *metrics.Metrics) {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
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
