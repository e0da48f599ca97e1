package storetest

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/svc-gateway/svc/internal/audit"
)

// ExerciseAuditStore checks that s behaves as audit.Store documents. Subtests
// run in order and share s. Records carry a random token, but SummarizeLogs
// and an unfiltered QueryLogs see the whole store, so give the suite a fresh
// store: it checks them over records timestamped after 2150, which only it
// writes.
func ExerciseAuditStore(t *testing.T, s audit.Store) {
	t.Helper()
	fx := auditFixture{s: s, tok: randomHex(6), day: time.Date(2025, 7, 1, 10, 0, 0, 0, time.UTC)}

	t.Run("RoundTrip", func(t *testing.T) { auditStoreRoundTrip(t, fx) })
	t.Run("InsertNothing", func(t *testing.T) { auditStoreInsertNothing(t, fx) })
	t.Run("DuplicatesSkipped", func(t *testing.T) { auditStoreDuplicatesSkipped(t, fx) })
	t.Run("LargeBatch", func(t *testing.T) { auditStoreLargeBatch(t, fx) })
	t.Run("UnsafeBytes", func(t *testing.T) { auditStoreUnsafeBytes(t, fx) })
	// QueryFilters' unfiltered "since" queries see every record after 2150:
	// they must run before Summarize writes its records at 2200.
	t.Run("QueryFilters", func(t *testing.T) { auditStoreQueryFilters(t, fx) })
	t.Run("SpendSince", func(t *testing.T) { auditStoreSpendSince(t, fx) })
	t.Run("Summarize", func(t *testing.T) { auditStoreSummarize(t, fx) })
}

// auditFixture is what every ExerciseAuditStore subtest shares: the store
// under test, the random token that keeps the suite's request IDs and keys
// apart from other runs', and a day in 2025 to timestamp records on.
type auditFixture struct {
	s   audit.Store
	tok string
	day time.Time
}

// auditStoreRoundTrip checks that records, JSON entries byte for byte
// included, read back from QueryLogs as they were inserted, newest first.
func auditStoreRoundTrip(t *testing.T, fx auditFixture) {
	s, tok, day := fx.s, fx.tok, fx.day
	ctx := t.Context()
	key := "key-rt-" + tok
	recs := []audit.Record{
		{
			RequestID: "req-rt-1-" + tok, Timestamp: day.Add(1234567 * time.Microsecond), KeyID: key,
			Provider: "openai", Model: "gpt-4o", Status: 200, Success: true,
			Tokens: 1500, Cost: 0.0125, LatencyMS: 830,
			Entry: []byte(`{"request_id":"req-rt-1","messages":[{"role":"user","content":"héllo \u00e9 \"quoted\""}],  "spacing" : [ 1 ,2 ] }`),
		},
		{
			RequestID: "req-rt-2-" + tok, Timestamp: day.Add(time.Second), KeyID: key,
			Provider: "anthropic", Model: "claude-sonnet-4", Status: 429, Success: false,
			Entry: []byte(`{"error":"rate limited","emoji":"🙂","n":1e3}`),
		},
		{
			RequestID: "req-rt-3-" + tok, Timestamp: day, KeyID: key,
			Status: 401, Entry: []byte(`{}`),
		},
	}
	if err := s.InsertLogs(ctx, recs); err != nil {
		t.Fatalf("InsertLogs: %v", err)
	}
	got, total, err := s.QueryLogs(ctx, audit.Query{KeyID: key})
	if err != nil {
		t.Fatalf("QueryLogs: %v", err)
	}
	if total != 3 {
		t.Errorf("QueryLogs total: got %d, want 3", total)
	}
	if diff := cmp.Diff(recs, got); diff != "" {
		t.Errorf("QueryLogs (-want +got):\n%s", diff)
	}
}

// auditStoreInsertNothing checks that inserting no records is not an error.
func auditStoreInsertNothing(t *testing.T, fx auditFixture) {
	if err := fx.s.InsertLogs(t.Context(), nil); err != nil {
		t.Errorf("InsertLogs(nil): got error %v, want nil", err)
	}
}

// auditStoreDuplicatesSkipped checks that a record whose RequestID is already
// stored, in an earlier batch or earlier in the same batch, is skipped: the
// first record with an ID is the one kept.
func auditStoreDuplicatesSkipped(t *testing.T, fx auditFixture) {
	s, tok, day := fx.s, fx.tok, fx.day
	ctx := t.Context()
	key := "key-dup-" + tok
	rec := func(id string, cost float64, ts time.Time) audit.Record {
		return audit.Record{RequestID: "req-dup-" + id + "-" + tok, Timestamp: ts, KeyID: key,
			Provider: "openai", Model: "m", Cost: cost, Entry: []byte(fmt.Sprintf(`{"id":%q,"cost":%g}`, id, cost))}
	}
	a, b, c := rec("a", 1, day), rec("b", 2, day.Add(time.Second)), rec("c", 3, day.Add(2*time.Second))
	b2 := rec("b", 20, day.Add(time.Hour)) // same RequestID as b
	d, d2 := rec("d", 4, day.Add(3*time.Second)), rec("d", 40, day.Add(4*time.Second))
	for i, batch := range [][]audit.Record{{a, b}, {b2, c}, {a, b}, {d, d2}} {
		if err := s.InsertLogs(ctx, batch); err != nil {
			t.Fatalf("InsertLogs batch %d: got error %v, want nil", i, err)
		}
	}
	got, total, err := s.QueryLogs(ctx, audit.Query{KeyID: key})
	if err != nil {
		t.Fatalf("QueryLogs: %v", err)
	}
	want := []audit.Record{d, c, b, a}
	if total != int64(len(want)) {
		t.Errorf("QueryLogs total: got %d, want %d", total, len(want))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("QueryLogs after duplicate inserts (-want +got):\n%s", diff)
	}
}

// auditStoreLargeBatch checks that one batch of 1234 records is stored
// whole: QueryLogs counts them all and returns the newest two under a limit,
// and SpendSince sums their cost.
func auditStoreLargeBatch(t *testing.T, fx auditFixture) {
	s, tok, day := fx.s, fx.tok, fx.day
	ctx := t.Context()
	key := "key-bulk-" + tok
	const n = 1234
	recs := make([]audit.Record, n)
	for i := range recs {
		recs[i] = audit.Record{RequestID: fmt.Sprintf("req-bulk-%s-%04d", tok, i),
			Timestamp: day.Add(time.Duration(i) * time.Millisecond), KeyID: key,
			Provider: "openai", Model: "m", Status: 200, Success: true, Tokens: 1, Cost: 0.5,
			Entry: []byte(fmt.Sprintf(`{"i":%d}`, i))}
	}
	if err := s.InsertLogs(ctx, recs); err != nil {
		t.Fatalf("InsertLogs(%d records): %v", n, err)
	}
	got, total, err := s.QueryLogs(ctx, audit.Query{KeyID: key, Limit: 2})
	if err != nil {
		t.Fatalf("QueryLogs: %v", err)
	}
	if total != n {
		t.Errorf("QueryLogs total: got %d, want %d", total, n)
	}
	if diff := cmp.Diff([]audit.Record{recs[n-1], recs[n-2]}, got); diff != "" {
		t.Errorf("QueryLogs newest two (-want +got):\n%s", diff)
	}
	spend, err := s.SpendSince(ctx, key, time.Time{})
	if err != nil {
		t.Fatalf("SpendSince: %v", err)
	}
	if want := 0.5 * n; !closeTo(spend, want) {
		t.Errorf("SpendSince: got %v, want %v", spend, want)
	}
}

// auditStoreUnsafeBytes checks records holding NUL bytes and invalid UTF-8.
// A caller chooses the model name: NUL bytes and invalid UTF-8 in it (or in
// any text) must not fail the batch that carries it, which PostgreSQL's text
// type would refuse. Such values are stored escaped (Go's \xHH in the
// columns, JSON's \u0000 and \ufffd in the entry), and a query with the raw
// value finds the record. SpendSince takes the raw key too, and a retried
// batch is still skipped whole.
func auditStoreUnsafeBytes(t *testing.T, fx auditFixture) {
	s := fx.s
	ctx := t.Context()
	key := "key-unsafe-" + fx.tok
	recs, bad := auditUnsafeRecords(fx, key)
	raw := recs[bad]
	if err := s.InsertLogs(ctx, recs); err != nil {
		t.Fatalf("InsertLogs(%d records, one with NUL bytes and invalid UTF-8): %v", len(recs), err)
	}
	auditStoreUnsafeQueries(t, s, key, recs, bad)
	for _, k := range []string{key, raw.KeyID} {
		if _, err := s.SpendSince(ctx, k, time.Time{}); err != nil {
			t.Errorf("SpendSince(%+q): %v", k, err)
		}
	}
	// A retried batch is still skipped whole.
	if err := s.InsertLogs(ctx, recs); err != nil {
		t.Fatalf("InsertLogs again: %v", err)
	}
	if _, total, err := s.QueryLogs(ctx, audit.Query{KeyID: raw.KeyID}); err != nil || total != 1 {
		t.Errorf("QueryLogs after the retry: got %d records (%v), want 1", total, err)
	}
}

// auditUnsafeRecords returns 60 records under key, one second apart, and the
// index of the one among them whose request ID, key, provider, model and
// entry carry NUL bytes and invalid UTF-8.
func auditUnsafeRecords(fx auditFixture, key string) (recs []audit.Record, bad int) {
	const n = 60
	bad = 23
	recs = make([]audit.Record, n)
	for i := range recs {
		recs[i] = audit.Record{RequestID: fmt.Sprintf("req-unsafe-%s-%02d", fx.tok, i),
			Timestamp: fx.day.Add(time.Duration(i) * time.Second), KeyID: key,
			Provider: "openai", Model: "gpt-4o-mini", Status: 200, Success: true, Tokens: 3, Cost: 0.25,
			Entry: []byte(fmt.Sprintf(`{"i":%d,"model":"gpt-4o-mini"}`, i))}
	}
	raw := recs[bad]
	raw.RequestID += "\x00"
	raw.KeyID = key + "\x00\xc3"
	raw.Provider = "open\xffai"
	raw.Model = "gpt-4o-mini\x00\xe2\x82"
	raw.Entry = []byte("{\"model\":\"gpt-4o-mini\x00\",\"note\":\"caf\xc3\xa9 \xff\xfe\"}")
	recs[bad] = raw
	return recs, bad
}

// auditStoreUnsafeQueries checks, after recs (from auditUnsafeRecords) are
// inserted, that the other records read back unchanged, that the unsafe one,
// recs[bad], reads back escaped and is found by its raw and by its escaped
// values, and that a NUL byte in a query matches no other record.
func auditStoreUnsafeQueries(t *testing.T, s audit.Store, key string, recs []audit.Record, bad int) {
	raw := recs[bad]
	escaped := raw
	escaped.RequestID = recs[bad].RequestID[:len(recs[bad].RequestID)-1] + `\x00`
	escaped.KeyID = key + `\x00\xc3`
	escaped.Provider = `open\xffai`
	escaped.Model = `gpt-4o-mini\x00\xe2\x82`
	escaped.Entry = []byte(`{"model":"gpt-4o-mini\u0000","note":"café \ufffd\ufffd"}`)
	good := slices.Delete(slices.Clone(recs), bad, bad+1)
	slices.Reverse(good) // newest first
	tests := []struct {
		name string
		q    audit.Query
		want []audit.Record
	}{
		{"the others, unchanged", audit.Query{KeyID: key}, good},
		{"by the raw key", audit.Query{KeyID: raw.KeyID}, []audit.Record{escaped}},
		{"by the raw model", audit.Query{Model: raw.Model}, []audit.Record{escaped}},
		{"by the raw provider and key", audit.Query{Provider: raw.Provider, KeyID: raw.KeyID}, []audit.Record{escaped}},
		{"by the escaped form", audit.Query{Model: escaped.Model, KeyID: escaped.KeyID}, []audit.Record{escaped}},
		{"NUL matches nothing else", audit.Query{KeyID: key, Model: "gpt-4o-mini\x00"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, total, err := s.QueryLogs(t.Context(), tt.q)
			if err != nil {
				t.Fatalf("QueryLogs(%+q): %v", tt.q.Model, err)
			}
			if total != int64(len(tt.want)) {
				t.Errorf("QueryLogs total: got %d, want %d", total, len(tt.want))
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("QueryLogs (-want +got):\n%s", diff)
			}
		})
	}
}

// auditStoreQueryFilters checks QueryLogs' filters (provider, model, key,
// since), its limit and offset, its total and its newest-first order, against
// referenceQuery over the same records, inserted out of order. Its "since"
// queries filter nothing else, so they need the store to hold no records
// after 2150 but these.
func auditStoreQueryFilters(t *testing.T, fx auditFixture) {
	s := fx.s
	era := time.Date(2150, 1, 1, 0, 0, 0, 0, time.UTC)
	names := newAuditFilterNames(fx.tok)
	data := auditFilterRecords(fx.tok, era, names)
	// Insert out of order: the store orders, not the insert.
	shuffled := slices.Clone(data)
	slices.Reverse(shuffled[3:9])
	if err := s.InsertLogs(t.Context(), shuffled); err != nil {
		t.Fatalf("InsertLogs: %v", err)
	}

	for _, tt := range auditFilterQueries(fx.tok, era, names) {
		t.Run(tt.name, func(t *testing.T) {
			want, wantTotal := referenceQuery(data, tt.q)
			got, total, err := s.QueryLogs(t.Context(), tt.q)
			if err != nil {
				t.Fatalf("QueryLogs: %v", err)
			}
			if total != wantTotal {
				t.Errorf("QueryLogs total: got %d, want %d", total, wantTotal)
			}
			if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("QueryLogs(%+v) (-want +got):\n%s", tt.q, diff)
			}
		})
	}
}

// auditFilterNames are the providers, models and keys auditStoreQueryFilters'
// records carry, each made unique to the run by its token.
type auditFilterNames struct {
	pA, pB, m1, m2, k1, k2 string
}

// newAuditFilterNames returns the names for the run whose token is tok.
func newAuditFilterNames(tok string) auditFilterNames {
	return auditFilterNames{
		pA: "prov-a-" + tok, pB: "prov-b-" + tok,
		m1: "model-1-" + tok, m2: "model-2-" + tok,
		k1: "key-f1-" + tok, k2: "key-f2-" + tok,
	}
}

// auditFilterRecords returns 12 records a minute apart from era, in time
// order, spread over n's two providers (pB for odd i), two models (m1 for i a
// multiple of 3) and two keys (k2 from i = 6 on).
func auditFilterRecords(tok string, era time.Time, n auditFilterNames) []audit.Record {
	var data []audit.Record
	for i := range 12 {
		r := audit.Record{
			RequestID: fmt.Sprintf("req-f-%s-%02d", tok, i),
			Timestamp: era.Add(time.Duration(i) * time.Minute),
			Provider:  n.pA, Model: n.m2, KeyID: n.k1,
			Status: 200, Success: i%4 != 0, Tokens: int64(10 * i), Cost: float64(i) / 8,
			LatencyMS: int64(100 + i), Entry: []byte(fmt.Sprintf(`{"i":%d}`, i)),
		}
		if i%2 == 1 {
			r.Provider = n.pB
		}
		if i%3 == 0 {
			r.Model = n.m1
		}
		if i >= 6 {
			r.KeyID = n.k2
		}
		data = append(data, r)
	}
	return data
}

// auditFilterQuery is one named QueryLogs call of auditStoreQueryFilters.
type auditFilterQuery struct {
	name string
	q    audit.Query
}

// auditFilterQueries returns the queries auditStoreQueryFilters checks over
// auditFilterRecords(tok, era, n), in order.
func auditFilterQueries(tok string, era time.Time, n auditFilterNames) []auditFilterQuery {
	return []auditFilterQuery{
		{"provider", audit.Query{Provider: n.pA}},
		{"model", audit.Query{Model: n.m1}},
		{"key and provider", audit.Query{KeyID: n.k2, Provider: n.pA}},
		{"provider, model and key", audit.Query{Provider: n.pB, Model: n.m1, KeyID: n.k1}},
		{"since only", audit.Query{Since: era.Add(6 * time.Minute)}},
		{"since between records", audit.Query{Since: era.Add(6*time.Minute + time.Microsecond)}},
		{"provider and since", audit.Query{Provider: n.pA, Since: era.Add(4 * time.Minute)}},
		{"limit", audit.Query{KeyID: n.k1, Limit: 2}},
		{"limit and offset", audit.Query{KeyID: n.k1, Limit: 2, Offset: 2}},
		{"last page short", audit.Query{KeyID: n.k1, Limit: 4, Offset: 4}},
		{"offset past the end", audit.Query{KeyID: n.k1, Limit: 2, Offset: 10}},
		{"offset without limit", audit.Query{KeyID: n.k2, Offset: 3}},
		{"no match", audit.Query{Provider: "unknown-" + tok}},
	}
}

// auditStoreSpendSince checks that SpendSince sums one key's cost from a time
// on, that time included, and is 0 for a key with no records or a time after
// them all.
func auditStoreSpendSince(t *testing.T, fx auditFixture) {
	s, tok, day := fx.s, fx.tok, fx.day
	ctx := t.Context()
	key, other := "key-spend-"+tok, "key-spend-other-"+tok
	recs := []audit.Record{
		{RequestID: "req-s-1-" + tok, KeyID: key, Timestamp: day.Add(-time.Hour), Cost: 0.5},
		{RequestID: "req-s-2-" + tok, KeyID: key, Timestamp: day, Cost: 0.25},
		{RequestID: "req-s-3-" + tok, KeyID: key, Timestamp: day.Add(time.Hour), Cost: 1},
		{RequestID: "req-s-4-" + tok, KeyID: other, Timestamp: day.Add(time.Hour), Cost: 64},
	}
	for i := range recs {
		recs[i].Entry = []byte(`{}`)
	}
	if err := s.InsertLogs(ctx, recs); err != nil {
		t.Fatalf("InsertLogs: %v", err)
	}
	tests := []struct {
		name  string
		key   string
		since time.Time
		want  float64
	}{
		{"at a record's time", key, day, 1.25},
		{"everything", key, time.Time{}, 1.75},
		{"just after a record", key, day.Add(time.Microsecond), 1},
		{"after every record", key, day.Add(2 * time.Hour), 0},
		{"unknown key", "key-spend-none-" + tok, time.Time{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.SpendSince(t.Context(), tt.key, tt.since)
			if err != nil {
				t.Fatalf("SpendSince: %v", err)
			}
			if !closeTo(got, tt.want) {
				t.Errorf("SpendSince(%q, %v): got %v, want %v", tt.key, tt.since, got, tt.want)
			}
		})
	}
}

// auditStoreSummarize checks SummarizeLogs over the records from a time on
// (that time included): counts, average latency, token and cost totals, and
// the sorted distinct providers and models, or an empty summary when there
// are none. It needs the store to hold no records after 2200 but its own.
func auditStoreSummarize(t *testing.T, fx auditFixture) {
	s, tok := fx.s, fx.tok
	ctx := t.Context()
	era := time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC)
	rec := func(i int, ts time.Time, provider, model string, success bool, tokens int64, cost float64, latency int64) audit.Record {
		return audit.Record{RequestID: fmt.Sprintf("req-sum-%s-%d", tok, i), Timestamp: ts, KeyID: "key-sum-" + tok,
			Provider: provider, Model: model, Status: 200, Success: success, Tokens: tokens, Cost: cost,
			LatencyMS: latency, Entry: []byte(`{}`)}
	}
	recs := []audit.Record{
		rec(0, era.Add(-time.Second), "before", "before", true, 1000, 100, 9000), // before since
		rec(1, era, "p-zeta", "m-b", true, 10, 0.5, 100),
		rec(2, era.Add(time.Minute), "p-alpha", "m-a", true, 20, 0.25, 200),
		rec(3, era.Add(2*time.Minute), "p-zeta", "m-c", false, 0, 0, 300),
		rec(4, era.Add(3*time.Minute), "p-alpha", "m-a", true, 70, 1.125, 400),
	}
	if err := s.InsertLogs(ctx, recs); err != nil {
		t.Fatalf("InsertLogs: %v", err)
	}
	tests := []struct {
		name  string
		since time.Time
		want  audit.Summary
	}{
		{"from since", era, audit.Summary{
			TotalRequests: 4, Successes: 3, AvgLatencyMS: 250, TotalTokens: 100, TotalCost: 1.875,
			Providers: []string{"p-alpha", "p-zeta"}, Models: []string{"m-a", "m-b", "m-c"},
		}},
		{"later", era.Add(2 * time.Minute), audit.Summary{
			TotalRequests: 2, Successes: 1, AvgLatencyMS: 350, TotalTokens: 70, TotalCost: 1.125,
			Providers: []string{"p-alpha", "p-zeta"}, Models: []string{"m-a", "m-c"},
		}},
		{"nothing", era.Add(time.Hour), audit.Summary{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := s.SummarizeLogs(t.Context(), tt.since)
			if err != nil {
				t.Fatalf("SummarizeLogs: %v", err)
			}
			opts := cmp.Options{cmpopts.EquateEmpty(), cmpopts.EquateApprox(0, 1e-9)}
			if diff := cmp.Diff(tt.want, got, opts); diff != "" {
				t.Errorf("SummarizeLogs(%v) (-want +got):\n%s", tt.since, diff)
			}
		})
	}
}

// referenceQuery is QueryLogs over data in memory.
func referenceQuery(data []audit.Record, q audit.Query) ([]audit.Record, int64) {
	var out []audit.Record
	for _, r := range data {
		if (!q.Since.IsZero() && r.Timestamp.Before(q.Since)) ||
			(q.Provider != "" && r.Provider != q.Provider) ||
			(q.Model != "" && r.Model != q.Model) ||
			(q.KeyID != "" && r.KeyID != q.KeyID) {
			continue
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b audit.Record) int { return b.Timestamp.Compare(a.Timestamp) })
	total := int64(len(out))
	out = out[min(max(q.Offset, 0), len(out)):]
	if q.Limit > 0 && len(out) > q.Limit {
		out = out[:q.Limit]
	}
	return out, total
}

func closeTo(got, want float64) bool {
	return math.Abs(got-want) <= 1e-9*max(1, math.Abs(want))
}
