package audit_test

import (
	"slices"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// A cursor (Query.Before) resumes the newest-first order exactly, entries
// sharing the cursor's timestamp included: those with a smaller request id
// come next, and the count is of the entries past the cursor.
func TestQueryLogsCursorTies(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		s := audit.NewSQLStore(db)
		ts := time.Now().UTC().Add(-time.Hour).Truncate(time.Microsecond)
		var recs []audit.Record
		add := func(id string, at time.Time) {
			recs = append(recs, audit.Record{RequestID: id, Timestamp: at, Provider: "openai", Status: 200, Success: true, Entry: []byte(`{}`)})
		}
		add("newer", ts.Add(time.Second))
		for _, id := range []string{"t-a", "t-b", "t-c", "t-d"} {
			add(id, ts)
		}
		add("older-1", ts.Add(-time.Second))
		add("older-2", ts.Add(-2*time.Second))
		if _, err := s.Write(ctx, recs, nil); err != nil {
			t.Fatal(err)
		}
		for _, tt := range []struct {
			before string
			limit  int
			want   []string
			total  int64
		}{
			{"t-c", 3, []string{"t-b", "t-a", "older-1"}, 4},
			{"t-a", 0, []string{"older-1", "older-2"}, 2},
			{"newer", 2, []string{"t-d", "t-c"}, 6},
			{"older-2", 0, nil, 0},
		} {
			at := ts
			switch tt.before {
			case "newer":
				at = ts.Add(time.Second)
			case "older-2":
				at = ts.Add(-2 * time.Second)
			}
			got, total, err := s.QueryLogs(ctx, audit.Query{Before: &audit.Cursor{Timestamp: at, RequestID: tt.before}, Limit: tt.limit})
			if err != nil {
				t.Fatal(err)
			}
			var gotIDs []string
			for _, r := range got {
				gotIDs = append(gotIDs, r.RequestID)
			}
			if !slices.Equal(gotIDs, tt.want) || total != tt.total {
				t.Errorf("before %s: got %v (total %d), want %v (total %d)", tt.before, gotIDs, total, tt.want, tt.total)
			}
		}
	})
}
