package bridge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/bridge"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/spool"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/rediskv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func entryJSON(t testing.TB, id string, ts time.Time) []byte {
	t.Helper()
	x := &pipeline.Exchange{ID: id, Start: ts, End: ts.Add(5 * time.Millisecond), Endpoint: pipeline.Chat,
		Provider: "openai", Model: "gpt-4o-mini", Status: 200, Cost: 0.001}
	js, err := json.Marshal(audit.FromExchange(x, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func openSpool(t *testing.T) *spool.Spool {
	t.Helper()
	sp, err := spool.Open(t.TempDir(), spool.Options{Key: audit.HotLogKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sp.Close() })
	return sp
}

func openRedis(t *testing.T) *rediskv.KV {
	t.Helper()
	url := os.Getenv(storetest.RedisURLEnv)
	if url == "" {
		t.Skip("set " + storetest.RedisURLEnv + " to run the bridge's Redis tests")
	}
	kv, err := rediskv.Open(url, "svcbridgetest:"+fmt.Sprint(time.Now().UnixNano())+":")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { kv.Close() })
	return kv
}

// flakyWriter fails every write while down is set: the database is away.
type flakyWriter struct {
	bridge.Writer
	down  atomic.Bool
	tries atomic.Int64
}

func (f *flakyWriter) Write(ctx context.Context, recs []audit.Record, then audit.Inserted) (int, error) {
	f.tries.Add(1)
	if f.down.Load() {
		return 0, errors.New("connection refused")
	}
	return f.Writer.Write(ctx, recs, then)
}

// lostAck fails the next n acknowledgements after the write succeeded: the
// bridge crashed between commit and XACK.
type lostAck struct {
	store.Streams
	n atomic.Int64
}

func (l *lostAck) StreamAck(ctx context.Context, key, group string, ids ...string) error {
	if l.n.Add(-1) >= 0 {
		return errors.New("ack lost")
	}
	return l.Streams.StreamAck(ctx, key, group, ids...)
}

func appendN(t *testing.T, hot store.Streams, prefix string, n int) []string {
	t.Helper()
	ids, vals := entries(t, prefix, n)
	appendVals(t, hot, vals)
	return ids
}

func entries(t *testing.T, prefix string, n int) ([]string, [][]byte) {
	ids := make([]string, n)
	vals := make([][]byte, n)
	ts := time.Now().UTC().Add(-time.Minute)
	for i := range n {
		ids[i] = fmt.Sprintf("%s-%05d", prefix, i)
		vals[i] = entryJSON(t, ids[i], ts.Add(time.Duration(i)*time.Microsecond))
	}
	return ids, vals
}

func appendVals(t *testing.T, hot store.Streams, vals [][]byte) {
	t.Helper()
	for start := 0; start < len(vals); start += 1000 {
		if err := hot.StreamAppend(t.Context(), audit.HotLogKey, vals[start:min(start+1000, len(vals))]...); err != nil {
			t.Fatal(err)
		}
	}
}

// drainAll runs DrainOnce until the hot tier's backlog is empty.
func drainAll(t *testing.T, b *bridge.Bridge, hot store.Streams) {
	t.Helper()
	if err := drained(t.Context(), b, hot); err != nil {
		t.Fatal(err)
	}
}

// drained is drainAll for goroutines (which must not call t.Fatal).
func drained(ctx context.Context, b *bridge.Bridge, hot store.Streams) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := b.DrainOnce(ctx); err != nil {
			continue
		}
		info, err := hot.StreamInfo(ctx, audit.HotLogKey, audit.BridgeGroup)
		if err == nil && info.Backlog() == 0 {
			return nil
		}
	}
	return errors.New("the backlog did not drain within 30s")
}

// stored returns how many times each of ids is stored.
func stored(t *testing.T, db *sqlstore.DB, prefix string) (rows, distinct int) {
	t.Helper()
	err := db.QueryRow(t.Context(), `SELECT COUNT(*), COUNT(DISTINCT request_id) FROM audit_logs WHERE request_id LIKE ?`, prefix+"-%").
		Scan(&rows, &distinct)
	if err != nil {
		t.Fatal(err)
	}
	return rows, distinct
}

// TestDrainSurvivesOutageAndLostAcks checks the bridge's promise on both
// hot tiers: a database outage leaves the entries pending and they are
// written when it returns; an acknowledgement lost after the commit makes
// the batch come again, and it is not written twice; rollups see each
// entry once.
func TestDrainSurvivesOutageAndLostAcks(t *testing.T) {
	hots := map[string]func(t *testing.T) store.Streams{
		"spool": func(t *testing.T) store.Streams { return openSpool(t) },
		"redis": func(t *testing.T) store.Streams { return openRedis(t) },
	}
	for name, open := range hots {
		t.Run(name, func(t *testing.T) {
			storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
				hot := &lostAck{Streams: open(t)}
				w := &flakyWriter{Writer: audit.NewSQLStore(db)}
				var rolled atomic.Int64
				m := metrics.New(nil)
				b := bridge.New(hot, w, m, quiet, bridge.Options{Batch: 100, Block: time.Millisecond,
					Rollups: func(_ context.Context, _ *sqlstore.Tx, recs []audit.Record) error {
						rolled.Add(int64(len(recs)))
						return nil
					}})
				prefix := "drain" + name
				ids := appendN(t, hot, prefix, 1000)

				w.down.Store(true)
				for range 3 {
					if _, err := b.DrainOnce(t.Context()); err == nil {
						t.Fatal("DrainOnce with the database down: no error")
					}
				}
				info, err := hot.StreamInfo(t.Context(), audit.HotLogKey, audit.BridgeGroup)
				if err != nil || info.Backlog() != int64(len(ids)) {
					t.Fatalf("backlog while the database is down: %d (%v), want %d", info.Backlog(), err, len(ids))
				}
				if b.Status().LastError == "" {
					t.Error("Status().LastError empty during the outage")
				}
				w.down.Store(false)
				hot.n.Store(2) // the first two batches' acks are lost
				drainAll(t, b, hot)
				if rows, distinct := stored(t, db, prefix); rows != len(ids) || distinct != len(ids) {
					t.Errorf("stored %d rows, %d distinct; want %d each", rows, distinct, len(ids))
				}
				if got := rolled.Load(); got != int64(len(ids)) {
					t.Errorf("rollups saw %d records, want %d (each once)", got, len(ids))
				}
				if st := b.Status(); st.Written != int64(len(ids)) || st.Redelivered != 200 {
					t.Errorf("Status: written %d, redelivered %d; want %d, 200", st.Written, st.Redelivered, len(ids))
				}
			})
		})
	}
}

// TestTwoBridgesOneStream checks that two bridges sharing one Redis
// stream's group, and two bridges each draining its own stream into one
// PostgreSQL (one per datacenter, the same entries in both streams), store
// every entry exactly once.
func TestTwoBridgesOneStream(t *testing.T) {
	url := storetest.PostgresURL(t)
	db := storetest.OpenSQL(t, url)
	a, c := openRedis(t), openRedis(t)
	ids, vals := entries(t, "dc", 3000)
	appendVals(t, a, vals)
	// The same entries reach the second datacenter's stream too (a replay).
	appendVals(t, c, vals)
	var wg sync.WaitGroup
	for i, hot := range []store.Streams{a, a, c} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := bridge.New(hot, audit.NewSQLStore(storetest.OpenSQL(t, url)), nil, quiet, bridge.Options{
				Consumer: fmt.Sprintf("bridge-%d", i), Batch: 128, Block: time.Millisecond})
			if err := drained(t.Context(), b, hot); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if rows, distinct := stored(t, db, "dc"); rows != len(ids) || distinct != len(ids) {
		t.Errorf("stored %d rows, %d distinct; want %d each", rows, distinct, len(ids))
	}
}

// TestBacklogAlertAndHTTP checks the backlog alert (once per crossing) and
// the bridge's status routes.
func TestBacklogAlertAndHTTP(t *testing.T) {
	db := storetest.OpenSQL(t, "sqlite://"+t.TempDir()+"/b.db")
	hot := openSpool(t)
	w := &flakyWriter{Writer: audit.NewSQLStore(db)}
	w.down.Store(true)
	var alerts atomic.Int64
	b := bridge.New(hot, w, metrics.New(nil), quiet, bridge.Options{Batch: 10, Block: time.Millisecond, BacklogAlert: 20,
		OnBacklog: func(int64, time.Duration) { alerts.Add(1) }})
	appendN(t, hot, "bl", 50)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); _ = b.Run(ctx) }()
	deadline := time.Now().Add(10 * time.Second)
	for alerts.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if alerts.Load() != 1 {
		t.Fatalf("backlog alerts: %d, want 1", alerts.Load())
	}

	api := &bridge.API{Bridge: b, Reader: &audit.Reader{Store: audit.NewSQLStore(db), Hot: hot}, Store: audit.NewSQLStore(db),
		AdminKey: "bridge-admin-key-0123456789", Log: quiet}
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	get := func(path, key string, out any) int {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			_ = json.NewDecoder(resp.Body).Decode(out)
		}
		return resp.StatusCode
	}
	if code := get("/api/redis", "", nil); code != 401 {
		t.Errorf("/api/redis without the admin key: %d, want 401", code)
	}
	var rs bridge.RedisStatus
	if code := get("/api/redis", api.AdminKey, &rs); code != 200 || rs.Backlog != 50 || rs.OldestPendingAgeS <= 0 {
		t.Errorf("/api/redis = %d %+v, want backlog 50 and an age", code, rs)
	}
	var page audit.Page
	if code := get("/api/vas/logs?limit=5", api.AdminKey, &page); code != 200 || page.Total != 50 || len(page.Data) != 5 {
		t.Errorf("/api/vas/logs before any write = %d total %d (%d shown), want 50 (5)", code, page.Total, len(page.Data))
	}
	w.down.Store(false)
	for time.Now().Before(deadline.Add(10 * time.Second)) {
		if info, _ := hot.StreamInfo(t.Context(), audit.HotLogKey, audit.BridgeGroup); info.Backlog() == 0 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	var hy bridge.HybridStatus
	if code := get("/api/hybrid", api.AdminKey, &hy); code != 200 || hy.LongTerm.Entries != 50 || hy.LongTerm.LastWrite == nil || hy.Hot.Backlog != 0 {
		t.Errorf("/api/hybrid = %d %+v, want 50 written, none behind", code, hy)
	}
	if code := get("/api/vas/logs?limit=5", api.AdminKey, &page); code != 200 || page.Total != 50 {
		t.Errorf("/api/vas/logs after the write: %d total %d, want 50", code, page.Total)
	}
	cancel()
	<-done
}
