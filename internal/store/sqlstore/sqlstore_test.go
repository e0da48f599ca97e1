package sqlstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/store"
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

func TestConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			t.Run("KeyStore", func(t *testing.T) {
				t.Parallel()
				storetest.ExerciseKeyStore(t, open(t, b.url(t)))
			})
			t.Run("ProviderKeyStore", func(t *testing.T) {
				t.Parallel()
				storetest.ExerciseProviderKeyStore(t, open(t, b.url(t)))
			})
			t.Run("LogStore", func(t *testing.T) {
				t.Parallel()
				storetest.ExerciseAuditStore(t, open(t, b.url(t)))
			})
		})
	}
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
			k := auth.VirtualKey{ID: "vk-1", Hash: "h-1", CreatedAt: time.Now().UTC().Truncate(time.Microsecond)}
			if err := db.CreateVirtualKey(t.Context(), k); err != nil {
				t.Fatalf("CreateVirtualKey: %v", err)
			}
			if err := db.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			again := open(t, url)
			if err := again.Ping(t.Context()); err != nil {
				t.Fatalf("Ping: %v", err)
			}
			if _, err := again.VirtualKeyByID(t.Context(), k.ID); err != nil {
				t.Errorf("VirtualKeyByID after reopening: got error %v, want the key", err)
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
// wait for the write lock instead of failing with SQLITE_BUSY.
func TestConcurrentWrites(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			db := open(t, b.url(t))
			ctx := t.Context()
			const workers, batches = 50, 4
			var wg sync.WaitGroup
			errs := make(chan error, workers)
			for w := range workers {
				wg.Go(func() {
					k := auth.VirtualKey{ID: fmt.Sprintf("vk-%d", w), Hash: fmt.Sprintf("h-%d", w), CreatedAt: time.Now()}
					if err := db.CreateVirtualKey(ctx, k); err != nil {
						errs <- err
						return
					}
					for i := range batches {
						recs := make([]audit.Record, 10)
						for j := range recs {
							recs[j] = audit.Record{RequestID: fmt.Sprintf("r-%d-%d-%d", w, i, j), Timestamp: time.Now(),
								KeyID: k.ID, Cost: 1, Entry: []byte(`{}`)}
						}
						if err := db.InsertLogs(ctx, recs); err != nil {
							errs <- err
							return
						}
						if _, err := db.SpendSince(ctx, k.ID, time.Time{}); err != nil {
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
			keys, err := db.ListVirtualKeys(ctx)
			if err != nil {
				t.Fatalf("ListVirtualKeys: %v", err)
			}
			if len(keys) != workers {
				t.Errorf("ListVirtualKeys: got %d keys, want %d", len(keys), workers)
			}
			_, total, err := db.QueryLogs(ctx, audit.Query{Limit: 1})
			if err != nil {
				t.Fatalf("QueryLogs: %v", err)
			}
			if want := int64(workers * batches * 10); total != want {
				t.Errorf("QueryLogs total: got %d, want %d", total, want)
			}
		})
	}
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
			if _, err := db.ProviderKey(ctx, "none"); !errors.Is(err, store.ErrNotFound) {
				t.Errorf("ProviderKey(none): got error %v, want store.ErrNotFound", err)
			}
		})
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
