package audit_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

func TestSQLStoreConformance(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		storetest.ExerciseAuditStore(t, audit.NewSQLStore(db))
	})
}

// refuseTrigger makes the database refuse, as a data error, an audit row
// whose model is "poison" or whose model or entry holds a non-ASCII
// character: what a database whose encoding is not UTF-8 does.
var refuseTrigger = map[string][]string{
	sqlstore.DialectSQLite: {`CREATE TRIGGER refuse_rows BEFORE INSERT ON audit_logs
		WHEN NEW.model = 'poison'
			OR NEW.model GLOB '*[^' || char(1) || '-' || char(127) || ']*'
			OR NEW.entry GLOB '*[^' || char(1) || '-' || char(127) || ']*'
		BEGIN SELECT RAISE(ABORT, 'refused by the test trigger'); END`},
	sqlstore.DialectPostgres: {`CREATE FUNCTION refuse_rows() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF NEW.model = 'poison' OR NEW.model ~ '[^\x01-\x7f]' OR NEW.entry ~ '[^\x01-\x7f]' THEN
				RAISE EXCEPTION 'refused by the test trigger' USING ERRCODE = '22021';
			END IF;
			RETURN NEW;
		END $$`,
		`CREATE TRIGGER refuse_rows BEFORE INSERT ON audit_logs FOR EACH ROW EXECUTE FUNCTION refuse_rows()`},
}

// TestInsertLogsRowByRow checks that a batch the database refuses for one
// row's data is written row by row: the refused row is stored escaped to
// ASCII, a row refused even so is left out, every other row is stored, and
// the *audit.DataError names both.
func TestInsertLogsRowByRow(t *testing.T) {
	for _, b := range storetest.SQLBackends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			url := b.URL(t)
			sdb := storetest.OpenSQL(t, url)
			db := audit.NewSQLStore(sdb)
			raw, err := sql.Open(map[string]string{sqlstore.DialectSQLite: "sqlite", sqlstore.DialectPostgres: "pgx"}[sdb.Dialect()],
				strings.TrimPrefix(url, "sqlite://"))
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			for _, stmt := range refuseTrigger[sdb.Dialect()] {
				if _, err := raw.ExecContext(t.Context(), stmt); err != nil {
					t.Fatalf("create the trigger: %v", err)
				}
			}

			day := time.Date(2025, 7, 1, 10, 0, 0, 0, time.UTC)
			recs := make([]audit.Record, 60)
			for i := range recs {
				recs[i] = audit.Record{RequestID: fmt.Sprintf("req-%02d", i), Timestamp: day.Add(time.Duration(i) * time.Second),
					KeyID: "vk", Provider: "openai", Model: "gpt-4o", Status: 200, Success: true, Tokens: 1, Cost: 0.5,
					Entry: []byte(fmt.Sprintf(`{"i":%d}`, i))}
			}
			recs[10].Model = "modèle-é"
			recs[10].Entry = []byte(`{"note":"café 🙂"}`)
			recs[11].Model = "poison"
			recs[12].Model = "bad\x00"

			err = db.InsertLogs(t.Context(), recs)
			var de *audit.DataError
			if !errors.As(err, &de) {
				t.Fatalf("InsertLogs: got error %v, want an *audit.DataError", err)
			}
			if diff := cmp.Diff(&audit.DataError{Escaped: []string{"req-10"}, Rejected: []string{"req-11"}}, de,
				cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Err" }, cmp.Ignore())); diff != "" {
				t.Errorf("InsertLogs error (-want +got):\n%s", diff)
			}
			if de.Err == nil {
				t.Error("DataError.Err: got nil, want the database's reason")
			}

			got, total, err := db.QueryLogs(t.Context(), audit.Query{KeyID: "vk"})
			if err != nil {
				t.Fatalf("QueryLogs: %v", err)
			}
			want := slices.Clone(recs)
			want[10].Model = `mod\u00e8le-\u00e9`
			want[10].Entry = []byte(`{"note":"caf\u00e9 \ud83d\ude42"}`)
			want[12].Model = `bad\x00`
			want = slices.Delete(want, 11, 12)
			slices.Reverse(want)
			if total != int64(len(want)) {
				t.Errorf("QueryLogs total: got %d, want %d", total, len(want))
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("QueryLogs (-want +got):\n%s", diff)
			}
		})
	}
}

// TestInsertLogsNotDataError checks that an error that does not come from
// the records is returned as such, for the caller to retry the batch.
func TestInsertLogsNotDataError(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, sdb *sqlstore.DB) {
		db := audit.NewSQLStore(sdb)
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		err := db.InsertLogs(ctx, []audit.Record{{RequestID: "r", Model: "bad\x00", Entry: []byte(`{}`)}})
		var de *audit.DataError
		if err == nil || errors.As(err, &de) {
			t.Errorf("InsertLogs with a cancelled context: got error %v, want an error that is not an *audit.DataError", err)
		}
	})
}

// TestInsertLogsNoRequestID checks that a record without a RequestID is
// refused alone.
func TestInsertLogsNoRequestID(t *testing.T) {
	db := audit.NewSQLStore(storetest.OpenSQL(t, storetest.SQLBackends[0].URL(t)))
	recs := []audit.Record{{RequestID: "a", KeyID: "k"}, {KeyID: "k"}, {RequestID: "b", KeyID: "k"}}
	err := db.InsertLogs(t.Context(), recs)
	var de *audit.DataError
	if !errors.As(err, &de) || !slices.Equal(de.Rejected, []string{""}) {
		t.Fatalf("InsertLogs: got error %v, want an *audit.DataError rejecting one record without id", err)
	}
	if _, total, err := db.QueryLogs(t.Context(), audit.Query{KeyID: "k"}); err != nil || total != 2 {
		t.Errorf("QueryLogs: got %d records (%v), want the 2 with an id", total, err)
	}
}

// TestWriteRedeliveredBatch checks a batch of several statements' worth
// of records, some stored already (a redelivery after a lost
// acknowledgement): only the new ones are written and handed to the hook,
// each once, and every record is stored once.
func TestWriteRedeliveredBatch(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		s := audit.NewSQLStore(db)
		ts := time.Date(2031, 2, 3, 4, 5, 6, 0, time.UTC)
		recs := make([]audit.Record, 1200)
		for i := range recs {
			recs[i] = audit.Record{RequestID: fmt.Sprintf("rd-%04d", i), Timestamp: ts.Add(time.Duration(i) * time.Millisecond),
				Provider: "openai", Status: 200, Success: true, Entry: []byte(`{}`)}
		}
		stored := append(slices.Clone(recs[:100]), recs[700:800]...)
		if n, err := s.Write(ctx, stored, nil); err != nil || n != len(stored) {
			t.Fatalf("first Write: %d new (%v), want %d", n, err, len(stored))
		}
		var seen []string
		then := func(_ context.Context, _ *sqlstore.Tx, recs []audit.Record) error {
			for _, r := range recs {
				seen = append(seen, r.RequestID)
			}
			return nil
		}
		n, err := s.Write(ctx, recs, then)
		if want := len(recs) - len(stored); err != nil || n != want {
			t.Fatalf("Write of the whole batch: %d new (%v), want %d", n, err, want)
		}
		var want []string
		for _, r := range append(slices.Clone(recs[100:700]), recs[800:]...) {
			want = append(want, r.RequestID)
		}
		if diff := cmp.Diff(want, seen); diff != "" {
			t.Errorf("the hook saw (-want +got):\n%s", diff)
		}
		var rows, distinct int
		if err := db.QueryRow(ctx, `SELECT COUNT(*), COUNT(DISTINCT request_id) FROM audit_logs WHERE request_id LIKE 'rd-%'`).
			Scan(&rows, &distinct); err != nil {
			t.Fatal(err)
		}
		if rows != len(recs) || distinct != len(recs) {
			t.Errorf("stored %d rows, %d distinct; want %d each", rows, distinct, len(recs))
		}
	})
}

// TestWriteBatchSizes checks batches of sizes that take every chunk size
// of SQLite's prepared INSERTs (1 … 256 rows) in various combinations,
// and sizes past one statement on PostgreSQL: each record is stored once,
// with its columns.
func TestWriteBatchSizes(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		ctx := t.Context()
		s := audit.NewSQLStore(db)
		ts := time.Date(2031, 3, 4, 5, 6, 7, 0, time.UTC)
		total := 0
		for _, size := range []int{1, 3, 7, 255, 257, 511, 513, 2} {
			recs := make([]audit.Record, size)
			for i := range recs {
				recs[i] = audit.Record{RequestID: fmt.Sprintf("bs-%d-%04d", size, i), Timestamp: ts.Add(time.Duration(total+i) * time.Millisecond),
					KeyID: "k", Provider: "openai", Model: fmt.Sprintf("m-%d", i), Status: 200 + i, Success: true,
					Tokens: int64(i), Entry: []byte(`{}`)}
			}
			if n, err := s.Write(ctx, recs, nil); err != nil || n != size {
				t.Fatalf("Write of %d: %d new (%v)", size, n, err)
			}
			total += size
			var rows, bad int
			if err := db.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN model = 'm-' || CAST(tokens AS TEXT) AND status = 200 + tokens THEN 0 ELSE 1 END), 0)
				FROM audit_logs WHERE request_id LIKE 'bs-%'`).Scan(&rows, &bad); err != nil {
				t.Fatal(err)
			}
			if rows != total || bad != 0 {
				t.Fatalf("after a batch of %d: %d rows (want %d), %d with columns out of place", size, rows, total, bad)
			}
		}
	})
}
