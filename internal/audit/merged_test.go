package audit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// hotList is a hot tier holding the given entries, all unacknowledged.
type hotList [][]byte

func (h hotList) StreamUnacked(_ context.Context, key, group string, limit int) ([]store.StreamEntry, error) {
	var out []store.StreamEntry
	for i := len(h) - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, store.StreamEntry{ID: fmt.Sprint(i), Value: h[i]})
	}
	return out, nil
}

func mergedEntry(t *testing.T, id string, ts time.Time, provider string, status int) []byte {
	t.Helper()
	x := &pipeline.Exchange{ID: id, Start: ts, End: ts.Add(20 * time.Millisecond), Endpoint: pipeline.Chat,
		Provider: provider, Model: "m-" + provider, Status: status, Cost: 0.01}
	js, err := json.Marshal(audit.FromExchange(x, 10*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func ids(t *testing.T, p audit.Page) []string {
	t.Helper()
	var out []string
	for _, d := range p.Data {
		var e struct {
			RequestID string `json:"request_id"`
		}
		if err := json.Unmarshal(d, &e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e.RequestID)
	}
	return out
}

// TestReaderMergesTiers checks the merged read: entries only in the hot
// tier are listed with the written ones, newest first, each once, under the
// same filters, paging by offset and by cursor, and counted in the summary.
func TestReaderMergesTiers(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		s := audit.NewSQLStore(db)
		base := time.Now().UTC().Add(-time.Hour).Truncate(time.Millisecond)
		var all [][]byte
		for i := range 10 {
			prov := "openai"
			if i%2 == 1 {
				prov = "anthropic"
			}
			status := 200
			if i == 7 {
				status = 429
			}
			all = append(all, mergedEntry(t, fmt.Sprintf("m-%02d", i), base.Add(time.Duration(i)*time.Second), prov, status))
		}
		// 0–5 written; 4–9 still in the hot tier (4 and 5 both).
		var recs []audit.Record
		for _, js := range all[:6] {
			r, err := audit.RecordFromJSON(js)
			if err != nil {
				t.Fatal(err)
			}
			recs = append(recs, r)
		}
		if _, err := s.Write(ctx, recs, nil); err != nil {
			t.Fatal(err)
		}
		r := &audit.Reader{Store: s, Hot: hotList(all[4:])}
		now := base.Add(time.Hour)
		query := func(params string) audit.Page {
			t.Helper()
			v, _ := url.ParseQuery(params)
			p, err := r.Query(ctx, v, now)
			if err != nil {
				t.Fatalf("Query(%s): %v", params, err)
			}
			return p
		}
		tests := []struct {
			params string
			want   []string
			total  int64
		}{
			{"", []string{"m-09", "m-08", "m-07", "m-06", "m-05", "m-04", "m-03", "m-02", "m-01", "m-00"}, 10},
			{"limit=3", []string{"m-09", "m-08", "m-07"}, 10},
			{"limit=3&offset=5", []string{"m-04", "m-03", "m-02"}, 10},
			{"provider=anthropic&limit=2", []string{"m-09", "m-07"}, 5},
			{"status=429", []string{"m-07"}, 1},
			{"status=error", []string{"m-07"}, 1},
			{"limit=3&before=m-08", []string{"m-07", "m-06", "m-05"}, 8},
			{"limit=3&before=m-05", []string{"m-04", "m-03", "m-02"}, 5},
			{"from=" + base.Add(3*time.Second).Format(time.RFC3339Nano) + "&to=" + base.Add(6*time.Second).Format(time.RFC3339Nano),
				[]string{"m-05", "m-04", "m-03"}, 3},
		}
		for _, tt := range tests {
			p := query(tt.params)
			if got := ids(t, p); !slices.Equal(got, tt.want) || p.Total != tt.total {
				t.Errorf("Query(%q) = %v (total %d), want %v (total %d)", tt.params, got, p.Total, tt.want, tt.total)
			}
		}
		sum, err := r.Summary(ctx, base.Add(-time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if sum.TotalRequests != 10 || sum.SuccessRate != 90 || !slices.Equal(sum.Providers, []string{"anthropic", "openai"}) {
			t.Errorf("Summary = %+v, want 10 requests, 90%% success, both providers", sum)
		}
		for _, bad := range []string{"status=7", "status=ok", "from=yesterday", "to=2020-01-01T00:00:00Z&from=2021-01-01T00:00:00Z",
			"from=2020-01-01T00:00:00Z&days=3", "before=", "before=nope", "limit=0", "offset=-1"} {
			v, _ := url.ParseQuery(bad)
			_, err := r.Query(ctx, v, now)
			if e := apierr.From(err); err == nil || e.Status() != 400 || e.Param == "" {
				t.Errorf("Query(%q): got %v, want 400 naming the parameter", bad, err)
			}
		}
	})
}
