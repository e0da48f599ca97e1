package audit_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// TestMaintain checks the retention: on PostgreSQL, monthly partitions are
// created ahead, rows the default partition held for a month move into its
// partition, partitions past the retention are dropped whole; on SQLite,
// rows past the retention are deleted. Rows inside the retention stay.
func TestMaintain(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		s := audit.NewSQLStore(db)
		now := time.Date(2031, 6, 15, 12, 0, 0, 0, time.UTC)
		var recs []audit.Record
		for i, ts := range []time.Time{
			now.AddDate(0, -14, 0), // past a 400-day retention
			now.AddDate(0, -12, 0), // inside it
			now.AddDate(0, -1, 0),
			now,
		} {
			recs = append(recs, audit.Record{RequestID: fmt.Sprintf("ret-%d", i), Timestamp: ts, Entry: []byte(`{}`)})
		}
		// Before any partition exists, the rows land in the default one.
		if _, err := s.Write(ctx, recs, nil); err != nil {
			t.Fatal(err)
		}
		out, err := s.Maintain(ctx, now, 400*24*time.Hour)
		if err != nil {
			t.Fatalf("Maintain: %v", err)
		}
		got, total, err := s.QueryLogs(ctx, audit.Query{})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, r := range got {
			ids = append(ids, r.RequestID)
		}
		if want := []string{"ret-3", "ret-2", "ret-1"}; total != 3 || !slices.Equal(ids, want) {
			t.Errorf("after Maintain: got %v (total %d), want %v", ids, total, want)
		}
		if db.Dialect() != sqlstore.DialectPostgres {
			if out.Deleted != 1 {
				t.Errorf("Deleted = %d, want 1", out.Deleted)
			}
			return
		}
		if out.Analyzed != "audit_logs_p203106" {
			t.Errorf("Analyzed = %q, want the current month's partition", out.Analyzed)
		}
		// May 2030 (cutoff's month) … September 2031 (3 ahead).
		if len(out.Created) != 17 || out.Created[0] != "audit_logs_p203005" || out.Created[16] != "audit_logs_p203109" {
			t.Errorf("Created = %v", out.Created)
		}
		var inDefault int
		if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM audit_logs_default`).Scan(&inDefault); err != nil || inDefault != 0 {
			t.Errorf("default partition holds %d rows (%v), want 0", inDefault, err)
		}
		// A year later the oldest partitions are dropped whole, and the
		// write of a redelivered row is still skipped.
		later := now.AddDate(1, 0, 0)
		out, err = s.Maintain(ctx, later, 400*24*time.Hour)
		if err != nil {
			t.Fatalf("Maintain a year later: %v", err)
		}
		if !slices.Contains(out.Dropped, "audit_logs_p203005") || slices.Contains(out.Dropped, "audit_logs_p203106") {
			t.Errorf("Dropped = %v", out.Dropped)
		}
		if n, err := s.Write(ctx, recs[3:], nil); err != nil || n != 0 {
			t.Errorf("Write of a stored record: %d new (%v), want 0", n, err)
		}
	})
}

// TestWriteRunsThenOnNewRecordsOnly checks the hook the rollups use: it
// sees each record once, in the transaction that inserted it, and a failing
// hook rolls the batch back.
func TestWriteRunsThenOnNewRecordsOnly(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		s := audit.NewSQLStore(db)
		ts := time.Date(2031, 1, 2, 3, 4, 5, 0, time.UTC)
		rec := func(id string) audit.Record {
			return audit.Record{RequestID: id, Timestamp: ts, Entry: []byte(`{}`)}
		}
		var seen []string
		then := func(_ context.Context, _ *sqlstore.Tx, recs []audit.Record) error {
			for _, r := range recs {
				seen = append(seen, r.RequestID)
			}
			return nil
		}
		if n, err := s.Write(ctx, []audit.Record{rec("w-a"), rec("w-b"), rec("w-a")}, then); err != nil || n != 2 {
			t.Fatalf("Write: %d (%v), want 2", n, err)
		}
		if n, err := s.Write(ctx, []audit.Record{rec("w-b"), rec("w-c")}, then); err != nil || n != 1 {
			t.Fatalf("Write again: %d (%v), want 1", n, err)
		}
		if want := []string{"w-a", "w-b", "w-c"}; !slices.Equal(seen, want) {
			t.Errorf("then saw %v, want %v", seen, want)
		}
		boom := fmt.Errorf("boom")
		if _, err := s.Write(ctx, []audit.Record{rec("w-d")}, func(context.Context, *sqlstore.Tx, []audit.Record) error { return boom }); err == nil {
			t.Fatal("Write with a failing hook: no error")
		}
		if ids, err := s.StoredIDs(ctx, []string{"w-a", "w-d", "w-x"}); err != nil || !ids["w-a"] || ids["w-d"] || ids["w-x"] {
			t.Errorf("StoredIDs = %v (%v), want only w-a", ids, err)
		}
		c, err := s.Locate(ctx, "w-c")
		if err != nil || !c.Timestamp.Equal(ts) {
			t.Errorf("Locate = %+v (%v)", c, err)
		}
	})
}
