package audit_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// groupRec is a record of the grouping tests.
func groupRec(id string, at time.Time, provider, model, key string, status int, cost float64, latency int64) audit.Record {
	return audit.Record{RequestID: id, Timestamp: at, Provider: provider, Model: model, KeyID: key,
		Status: status, Success: status < 400, Cost: cost, LatencyMS: latency, Entry: []byte(`{}`)}
}

// TestGroupLogs checks the grouping on SQL: sums per hour, day or the
// whole query, per provider and model, newest bucket first, under the
// query's filters (the provider prefix, a key, the outcome), and the limit.
func TestGroupLogs(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		s := audit.NewSQLStore(db)
		h0 := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
		recs := []audit.Record{
			groupRec("a1", h0.Add(5*time.Minute), "mcp:a", "t1", "k1", 200, 0.01, 10),
			groupRec("a2", h0.Add(50*time.Minute), "mcp:a", "t1", "k2", 502, 0.02, 30),
			groupRec("a3", h0.Add(70*time.Minute), "mcp:a", "t1", "k1", 200, 0.04, 50),
			groupRec("a4", h0.Add(71*time.Minute), "mcp:a", "t2", "k1", 200, 0, 7),
			groupRec("b1", h0.Add(72*time.Minute), "mcp:b", "t1", "k1", 200, 0.5, 1),
			groupRec("o1", h0.Add(6*time.Minute), "openai", "gpt", "k1", 200, 3, 100),
			groupRec("x1", h0.Add(6*time.Minute), "mcp;", "t1", "k1", 200, 3, 100),
			groupRec("x2", h0.Add(6*time.Minute), "mcp", "t1", "k1", 200, 3, 100),
			groupRec("d1", h0.Add(-24*time.Hour), "mcp:a", "t1", "k1", 200, 1, 1),
		}
		// A tool error: answered 200 but not successful.
		te := groupRec("a5", h0.Add(73*time.Minute), "mcp:a", "t2", "k2", 200, 0.25, 9)
		te.Success = false
		recs = append(recs, te)
		if _, err := s.Write(ctx, recs, nil); err != nil {
			t.Fatal(err)
		}
		h1 := h0.Add(time.Hour)
		day := time.Date(2026, 3, 4, 0, 0, 0, 0, time.UTC)
		mcp := audit.Query{ProviderPrefix: "mcp:", Since: h0}
		for _, tt := range []struct {
			name   string
			q      audit.Query
			bucket time.Duration
			want   []audit.Group
		}{
			{"hours", mcp, time.Hour, []audit.Group{
				{Bucket: h1, Provider: "mcp:a", Model: "t1", Requests: 1, Cost: 0.04, LatencySumMS: 50},
				{Bucket: h1, Provider: "mcp:a", Model: "t2", Requests: 2, Errors: 1, Cost: 0.25, LatencySumMS: 16},
				{Bucket: h1, Provider: "mcp:b", Model: "t1", Requests: 1, Cost: 0.5, LatencySumMS: 1},
				{Bucket: h0, Provider: "mcp:a", Model: "t1", Requests: 2, Errors: 1, Cost: 0.03, LatencySumMS: 40},
			}},
			{"days", audit.Query{ProviderPrefix: "mcp:", Provider: "mcp:a", Model: "t1"}, 24 * time.Hour, []audit.Group{
				{Bucket: day, Provider: "mcp:a", Model: "t1", Requests: 3, Errors: 1, Cost: 0.07, LatencySumMS: 90},
				{Bucket: day.Add(-24 * time.Hour), Provider: "mcp:a", Model: "t1", Requests: 1, Cost: 1, LatencySumMS: 1},
			}},
			{"whole window, one key", audit.Query{ProviderPrefix: "mcp:", KeyID: "k2"}, 0, []audit.Group{
				{Provider: "mcp:a", Model: "t1", Requests: 1, Errors: 1, Cost: 0.02, LatencySumMS: 30},
				{Provider: "mcp:a", Model: "t2", Requests: 1, Errors: 1, Cost: 0.25, LatencySumMS: 9},
			}},
			{"errors only", audit.Query{ProviderPrefix: "mcp:", Outcome: audit.OutcomeError}, 0, []audit.Group{
				{Provider: "mcp:a", Model: "t1", Requests: 1, Errors: 1, Cost: 0.02, LatencySumMS: 30},
				{Provider: "mcp:a", Model: "t2", Requests: 1, Errors: 1, Cost: 0.25, LatencySumMS: 9},
			}},
			{"limit keeps the newest", audit.Query{ProviderPrefix: "mcp:", Since: h0, Limit: 2}, time.Hour, []audit.Group{
				{Bucket: h1, Provider: "mcp:a", Model: "t1", Requests: 1, Cost: 0.04, LatencySumMS: 50},
				{Bucket: h1, Provider: "mcp:a", Model: "t2", Requests: 2, Errors: 1, Cost: 0.25, LatencySumMS: 16},
			}},
			{"nothing", audit.Query{ProviderPrefix: "nope:"}, time.Hour, []audit.Group{}},
		} {
			got, err := s.GroupLogs(ctx, tt.q, tt.bucket)
			if err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
			if diff := cmp.Diff(tt.want, got, approxCost); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.name, diff)
			}
		}
	})
}

// approxCost compares sums of costs to a part in a billion.
var approxCost = cmp.Comparer(func(a, b float64) bool {
	d := a - b
	return d < 1e-9 && d > -1e-9
})

// TestQueryLogsProviderPrefix checks that a provider prefix selects
// exactly the providers starting with it, at the edges of the byte order
// too (a last rune below the surrogates, and U+10FFFF, which has no
// successor).
func TestQueryLogsProviderPrefix(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		s := audit.NewSQLStore(db)
		at := time.Now().UTC().Add(-time.Minute)
		var recs []audit.Record
		for i, p := range []string{"mcp", "mcp:", "mcp:a", "mcp:zz", "mcp;", "mcq", "MCP:a", "openai",
			"x\uD7FF", "x\uD7FFy", "x\uE000", "y\U0010FFFF", "y\U0010FFFFz", "z"} {
			recs = append(recs, groupRec(p, at.Add(time.Duration(i)*time.Millisecond), p, "m", "", 200, 0, 0))
		}
		if _, err := s.Write(ctx, recs, nil); err != nil {
			t.Fatal(err)
		}
		for prefix, want := range map[string][]string{
			"mcp:":        {"mcp:", "mcp:a", "mcp:zz"},
			"mcp":         {"mcp", "mcp:", "mcp:a", "mcp:zz", "mcp;"},
			"x\uD7FF":     {"x\uD7FF", "x\uD7FFy"},
			"y\U0010FFFF": {"y\U0010FFFF", "y\U0010FFFFz"},
		} {
			got, total, err := s.QueryLogs(ctx, audit.Query{ProviderPrefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, r := range got {
				names = append(names, r.Provider)
			}
			slices.Sort(names)
			if !slices.Equal(names, want) || total != int64(len(want)) {
				t.Errorf("prefix %+q: got %+q (total %d), want %+q", prefix, names, total, want)
			}
		}
	})
}

// TestReaderGroupsMergesHot checks that the merged grouping adds the
// entries the bridge has not written to the store's groups, each once,
// under the query's filters.
func TestReaderGroupsMergesHot(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		s := audit.NewSQLStore(db)
		h0 := time.Now().UTC().Truncate(time.Hour).Add(-2 * time.Hour)
		stored := groupRec("s1", h0.Add(time.Minute), "mcp:a", "t1", "k1", 200, 0.1, 10)
		if _, err := s.Write(ctx, []audit.Record{stored}, nil); err != nil {
			t.Fatal(err)
		}
		entry := func(id string, at time.Time, server, tool string, status int) []byte {
			js, err := json.Marshal(audit.Entry{RequestID: id, Timestamp: at.Format(time.RFC3339Nano),
				Provider: "mcp:" + server, Model: tool, Cost: 0.2, LatencyMS: 20, Status: status,
				Metrics: audit.EntryMetrics{Success: status < 400}})
			if err != nil {
				t.Fatal(err)
			}
			return js
		}
		hot := hotList{
			entry("s1", stored.Timestamp, "a", "t1", 200), // written already: counted once
			entry("h1", h0.Add(2*time.Minute), "a", "t1", 500),
			entry("h2", h0.Add(61*time.Minute), "b", "t9", 200),
			[]byte(`{"request_id":"o1","timestamp":"` + h0.Format(time.RFC3339) + `","provider":"openai","model":"gpt"}`),
		}
		r := &audit.Reader{Store: s, Hot: hot}
		got, err := r.Groups(ctx, audit.Query{ProviderPrefix: "mcp:"}, time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		want := []audit.Group{
			{Bucket: h0.Add(time.Hour), Provider: "mcp:b", Model: "t9", Requests: 1, Cost: 0.2, LatencySumMS: 20},
			{Bucket: h0, Provider: "mcp:a", Model: "t1", Requests: 2, Errors: 1, Cost: 0.3, LatencySumMS: 30},
		}
		if diff := cmp.Diff(want, got, approxCost); diff != "" {
			t.Errorf("groups (-want +got):\n%s", diff)
		}
		got, err = r.Groups(ctx, audit.Query{ProviderPrefix: "mcp:", Limit: 1}, time.Hour)
		if err != nil || len(got) != 1 || got[0].Model != "t9" {
			t.Errorf("limit 1: got %+v, %v; want the newest group only", got, err)
		}
	})
}
