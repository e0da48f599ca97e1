package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

func TestParseLogsFlags(t *testing.T) {
	t.Setenv("SVC_TEST_DATABASE_URL", "postgres://h/db")
	t.Setenv("SVC_TEST_REDIS_URL", "redis://h")
	o, err := parseLogsFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if o.gen.entries != 1_000_000 || o.gen.days != 30 || o.gen.keys != 2000 || o.gen.users != 5000 || o.batch != 1000 || o.requests != 50 ||
		o.postgres != "postgres://h/db" || o.redis != "redis://h" || o.schema != "" {
		t.Errorf("defaults: %+v", o)
	}
	for _, args := range [][]string{
		{"-schema", "Bad-Name"}, {"-entries", "0"}, {"-batch", "0"}, {"-batch", "6000"}, {"-writers", "0"}, {"-requests", "0"}, {"x"},
	} {
		if _, err := parseLogsFlags(args, &bytes.Buffer{}); err == nil {
			t.Errorf("parseLogsFlags(%q): got no error", args)
		}
	}
	t.Setenv("SVC_TEST_REDIS_URL", "")
	if _, err := parseLogsFlags(nil, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "-redis") {
		t.Errorf("no Redis: got %v", err)
	}
}

// The generator makes entries as the proxy does, spread as a fleet's are,
// and the same ones for the same spec.
func TestGenerator(t *testing.T) {
	end := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	const n = 20000
	g := newGenerator(genSpec{entries: n, days: 30, keys: 2000, users: 5000, seed: 1, end: end})
	providers, models, keys, users := map[string]bool{}, map[string]bool{}, map[string]int{}, map[string]bool{}
	var ok, streams, cached, convs int
	var prev audit.Record
	for i := range n {
		r, err := g.record(i)
		if err != nil {
			t.Fatal(err)
		}
		if r.Timestamp.Before(end.Add(-30*24*time.Hour)) || !r.Timestamp.Before(end) || r.Timestamp.Before(prev.Timestamp) {
			t.Fatalf("entry %d at %v (previous %v)", i, r.Timestamp, prev.Timestamp)
		}
		if len(r.RequestID) != 36 || r.RequestID[14] != '7' || (i > 0 && r.Timestamp.UnixMilli() > prev.Timestamp.UnixMilli() && r.RequestID < prev.RequestID) {
			t.Fatalf("entry %d: request id %q not a time-ordered UUIDv7 (previous %q)", i, r.RequestID, prev.RequestID)
		}
		prev = r
		var e audit.Entry
		if err := json.Unmarshal(r.Entry, &e); err != nil || e.RequestID != r.RequestID || e.ComplianceStatus != "not_scanned" {
			t.Fatalf("entry %d: %v %s", i, err, r.Entry)
		}
		if r.Provider != "" {
			providers[r.Provider], models[r.Provider+"/"+r.Model] = true, true
		}
		keys[r.KeyID]++
		users[r.UserID] = true
		if r.Status == 200 {
			ok++
		}
		if e.Stream {
			streams++
		}
		if r.CacheHit {
			cached++
			if r.TokensSaved <= 0 || r.CostSaved <= 0 || r.Tokens != 0 {
				t.Errorf("cache hit %d: %+v", i, r)
			}
		}
		if r.ConversationID != "" {
			convs++
		}
		if r.Success && (r.Cost <= 0 || r.LatencyMS < 0) && !r.CacheHit {
			t.Errorf("answered entry %d without a cost: %+v", i, r)
		}
	}
	within := func(name string, got, lo, hi float64) {
		if got < lo || got > hi {
			t.Errorf("%s: got %.3f, want %.3f–%.3f", name, got, lo, hi)
		}
	}
	within("providers", float64(len(providers)), 10, 10)
	within("models", float64(len(models)), 38, 40)
	within("keys", float64(len(keys)), 1000, 2001) // Zipf: the rare ones may not come up in 20,000
	within("users", float64(len(users)), 1000, 7001)
	within("answered", float64(ok)/n, 0.94, 0.97)
	within("streams", float64(streams)/n, 0.3, 0.45)
	within("cache hits", float64(cached)/n, 0.03, 0.07)
	within("conversations", float64(convs)/n, 0.2, 0.3)
	a, _ := g.record(123)
	b, _ := newGenerator(g.spec).record(123)
	if string(a.Entry) != string(b.Entry) {
		t.Errorf("the same spec made different entries:\n%s\n%s", a.Entry, b.Entry)
	}
}

// measureQueries times each query, counts failures, reads the first
// answer's total and skips an optional route that is not there.
func TestMeasureQueries(t *testing.T) {
	var calls int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		switch {
		case r.Header.Get("Authorization") != "Bearer adm":
			http.Error(w, "no", http.StatusUnauthorized)
		case r.URL.Path == "/api/vas/logs":
			w.Write([]byte(`{"success":true,"total":7,"data":[{},{}]}`))
		case r.URL.Path == "/api/vas/metrics":
			w.Write([]byte(`{"total_requests":9}`))
		case r.URL.Path == "/broken":
			http.Error(w, "boom", http.StatusInternalServerError)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	rep := &logsReport{Requests: 4}
	measureQueries(context.Background(), srv.URL, "adm", []logQuery{
		{name: "logs", paths: []string{"/api/vas/logs", "/api/vas/logs?key_id=a"}},
		{name: "metrics", paths: []string{"/api/vas/metrics"}},
		{name: "broken", paths: []string{"/broken"}},
		{name: "analytics", paths: []string{"/api/analytics"}, optional: true},
	}, 1, rep, &bytes.Buffer{})
	if calls != 3*5+1 {
		t.Errorf("requests: got %d, want 16", calls)
	}
	q := rep.Queries
	if len(q) != 4 || q[0].Total != 7 || q[0].Rows != 2 || q[0].Requests != 4 || q[0].P95 <= 0 || q[1].Total != 9 ||
		q[2].Failures != 4 || !strings.Contains(q[2].FirstError, "status 500") || q[3].Skipped == "" || rep.Failures != 4 {
		t.Errorf("report: %+v", rep)
	}
	var out bytes.Buffer
	writeLogsTable(&out, rep)
	for _, want := range []string{"logs", "skipped", "FAILED: broken"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table has no %q:\n%s", want, &out)
		}
	}
}

// fill writes the generated entries through audit.SQLStore.Write into the
// monthly partitions, with their rollups, and the queries' samples come
// from them.
func TestFillPostgres(t *testing.T) {
	pg := os.Getenv("SVC_TEST_DATABASE_URL")
	if pg == "" {
		t.Skip("needs SVC_TEST_DATABASE_URL")
	}
	ctx := t.Context()
	schema := "svcbench_logs_t" + randomHex(4)
	drop, err := createSchema(ctx, pg, schema, true)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := drop(); err != nil {
			t.Error(err)
		}
	}()
	u, err := withSearchPath(pg, schema)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlstore.Open(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o := &logsOptions{gen: genSpec{entries: 2500, days: 30, keys: 50, users: 80, seed: 3}, batch: 1000, writers: 2}
	rep := &logsReport{Schema: schema}
	if err := fill(ctx, db, o, rep, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	var stored, parts int64
	if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM audit_logs`).Scan(&stored); err != nil || stored != 2500 || rep.Entries != 2500 {
		t.Fatalf("stored %d, reported %d, %v", stored, rep.Entries, err)
	}
	if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM audit_logs_default`).Scan(&parts); err != nil || parts != 0 {
		t.Errorf("entries in the default partition: %d, %v", parts, err)
	}
	// The rollups were written with the entries: each counted once a day.
	var rolled int64
	if err := db.QueryRow(ctx, `SELECT COALESCE(SUM(requests), 0) FROM analytics_models WHERE grain = 86400`).Scan(&rolled); err != nil || rolled != 2500 {
		t.Errorf("requests in the day rollups: got %d, %v; want 2500", rolled, err)
	}
	qs, err := logQueries(ctx, db, 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 8 || len(qs[1].paths) != 5 || !strings.Contains(qs[1].paths[0], "key_id=vk_") || !strings.Contains(qs[6].paths[0], "before=") {
		t.Errorf("queries: %+v", qs)
	}
}
