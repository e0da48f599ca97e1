package compliance

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

func TestRecords(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.Date(2026, 11, 24, 12, 30, 0, 0, time.UTC)
		r := NewRecords(db, RecordsOptions{Now: func() time.Time { return now }})
		rec := ScanRecord{ScanID: "scan_1", Kind: "scan", UserID: "u1", OrgID: "acme", Policy: "hipaa", Caller: "admin:admin",
			At: now, RiskScore: 0.7, Level: High, Action: Flag, Types: []string{"ssn", "email"}, Features: []byte{1, 2, 3}}
		r.Add(rec)
		got, err := r.Get(ctx, "scan_1")
		if err != nil || got.OrgID != "acme" {
			t.Fatalf("Get before flush = %+v, %v", got, err)
		}
		if err := r.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		other := NewRecords(db, RecordsOptions{})
		got, err = other.Get(ctx, "scan_1")
		if err != nil {
			t.Fatal(err)
		}
		if got.Level != High || got.Action != Flag || len(got.Types) != 2 || string(got.Features) != "\x01\x02\x03" || !got.At.Equal(now) {
			t.Errorf("Get from SQL = %+v", got)
		}
		if _, err := other.Get(ctx, "scan_missing"); !errors.Is(err, ErrScanNotFound) {
			t.Errorf("Get(missing) err = %v, want ErrScanNotFound", err)
		}
		// The same record again (a retried flush) adds no row and no error.
		r.Add(rec)
		if err := r.Flush(ctx); err != nil {
			t.Fatalf("second flush: %v", err)
		}
		// Purge past the retention.
		if err := r.Purge(ctx, now.Add(31*24*time.Hour)); err != nil {
			t.Fatal(err)
		}
		if _, err := other.Get(ctx, "scan_1"); !errors.Is(err, ErrScanNotFound) {
			t.Errorf("after purge err = %v, want ErrScanNotFound", err)
		}
	})
}

func TestBaseline(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := context.Background()
		now := time.Date(2026, 11, 24, 12, 30, 0, 0, time.UTC)
		r := NewRecords(db, RecordsOptions{})
		// Seven days of 10 scans an hour, one SSN violation every other hour.
		start := now.Truncate(time.Hour).Add(-8 * 24 * time.Hour)
		i := 0
		for h := start; h.Before(now.Truncate(time.Hour).Add(-time.Hour)); h = h.Add(time.Hour) {
			for k := 0; k < 10; k++ {
				rec := ScanRecord{ScanID: "s" + strconv.Itoa(i), OrgID: "acme", At: h.Add(time.Duration(k) * time.Minute), Level: Low, Action: Allow}
				if k == 0 && h.Hour()%2 == 0 {
					rec.Types, rec.Level, rec.Action = []string{"ssn"}, High, Flag
				}
				r.Add(rec)
				i++
			}
		}
		// The last complete hour: 60 scans, 30 of them with an SSN.
		last := now.Truncate(time.Hour).Add(-time.Hour)
		for k := 0; k < 60; k++ {
			rec := ScanRecord{ScanID: "w" + strconv.Itoa(k), OrgID: "acme", At: last.Add(time.Duration(k) * time.Second), Level: Low}
			if k%2 == 0 {
				rec.Types, rec.Level, rec.Action = []string{"ssn"}, High, Flag
			}
			r.Add(rec)
		}
		r.Add(ScanRecord{ScanID: "other", OrgID: "globex", At: last})
		if err := r.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		b, err := r.Baseline(ctx, "acme", now, 1, 7)
		if err != nil {
			t.Fatal(err)
		}
		if !b.Sufficient || !b.DeviationFlagged {
			t.Fatalf("sufficient, flagged = %v, %v; want both", b.Sufficient, b.DeviationFlagged)
		}
		m := map[string]Measure{}
		for _, x := range b.Metrics {
			m[x.Metric] = x
		}
		if s := m["scans"]; s.BaselineMean != 10 || s.Current != 60 || !s.Deviation {
			t.Errorf("scans = %+v, want mean 10, current 60, deviation", s)
		}
		if s := m["type:ssn"]; s.BaselineMean != 0.5 || s.Current != 30 || !s.Deviation {
			t.Errorf("type:ssn = %+v", s)
		}
		if len(b.Hours) < 7*24 {
			t.Errorf("hours = %d, want the series", len(b.Hours))
		}
		// A quiet organisation has no history: nothing flagged.
		q, err := r.Baseline(ctx, "globex", now, 1, 7)
		if err != nil {
			t.Fatal(err)
		}
		if q.Sufficient || q.DeviationFlagged {
			t.Errorf("globex sufficient, flagged = %v, %v; want neither", q.Sufficient, q.DeviationFlagged)
		}
	})
}
