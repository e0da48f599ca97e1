package bridge_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/analytics"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/bridge"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/spool"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/rediskv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// BenchmarkDrainSQLite is the embedded default's in-process bridge: entries
// shaped like svcbench's read from a spool on disk, decoded, written into
// SQLite with the analytics rollups in batches of 512 and acknowledged;
// per entry.
func BenchmarkDrainSQLite(b *testing.B) { drainSQLite(b, pagesVariant{}) }

// drainSQLite is benchDrain from a spool on disk into a fresh SQLite
// database opened with v's parameters and setup.
func drainSQLite(b *testing.B, v pagesVariant) {
	dir := b.TempDir()
	db := openPagesDB(b, filepath.Join(dir, "svc.db"), v)
	defer db.Close()
	sp, err := spool.Open(filepath.Join(dir, "spool"), spool.Options{Key: audit.HotLogKey, MaxBytes: 4 << 30, SegmentBytes: 64 << 20})
	if err != nil {
		b.Fatal(err)
	}
	defer sp.Close()
	benchDrain(b, sp, db)
}

// BenchmarkDrainRedisPostgres is the bridge process of a Redis +
// PostgreSQL setup: the same entries read from a Redis stream, written
// into PostgreSQL (its monthly partition) with the rollups, acknowledged
// with XACK. The CPU per op is the bridge's own; PostgreSQL's and Redis's
// is in their processes. Needs SVC_TEST_DATABASE_URL and
// SVC_TEST_REDIS_URL.
func BenchmarkDrainRedisPostgres(b *testing.B) {
	url := os.Getenv(storetest.RedisURLEnv)
	if url == "" {
		b.Skip("set " + storetest.RedisURLEnv + " and " + storetest.DatabaseURLEnv)
	}
	db := storetest.OpenSQL(b, storetest.PostgresURL(b))
	if _, err := audit.NewSQLStore(db).Maintain(context.Background(), time.Now(), 0); err != nil {
		b.Fatal(err)
	}
	kv, err := rediskv.Open(url, "svcbridgebench:"+fmt.Sprint(time.Now().UnixNano())+":")
	if err != nil {
		b.Fatal(err)
	}
	defer kv.Close()
	defer kv.Delete(context.Background(), audit.HotLogKey) //nolint:errcheck // best effort: a prefix of its own
	benchDrain(b, kv, db)
}

// benchDrain appends b.N entries to hot (not timed) and drains them into
// db through a bridge with the rollups, reporting the CPU per entry.
func benchDrain(b *testing.B, hot store.Streams, db *sqlstore.DB) {
	start := time.Now().UTC().Add(-time.Hour)
	vals := make([][]byte, 0, 512)
	for i := range b.N {
		js := pagesEntry(b, i, start, false)
		if vals = append(vals, js); len(vals) == cap(vals) || i == b.N-1 {
			if err := hot.StreamAppend(context.Background(), audit.HotLogKey, vals...); err != nil {
				b.Fatal(err)
			}
			vals = vals[:0]
		}
	}
	br := bridge.New(hot, audit.NewSQLStore(db), metrics.New(nil), quiet, bridge.Options{
		Batch: 512, Block: 10 * time.Millisecond, Rollups: analytics.NewRollups(db).Add})
	b.ReportAllocs()
	b.ResetTimer()
	cpu := cpuTime()
	for done := 0; done < b.N; {
		n, err := br.DrainOnce(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		done += n
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu).Nanoseconds())/float64(b.N), "cpu-ns/op")
	if st := br.Status(); st.Written != int64(b.N) {
		b.Fatalf("written %d, want %d", st.Written, b.N)
	}
}
