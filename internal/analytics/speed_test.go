package analytics_test

import (
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/analytics"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// TestReportSpeed measures Report over the rollups of 1,000,000 entries on
// PostgreSQL (SVC_BENCH_ANALYTICS=1; SVC_BENCH_ANALYTICS_N changes the
// count). It is a measurement, not a timed test: it logs the figures and
// fails only on wrong totals.
//
// The entries are generated as the bridge would write them: in time order
// over the 30 days before now, through Add in batches of 1000 (one
// transaction each), 10 providers, 40 models (each on one provider), 2000
// keys and 5000 users drawn uniformly (the worst case for the rollups:
// nearly every key and user is active every hour), latencies log-uniform
// from 0 to 400 s. Then ANALYZE (autovacuum's job on a live system), and
// Report(period=30d) runs 5 times to warm up and 50 times measured.
func TestReportSpeed(t *testing.T) {
	if os.Getenv("SVC_BENCH_ANALYTICS") != "1" {
		t.Skip("set SVC_BENCH_ANALYTICS=1 (and SVC_TEST_DATABASE_URL) to measure Report over 1,000,000 entries")
	}
	n := 1_000_000
	if s := os.Getenv("SVC_BENCH_ANALYTICS_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil || n < 1000 {
			t.Fatalf("SVC_BENCH_ANALYTICS_N=%q: want an integer ≥ 1000", s)
		}
	}
	db := storetest.OpenSQL(t, storetest.PostgresURL(t))
	ctx := t.Context()
	now := testNow
	r := analytics.NewRollups(db)
	analytics.SetNow(r, func() time.Time { return now })

	const batch = 1000
	rng := rand.New(rand.NewPCG(11, 12))
	s := shape{providers: 10, models: 40, keys: 2000, users: 5000}
	start, span := now.Add(-30*24*time.Hour), 30*24*time.Hour
	nBatches := n / batch
	began := time.Now()
	for i := range nBatches {
		from := start.Add(span * time.Duration(i) / time.Duration(nBatches))
		to := start.Add(span * time.Duration(i+1) / time.Duration(nBatches))
		if err := r.Add(ctx, nil, genRecords(rng, batch, from, to, s)); err != nil {
			t.Fatalf("Add batch %d: %v", i, err)
		}
	}
	generated := time.Since(began)
	for _, table := range []string{"analytics_models", "analytics_keys", "analytics_users"} {
		if _, err := db.Exec(ctx, "ANALYZE "+table); err != nil {
			t.Fatal(err)
		}
		var rows int64
		var size string
		if err := db.QueryRow(ctx, "SELECT (SELECT COUNT(*) FROM "+table+"), "+
			"(SELECT pg_size_pretty(SUM(pg_total_relation_size(relid))) FROM pg_partition_tree('"+table+"'))").
			Scan(&rows, &size); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d rows, %s", table, rows, size)
	}
	t.Logf("generated %d entries' rollups in %v (%.0f entries/s through Add)", nBatches*batch, generated.Round(time.Millisecond),
		float64(nBatches*batch)/generated.Seconds())

	if load, err := os.ReadFile("/proc/loadavg"); err == nil {
		t.Logf("load average before the runs: %s", strings.TrimSpace(string(load)))
	}
	for _, period := range []string{"30d", "7d", "24h"} {
		w := window(t, "period="+period, now)
		var times []time.Duration
		var rep analytics.Report
		for i := range 55 {
			t0 := time.Now()
			var err error
			if rep, err = r.Report(ctx, w); err != nil {
				t.Fatalf("Report: %v", err)
			}
			if i >= 5 {
				times = append(times, time.Since(t0))
			}
		}
		if period == "30d" && rep.Totals.Requests < int64(nBatches*batch)*29/30 {
			t.Errorf("period=30d: %d requests, want at least 29/30 of %d", rep.Totals.Requests, nBatches*batch)
		}
		slices.Sort(times)
		t.Logf("Report(period=%s) over %d requests, 50 runs: p50 %v, p95 %v, max %v", period, rep.Totals.Requests,
			times[len(times)/2].Round(time.Microsecond), times[(len(times)*95+99)/100-1].Round(time.Microsecond),
			times[len(times)-1].Round(time.Microsecond))
	}
}
