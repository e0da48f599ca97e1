package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// backends returns a URL factory per dialect: SQLite in a temporary directory
// (always) and PostgreSQL in a schema of its own (when SVC_TEST_DATABASE_URL
// is set).
var backends = []struct {
	name    string
	dialect string
	url     func(t *testing.T) string
}{
	{"SQLite", sqlstore.DialectSQLite, func(t *testing.T) string {
		return "sqlite://" + filepath.Join(t.TempDir(), "svc.db")
	}},
	{"Postgres", sqlstore.DialectPostgres, func(t *testing.T) string { return storetest.PostgresURL(t) }},
}

func open(t *testing.T, url string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("Open(%q): %v", url, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// TestOpenTwice checks that migrations are applied once: a second Open of the
// same database finds them applied and keeps the data.
func TestOpenTwice(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			url := b.url(t)
			db := open(t, url)
			if got := db.Dialect(); got != b.dialect {
				t.Errorf("Dialect: got %q, want %q", got, b.dialect)
			}
			if _, err := db.Exec(t.Context(), `INSERT INTO provider_keys (provider, sealed, masked, updated_at) VALUES (?, ?, ?, ?)`,
				"p-1", []byte("s"), "m", sqlstore.Micros(time.Now())); err != nil {
				t.Fatalf("insert: %v", err)
			}
			if err := db.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			again := open(t, url)
			if err := again.Ping(t.Context()); err != nil {
				t.Fatalf("Ping: %v", err)
			}
			var masked string
			if err := again.QueryRow(t.Context(), `SELECT masked FROM provider_keys WHERE provider = ?`, "p-1").Scan(&masked); err != nil || masked != "m" {
				t.Errorf("the row after reopening: got %q, %v, want %q", masked, err, "m")
			}
		})
	}
}

// TestConcurrentOpen checks that processes starting together against one
// database do not race on the migrations.
func TestConcurrentOpen(t *testing.T) {
	for _, b := range backends {
		if b.dialect == sqlstore.DialectSQLite {
			continue // one process owns an SQLite file; config refuses sharing it
		}
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			url := b.url(t)
			var wg sync.WaitGroup
			errs := make(chan error, 4)
			for range 4 {
				wg.Go(func() {
					db, err := sqlstore.Open(t.Context(), url)
					if err != nil {
						errs <- err
						return
					}
					errs <- db.Close()
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				if err != nil {
					t.Errorf("concurrent Open: %v", err)
				}
			}
		})
	}
}

// TestConcurrentWrites checks that concurrent writers succeed: on SQLite they
// wait for the write lock instead of failing with SQLITE_BUSY, in single
// statements and in transactions alike.
func TestConcurrentWrites(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			db := open(t, b.url(t))
			ctx := t.Context()
			if _, err := db.Exec(ctx, `CREATE TABLE writes (id TEXT PRIMARY KEY, n BIGINT NOT NULL)`); err != nil {
				t.Fatalf("create table: %v", err)
			}
			const workers, batches = 50, 4
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for w := range workers {
				wg.Go(func() {
					if _, err := db.Exec(ctx, `INSERT INTO writes (id, n) VALUES (?, ?)`, fmt.Sprintf("w-%d", w), 1); err != nil {
						errs <- err
						return
					}
					for i := range batches {
						if err := insertBatch(ctx, db, fmt.Sprintf("w-%d-%d", w, i), 10); err != nil {
							errs <- err
							return
						}
						var n int64
						if err := db.QueryRow(ctx, `SELECT COALESCE(SUM(n), 0) FROM writes WHERE id LIKE ?`, fmt.Sprintf("w-%d-%%", w)).Scan(&n); err != nil {
							errs <- err
							return
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Errorf("concurrent write: %v", err)
			}
			var total int64
			if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM writes`).Scan(&total); err != nil {
				t.Fatalf("count: %v", err)
			}
			if want := int64(workers + workers*batches*10); total != want {
				t.Errorf("rows written: got %d, want %d", total, want)
			}
		})
	}
}

// insertBatch inserts n rows prefix-0… in one transaction.
func insertBatch(ctx context.Context, db *sqlstore.DB, prefix string, n int) error {
	tx, err := db.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	for i := range n {
		if _, err := tx.Exec(ctx, `INSERT INTO writes (id, n) VALUES (?, ?)`, fmt.Sprintf("%s-%d", prefix, i), 1); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func TestOpenURLs(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		url     string
		wantErr bool
	}{
		{"sqlite absolute", "sqlite://" + filepath.Join(dir, "abs.db"), false},
		{"bare path", filepath.Join(dir, "bare.db"), false},
		{"bare path with pragma", filepath.Join(dir, "p.db") + "?_pragma=busy_timeout(1000)", false},
		{"memory", ":memory:", false},
		{"empty", "", true},
		{"unknown scheme", "mysql://u@h/db", true},
		{"sqlite without path", "sqlite://", true},
		{"bad sqlite parameter", "sqlite://" + filepath.Join(dir, "x.db") + "?_txlock=sometimes", true},
		{"missing directory", filepath.Join(dir, "no", "such", "dir", "x.db"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
			defer cancel()
			db, err := sqlstore.Open(ctx, tt.url)
			if tt.wantErr {
				if err == nil {
					db.Close()
					t.Fatalf("Open(%q): got nil error, want an error", tt.url)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", tt.url, err)
			}
			defer db.Close()
			if got := db.Dialect(); got != sqlstore.DialectSQLite {
				t.Errorf("Dialect: got %q, want %q", got, sqlstore.DialectSQLite)
			}
			// The schema is there and usable.
			var n int
			if err := db.QueryRow(ctx, `SELECT COUNT(*) FROM provider_keys WHERE provider = ?`, "none").Scan(&n); err != nil || n != 0 {
				t.Errorf("count of provider_keys: got %d, %v, want 0", n, err)
			}
		})
	}
}

// TestSQLitePragmas: every connection gets svc's settings (here the page
// cache, 8 MiB), and a setting the URL gives wins.
func TestSQLitePragmas(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		query string
		want  int
	}{
		{"", -8192},
		{"?_pragma=cache_size(-1000)", -1000},
	} {
		db := open(t, "sqlite://"+filepath.Join(dir, "p.db")+tt.query)
		var got int
		if err := db.QueryRow(t.Context(), `PRAGMA cache_size`).Scan(&got); err != nil || got != tt.want {
			t.Errorf("URL query %q: cache_size %d, %v; want %d", tt.query, got, err, tt.want)
		}
	}
}

// TestSQLiteRelativeURL checks the sqlite://relative.db form, resolved against
// the working directory.
func TestSQLiteRelativeURL(t *testing.T) {
	t.Chdir(t.TempDir())
	db := open(t, "sqlite://rel.db")
	if err := db.Ping(t.Context()); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	if _, err := os.Stat("rel.db"); err != nil {
		t.Errorf("database file in the working directory: %v", err)
	}
}

// TestErrorClasses checks IsUniqueViolation and IsDataError against what
// each dialect answers.
func TestErrorClasses(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			db := open(t, b.url(t))
			ctx := t.Context()
			if _, err := db.Exec(ctx, `CREATE TABLE c (id TEXT PRIMARY KEY, n BIGINT NOT NULL CHECK (n >= 0))`); err != nil {
				t.Fatalf("create table: %v", err)
			}
			if _, err := db.Exec(ctx, `INSERT INTO c (id, n) VALUES (?, ?)`, "a", 1); err != nil {
				t.Fatalf("insert: %v", err)
			}
			_, dup := db.Exec(ctx, `INSERT INTO c (id, n) VALUES (?, ?)`, "a", 1)
			_, check := db.Exec(ctx, `INSERT INTO c (id, n) VALUES (?, ?)`, "b", -1)
			_, syntax := db.Exec(ctx, `INSERT INTO nowhere VALUES (?)`, 1)
			tests := []struct {
				name         string
				err          error
				unique, data bool
			}{
				{"duplicate key", dup, true, true},
				{"check constraint", check, false, true},
				{"missing table", syntax, false, false},
				{"nil", nil, false, false},
			}
			for _, tt := range tests {
				if got := sqlstore.IsUniqueViolation(tt.err); got != tt.unique {
					t.Errorf("%s: IsUniqueViolation(%v) = %v, want %v", tt.name, tt.err, got, tt.unique)
				}
				if got := sqlstore.IsDataError(tt.err); got != tt.data {
					t.Errorf("%s: IsDataError(%v) = %v, want %v", tt.name, tt.err, got, tt.data)
				}
			}
		})
	}
}

// TestPostgresPoolBound: a burst of queries waits for the pool's
// connections instead of opening one each (which took PostgreSQL past its
// connection limit once).
func TestPostgresPoolBound(t *testing.T) {
	db, err := sqlstore.OpenWith(t.Context(), storetest.PostgresURL(t), sqlstore.Options{MaxConns: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	var (
		g    errgroup.Group
		mu   sync.Mutex
		pids = map[int]bool{}
	)
	for range 12 {
		g.Go(func() error {
			var pid int
			if err := db.QueryRow(t.Context(), `SELECT pg_backend_pid() FROM pg_sleep(0.05)`).Scan(&pid); err != nil {
				return err
			}
			mu.Lock()
			pids[pid] = true
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(pids) > 3 {
		t.Errorf("12 concurrent queries used %d connections, want at most 3", len(pids))
	}
}
