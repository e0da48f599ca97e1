package analytics_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/analytics"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// shape is the cardinality of generated records.
type shape struct{ providers, models, keys, users int }

// genRecords returns n random records with timestamps in [from, to).
// Costs are whole multiples of 1/1024 USD, so their sums are exact in any
// order and a report can be compared with a brute-force one exactly.
func genRecords(rng *rand.Rand, n int, from, to time.Time, s shape) []audit.Record {
	span := to.Sub(from).Microseconds()
	recs := make([]audit.Record, n)
	for i := range recs {
		m := rng.IntN(s.models)
		r := audit.Record{
			RequestID: fmt.Sprintf("req-%d-%d", rng.Uint64(), i),
			Timestamp: from.Add(time.Duration(rng.Int64N(span)) * time.Microsecond),
			Provider:  fmt.Sprintf("provider-%d", m%s.providers),
			Model:     fmt.Sprintf("model-%d", m),
			Status:    200,
			Success:   true,
			// Log-uniform from 0 ms to ~400 s: every histogram bucket.
			LatencyMS:        int64(math.Exp(rng.Float64()*math.Log(400000))) - 1,
			PromptTokens:     rng.Int64N(2000),
			CompletionTokens: rng.Int64N(1000),
			Cost:             float64(rng.IntN(4096)) / 1024,
		}
		r.Tokens = r.PromptTokens + r.CompletionTokens
		if rng.IntN(20) > 0 {
			k := rng.IntN(s.keys)
			r.KeyID, r.KeyMask = fmt.Sprintf("vk-%d", k), fmt.Sprintf("sk-svc-%04x…", k)
		}
		if rng.IntN(10) > 2 {
			r.UserID = fmt.Sprintf("user-%d", rng.IntN(s.users))
		}
		switch rng.IntN(20) {
		case 0:
			r.Status, r.Success = 429, false
		case 1:
			r.Status, r.Success = 502, false
		case 2:
			r.Success = false // a stream that failed after its 200
		}
		if rng.IntN(8) == 0 {
			r.CacheHit, r.TokensSaved, r.CostSaved = true, r.Tokens, float64(rng.IntN(512))/1024
		}
		recs[i] = r
	}
	return recs
}

// bruteForce computes the report of w over recs the slow way. Its p50 and
// p95 are exact (nearest rank), for checking the estimates' bound.
func bruteForce(recs []audit.Record, w analytics.Window) analytics.Report {
	rep := analytics.Report{Success: true, Period: cmp.Or(w.Period, "custom"), From: w.From, To: w.To,
		BucketSeconds: int64(w.Bucket / time.Second)}
	n := int(w.To.Sub(w.From) / w.Bucket)
	rep.Volume = make([]analytics.VolumePoint, n)
	for i := range rep.Volume {
		rep.Volume[i].Start = w.From.Add(time.Duration(i) * w.Bucket)
	}
	type sums struct {
		requests, errors, tokens int64
		cost                     float64
		mask                     string
	}
	providers, models, keys, users := map[string]*sums{}, map[string]*sums{}, map[string]*sums{}, map[string]*sums{}
	add := func(m map[string]*sums, name string, r *audit.Record, isErr bool) {
		s := m[name]
		if s == nil {
			s = &sums{}
			m[name] = s
		}
		s.requests++
		if isErr {
			s.errors++
		}
		s.tokens += r.Tokens
		s.cost += r.Cost
		if r.KeyMask != "" {
			s.mask = r.KeyMask
		}
	}
	var lat []int64
	var latSum int64
	for i := range recs {
		r := &recs[i]
		if r.Timestamp.Before(w.From) || !r.Timestamp.Before(w.To) {
			continue
		}
		isErr := r.Status >= 400 || !r.Success
		t := &rep.Totals
		t.Requests++
		if isErr {
			t.Errors++
		}
		t.Tokens += r.Tokens
		t.PromptTokens += r.PromptTokens
		t.CompletionTokens += r.CompletionTokens
		t.CostUSD += r.Cost
		v := &rep.Volume[r.Timestamp.Sub(w.From)/w.Bucket]
		v.Requests++
		if isErr {
			v.Errors++
		}
		v.Tokens += r.Tokens
		v.CostUSD += r.Cost
		if r.CacheHit {
			rep.Cache.Hits++
		}
		rep.Cache.TokensSaved += r.TokensSaved
		rep.Cache.CostSavedUSD += r.CostSaved
		lat = append(lat, r.LatencyMS)
		latSum += r.LatencyMS
		add(providers, r.Provider, r, isErr)
		add(models, r.Model, r, isErr)
		if r.KeyID != "" {
			add(keys, r.KeyID, r, isErr)
		}
		if r.UserID != "" {
			add(users, r.UserID, r, isErr)
		}
	}
	t := &rep.Totals
	if t.Requests > 0 {
		t.ErrorRate = float64(t.Errors) / float64(t.Requests)
		rep.Cache.HitRate = float64(rep.Cache.Hits) / float64(t.Requests)
		rep.LatencyMS.Avg = float64(latSum) / float64(t.Requests)
		slices.Sort(lat)
		rank := func(q float64) float64 { return float64(lat[max(int(math.Ceil(q*float64(len(lat)))), 1)-1]) }
		rep.LatencyMS.P50, rep.LatencyMS.P95 = rank(0.5), rank(0.95)
	}
	rep.CostByProvider, rep.ErrorRateByProvider = []analytics.ProviderCost{}, []analytics.ProviderErrors{}
	for name, s := range providers {
		rep.CostByProvider = append(rep.CostByProvider, analytics.ProviderCost{Provider: name, CostUSD: s.cost, Requests: s.requests})
		rep.ErrorRateByProvider = append(rep.ErrorRateByProvider, analytics.ProviderErrors{Provider: name,
			Requests: s.requests, Errors: s.errors, ErrorRate: float64(s.errors) / float64(s.requests)})
	}
	slices.SortFunc(rep.CostByProvider, func(a, b analytics.ProviderCost) int {
		return cmp.Or(cmp.Compare(b.CostUSD, a.CostUSD), cmp.Compare(b.Requests, a.Requests), strings.Compare(a.Provider, b.Provider))
	})
	slices.SortFunc(rep.ErrorRateByProvider, func(a, b analytics.ProviderErrors) int {
		return cmp.Or(cmp.Compare(b.ErrorRate, a.ErrorRate), cmp.Compare(b.Requests, a.Requests), strings.Compare(a.Provider, b.Provider))
	})
	rep.CostByModel, rep.TopModels = []analytics.ModelUsage{}, []analytics.ModelUsage{}
	for name, s := range models {
		rep.CostByModel = append(rep.CostByModel, analytics.ModelUsage{Model: name, Requests: s.requests, Tokens: s.tokens, CostUSD: s.cost})
	}
	rep.TopModels = slices.Clone(rep.CostByModel)
	slices.SortFunc(rep.CostByModel, func(a, b analytics.ModelUsage) int {
		return cmp.Or(cmp.Compare(b.CostUSD, a.CostUSD), cmp.Compare(b.Requests, a.Requests), strings.Compare(a.Model, b.Model))
	})
	slices.SortFunc(rep.TopModels, func(a, b analytics.ModelUsage) int {
		return cmp.Or(cmp.Compare(b.Requests, a.Requests), cmp.Compare(b.CostUSD, a.CostUSD), strings.Compare(a.Model, b.Model))
	})
	rep.CostByModel = rep.CostByModel[:min(len(rep.CostByModel), analytics.MaxListed)]
	rep.TopModels = rep.TopModels[:min(len(rep.TopModels), analytics.TopN)]
	top := func(m map[string]*sums) []string {
		ids := make([]string, 0, len(m))
		for id := range m {
			ids = append(ids, id)
		}
		slices.SortFunc(ids, func(a, b string) int {
			return cmp.Or(cmp.Compare(m[b].requests, m[a].requests), cmp.Compare(m[b].cost, m[a].cost), strings.Compare(a, b))
		})
		return ids[:min(len(ids), analytics.TopN)]
	}
	rep.TopKeys, rep.TopUsers = []analytics.KeyUsage{}, []analytics.UserUsage{}
	for _, id := range top(keys) {
		s := keys[id]
		rep.TopKeys = append(rep.TopKeys, analytics.KeyUsage{KeyID: id, Key: s.mask, Requests: s.requests, Tokens: s.tokens, CostUSD: s.cost})
	}
	for _, id := range top(users) {
		s := users[id]
		rep.TopUsers = append(rep.TopUsers, analytics.UserUsage{UserID: id, Requests: s.requests, Tokens: s.tokens, CostUSD: s.cost})
	}
	return rep
}

// checkReport compares got with the brute-force want: everything exactly
// but p50 and p95, which must be within the documented bound of want's
// exact ones.
func checkReport(t *testing.T, name string, got, want analytics.Report) {
	t.Helper()
	for _, p := range []struct {
		what       string
		est, exact float64
	}{{"p50", got.LatencyMS.P50, want.LatencyMS.P50}, {"p95", got.LatencyMS.P95, want.LatencyMS.P95}} {
		if !withinBound(p.est, p.exact) {
			t.Errorf("%s: %s = %v, exact %v: outside the documented bound", name, p.what, p.est, p.exact)
		}
	}
	want.LatencyMS.P50, want.LatencyMS.P95 = got.LatencyMS.P50, got.LatencyMS.P95
	if diff := gocmp.Diff(want, got); diff != "" {
		t.Errorf("%s: report differs from the brute-force one (-want +got):\n%s", name, diff)
	}
}

// withinBound reports whether est is within the bound histogram.go
// documents of the exact latency x.
func withinBound(est, x float64) bool {
	switch {
	case x < analytics.LatencyFirstEdge:
		return math.Abs(est-x) < analytics.LatencyFirstEdge
	case x >= analytics.LatencyTop:
		return est == analytics.LatencyTop
	default:
		return est > x/analytics.LatencyRatio && est < x*analytics.LatencyRatio
	}
}

// addBatches adds recs in batches of size, each in a transaction of its
// own, as the bridge does.
func addBatches(t *testing.T, r *analytics.Rollups, db *sqlstore.DB, recs []audit.Record, size int) {
	t.Helper()
	for start := 0; start < len(recs); start += size {
		tx, err := db.Begin(t.Context())
		if err != nil {
			t.Fatalf("Begin: %v", err)
		}
		if err := r.Add(t.Context(), tx, recs[start:min(start+size, len(recs))]); err != nil {
			tx.Rollback()
			t.Fatalf("Add: %v", err)
		}
		if err := tx.Commit(); err != nil {
			t.Fatalf("Commit: %v", err)
		}
	}
}

func window(t *testing.T, query string, now time.Time) analytics.Window {
	t.Helper()
	q, err := url.ParseQuery(query)
	if err != nil {
		t.Fatal(err)
	}
	w, err := analytics.ParseWindow(q, now)
	if err != nil {
		t.Fatalf("ParseWindow(%q): %v", query, err)
	}
	return w
}

func TestReportMatchesBruteForce(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		r := analytics.NewRollups(db)
		analytics.SetNow(r, func() time.Time { return testNow })
		rng := rand.New(rand.NewPCG(7, 8))
		s := shape{providers: 4, models: 12, keys: 40, users: 60}
		recs := genRecords(rng, 6000, testNow.Add(-31*24*time.Hour), testNow, s)
		// The last two days more densely, for the minute windows.
		recs = append(recs, genRecords(rng, 2000, testNow.Add(-6*time.Hour), testNow, s)...)
		// Disjoint batches, each counted once.
		addBatches(t, r, db, recs, 700)

		for _, query := range []string{
			"period=24h", "period=7d", "period=30d",
			"from=2026-05-20T06:03:00Z&to=2026-05-20T09:55:00Z",               // minute rollups
			"from=2026-05-20T04:40:00Z&to=2026-05-20T10:38:00Z",               // minute rollups, 2-minute buckets
			"from=2026-05-08T05:00:00Z&to=2026-05-17T19:00:00Z",               // hour and day rows
			"from=2026-05-08T05:00:00Z&to=2026-05-08T22:00:00Z",               // hour rows inside a day
			"from=2026-04-01T00:00:00Z&to=2026-06-01T00:00:00Z",               // past the data either side
			"from=2026-05-15T00:00:00Z&to=2026-05-17T00:00:00Z",               // whole days
			"from=2026-05-19T23:00:00%2B01:00&to=2026-05-20T04:00:00%2B01:00", // offset times
		} {
			w := window(t, query, testNow)
			got, err := r.Report(t.Context(), w)
			if err != nil {
				t.Fatalf("Report(%s): %v", query, err)
			}
			checkReport(t, query, got, bruteForce(recs, w))
			if got.Totals.Requests == 0 {
				t.Errorf("%s: no requests in the window; the test data should cover it", query)
			}
		}
	})
}

// TestAddThroughAuditWrite runs Add as the bridge does, as the hook of
// audit.SQLStore.Write: a redelivered batch, overlapping one already
// written, adds only the records it inserted, so each entry counts once.
func TestAddThroughAuditWrite(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		r := analytics.NewRollups(db)
		analytics.SetNow(r, func() time.Time { return testNow })
		logs := audit.NewSQLStore(db)
		recs := genRecords(rand.New(rand.NewPCG(13, 14)), 1000, testNow.Add(-20*time.Hour), testNow, shape{3, 6, 10, 10})
		for _, part := range [][]audit.Record{recs[:600], recs[300:], recs[100:200]} {
			if _, err := logs.Write(t.Context(), part, r.Add); err != nil {
				t.Fatalf("Write: %v", err)
			}
		}
		w := window(t, "period=24h", testNow)
		got, err := r.Report(t.Context(), w)
		if err != nil {
			t.Fatalf("Report: %v", err)
		}
		if got.Totals.Requests != int64(len(recs)) {
			t.Errorf("%d requests, want %d: each entry once", got.Totals.Requests, len(recs))
		}
		checkReport(t, "period=24h", got, bruteForce(recs, w))
	})
}

func TestRollupRowsAligned(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		r := analytics.NewRollups(db)
		analytics.SetNow(r, func() time.Time { return testNow })
		recs := genRecords(rand.New(rand.NewPCG(3, 4)), 500, testNow.Add(-72*time.Hour), testNow, shape{3, 6, 5, 5})
		addBatches(t, r, db, recs, 100)
		for _, table := range []string{"analytics_models", "analytics_keys", "analytics_users"} {
			var grains, misaligned, minuteOld int64
			err := db.QueryRow(t.Context(), `SELECT COUNT(DISTINCT grain),
				COALESCE(SUM(CASE WHEN bucket_start % (grain * 1000000) <> 0 THEN 1 ELSE 0 END), 0),
				COALESCE(SUM(CASE WHEN grain = 60 AND bucket_start < ? THEN 1 ELSE 0 END), 0)
				FROM `+table, sqlstore.Micros(testNow.Add(-analytics.MinuteRetention-time.Minute))).Scan(&grains, &misaligned, &minuteOld)
			if err != nil {
				t.Fatalf("%s: %v", table, err)
			}
			want := int64(4) // minute, hour, day, week
			if table == "analytics_models" {
				want = 3
			}
			if grains != want || misaligned != 0 || minuteOld != 0 {
				t.Errorf("%s: %d grains (want %d), %d rows off their bucket edge, %d minute rows older than the minute retention",
					table, grains, want, misaligned, minuteOld)
			}
		}
	})
}

func TestReportEmptyWindow(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		r := analytics.NewRollups(db)
		got, err := r.Report(t.Context(), window(t, "period=7d", testNow))
		if err != nil {
			t.Fatalf("Report: %v", err)
		}
		js, err := json.Marshal(got)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(js), "null") {
			t.Errorf("empty report has a null: %s", js)
		}
		var m map[string]any
		if err := json.Unmarshal(js, &m); err != nil {
			t.Fatal(err)
		}
		if vol := m["volume"].([]any); len(vol) != 28 {
			t.Errorf("volume has %d buckets, want 28", len(vol))
		} else if first := vol[0].(map[string]any); first["requests"] != 0.0 || first["start"] != "2026-05-13T12:00:00Z" {
			t.Errorf("first bucket = %v, want zeros from 2026-05-13T12:00:00Z", first)
		}
		for _, k := range []string{"cost_by_provider", "cost_by_model", "top_models", "top_users", "top_keys", "error_rate_by_provider"} {
			if l, ok := m[k].([]any); !ok || len(l) != 0 {
				t.Errorf("%s = %v, want []", k, m[k])
			}
		}
		want := map[string]any{"p50": 0.0, "p95": 0.0, "avg": 0.0}
		if diff := gocmp.Diff(want, m["latency_ms"]); diff != "" {
			t.Errorf("latency_ms (-want +got):\n%s", diff)
		}
		if m["period"] != "7d" || m["bucket_seconds"] != 21600.0 || m["success"] != true {
			t.Errorf("period %v, bucket_seconds %v, success %v", m["period"], m["bucket_seconds"], m["success"])
		}
	})
}

// TestConcurrentAdd adds from two connection pools to one PostgreSQL
// database at once, 4 writers × 50 batches over the same rollup rows, as
// bridges do: the sums are exact and no writer deadlocks (a deadlock fails
// an Add or a Commit). SQLite, the embedded default, has one bridge and one
// writer at a time.
func TestConcurrentAdd(t *testing.T) {
	url := storetest.PostgresURL(t)
	dbs := []*sqlstore.DB{storetest.OpenSQL(t, url), storetest.OpenSQL(t, url)}
	const writers, batches, size = 4, 50, 40
	all := make([][]audit.Record, writers)
	rng := rand.New(rand.NewPCG(5, 6))
	for w := range all {
		all[w] = genRecords(rng, batches*size, testNow.Add(-3*time.Hour), testNow, shape{3, 5, 8, 8})
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Go(func() {
			db := dbs[w%2]
			r := analytics.NewRollups(db)
			analytics.SetNow(r, func() time.Time { return testNow })
			for i := range batches {
				tx, err := db.Begin(t.Context())
				if err != nil {
					errs <- err
					return
				}
				if err := r.Add(t.Context(), tx, all[w][i*size:(i+1)*size]); err != nil {
					tx.Rollback()
					errs <- fmt.Errorf("writer %d batch %d: %w", w, i, err)
					return
				}
				if err := tx.Commit(); err != nil {
					errs <- fmt.Errorf("writer %d batch %d: commit: %w", w, i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	recs := slices.Concat(all...)
	r := analytics.NewRollups(dbs[0])
	for _, query := range []string{"period=24h", "from=2026-05-20T07:00:00Z&to=2026-05-20T11:00:00Z"} {
		w := window(t, query, testNow)
		got, err := r.Report(t.Context(), w)
		if err != nil {
			t.Fatalf("Report: %v", err)
		}
		if got.Totals.Requests != writers*batches*size {
			t.Errorf("%s: %d requests, want %d", query, got.Totals.Requests, writers*batches*size)
		}
		checkReport(t, query, got, bruteForce(recs, w))
	}
}

func TestAddEscapesText(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		r := analytics.NewRollups(db)
		analytics.SetNow(r, func() time.Time { return testNow })
		rec := audit.Record{RequestID: "r1", Timestamp: testNow.Add(-time.Hour), Provider: "p\x00", Model: "m\xff",
			KeyID: "k\x00", KeyMask: "sk-\xfe…", UserID: "u\x00\xff", Status: 200, Success: true, LatencyMS: 10}
		if err := r.Add(t.Context(), nil, []audit.Record{rec, rec}); err != nil {
			t.Fatalf("Add: %v", err)
		}
		got, err := r.Report(t.Context(), window(t, "period=24h", testNow))
		if err != nil {
			t.Fatalf("Report: %v", err)
		}
		esc := sqlstore.EscapeText
		if len(got.CostByProvider) != 1 || got.CostByProvider[0].Provider != esc(rec.Provider) || got.CostByProvider[0].Requests != 2 ||
			len(got.TopModels) != 1 || got.TopModels[0].Model != esc(rec.Model) ||
			len(got.TopKeys) != 1 || got.TopKeys[0].KeyID != esc(rec.KeyID) || got.TopKeys[0].Key != esc(rec.KeyMask) ||
			len(got.TopUsers) != 1 || got.TopUsers[0].UserID != esc(rec.UserID) {
			t.Errorf("report = %+v; want the escaped names, 2 requests each", got)
		}
	})
}

func TestPurge(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		r := analytics.NewRollups(db)
		analytics.SetNow(r, func() time.Time { return testNow })
		recs := genRecords(rand.New(rand.NewPCG(9, 9)), 3000, testNow.Add(-40*24*time.Hour), testNow, shape{2, 4, 6, 6})
		addBatches(t, r, db, recs, 1000)
		count := func(table string, grain int64, before time.Time) int64 {
			var n int64
			if err := db.QueryRow(t.Context(), "SELECT COUNT(*) FROM "+table+" WHERE grain = ? AND bucket_start < ?",
				grain, sqlstore.Micros(before)).Scan(&n); err != nil {
				t.Fatal(err)
			}
			return n
		}
		later := testNow.Add(time.Hour) // minute rows of the first hour of the 48 h go
		retention := 20 * 24 * time.Hour
		if count("analytics_models", 60, later.Add(-analytics.MinuteRetention)) == 0 ||
			count("analytics_keys", 3600, later.Add(-retention)) == 0 || count("analytics_users", 86400, later.Add(-retention)) == 0 ||
			count("analytics_users", 604800, later.Add(-retention-7*24*time.Hour)) == 0 {
			t.Fatal("the test data has no rows to purge")
		}
		n, err := r.Purge(t.Context(), later, retention)
		if err != nil {
			t.Fatalf("Purge: %v", err)
		}
		if n == 0 {
			t.Error("Purge deleted nothing")
		}
		for _, table := range []string{"analytics_models", "analytics_keys", "analytics_users"} {
			// A bucket goes once it ended before the cut-off.
			if c := count(table, 60, later.Add(-analytics.MinuteRetention-time.Minute+time.Microsecond)); c != 0 {
				t.Errorf("%s: %d minute rows older than 48 h left", table, c)
			}
			if c := count(table, 3600, later.Add(-retention-time.Hour+time.Microsecond)); c != 0 {
				t.Errorf("%s: %d hour rows older than the retention left", table, c)
			}
			if c := count(table, 86400, later.Add(-retention-24*time.Hour+time.Microsecond)); c != 0 {
				t.Errorf("%s: %d day rows ended before the retention left", table, c)
			}
			if c := count(table, 604800, later.Add(-retention-7*24*time.Hour+time.Microsecond)); c != 0 {
				t.Errorf("%s: %d week rows ended before the retention left", table, c)
			}
		}
		// What is left still reports exactly: a window inside the retention.
		w := window(t, "from=2026-05-05T00:00:00Z&to=2026-05-20T00:00:00Z", testNow)
		got, err := r.Report(t.Context(), w)
		if err != nil {
			t.Fatalf("Report: %v", err)
		}
		checkReport(t, "after purge", got, bruteForce(recs, w))
		// Retention 0 keeps hour and day rows.
		before := count("analytics_keys", 3600, testNow)
		if _, err := r.Purge(t.Context(), testNow.Add(365*24*time.Hour), 0); err != nil {
			t.Fatal(err)
		}
		if after := count("analytics_keys", 3600, testNow); after != before {
			t.Errorf("retention 0: %d hour rows left of %d", after, before)
		}
	})
}

func TestReportRefusesBadWindow(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		r := analytics.NewRollups(db)
		from := at("2026-05-01T00:00:00Z")
		for _, w := range []analytics.Window{
			{From: from, To: from, Bucket: time.Hour},
			{From: from, To: from.Add(time.Hour), Bucket: 0},
			{From: from, To: from.Add(time.Hour), Bucket: 90 * time.Second},
			{From: from, To: from.Add(3 * time.Hour), Bucket: 90 * time.Minute},
			{From: from.Add(time.Minute), To: from.Add(time.Hour + time.Minute), Bucket: time.Hour},
			{From: from, To: from.Add(20000 * time.Minute), Bucket: time.Minute},
		} {
			if _, err := r.Report(t.Context(), w); err == nil {
				t.Errorf("Report(%v – %v by %v): no error", w.From, w.To, w.Bucket)
			}
		}
	})
}
