package sqlstore_test

import (
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// TestPrepare checks that one prepared statement runs, with its own
// arguments each time, outside transactions and in several transactions
// (on whichever pooled connection each takes), on both dialects, and that a
// rolled-back transaction's runs leave nothing.
func TestPrepare(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			ctx := t.Context()
			db := open(t, b.url(t))
			st, err := db.Prepare(ctx, `INSERT INTO provider_keys (provider, sealed, masked, updated_at) VALUES (?, ?, ?, ?)`)
			if err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			defer st.Close()
			now := sqlstore.Micros(time.Now())
			if _, err := db.Exec(ctx, `INSERT INTO provider_keys (provider, sealed, masked, updated_at) VALUES (?, ?, ?, ?)`, "p-0", []byte("s"), "m0", now); err != nil {
				t.Fatalf("Exec: %v", err)
			}
			for i, commit := range []bool{true, false, true, true} {
				tx, err := db.Begin(ctx)
				if err != nil {
					t.Fatalf("Begin: %v", err)
				}
				name := "p-" + string(rune('1'+i))
				res, err := tx.ExecStmt(ctx, st, name, []byte("s"), "m"+name, now)
				if err != nil {
					t.Fatalf("ExecStmt %s: %v", name, err)
				}
				if n, err := res.RowsAffected(); err != nil || n != 1 {
					t.Fatalf("ExecStmt %s: %d rows, %v", name, n, err)
				}
				if commit {
					err = tx.Commit()
				} else {
					err = tx.Rollback()
				}
				if err != nil {
					t.Fatalf("end of transaction %d: %v", i, err)
				}
			}
			rows, err := db.Query(ctx, `SELECT provider, masked FROM provider_keys ORDER BY provider`)
			if err != nil {
				t.Fatalf("Query: %v", err)
			}
			defer rows.Close()
			var got []string
			for rows.Next() {
				var p, m string
				if err := rows.Scan(&p, &m); err != nil {
					t.Fatalf("Scan: %v", err)
				}
				got = append(got, p+"="+m)
			}
			want := []string{"p-0=m0", "p-1=mp-1", "p-3=mp-3", "p-4=mp-4"}
			if len(got) != len(want) {
				t.Fatalf("rows: got %v, want %v", got, want)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Fatalf("rows: got %v, want %v", got, want)
				}
			}
		})
	}
}
