package storetest

import (
	"path/filepath"
	"testing"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// SQLBackend is a database a SQL store is tested on.
type SQLBackend struct {
	Name string
	// URL returns the URL of a new, empty database for t, removed when t
	// ends; it skips t when the backend is not configured.
	URL func(t *testing.T) string
}

// SQLBackends are SQLite, in a temporary directory (always), and
// PostgreSQL, in a schema of its own (when SVC_TEST_DATABASE_URL is set).
var SQLBackends = []SQLBackend{
	{"SQLite", func(t *testing.T) string { return "sqlite://" + filepath.Join(t.TempDir(), "svc.db") }},
	{"Postgres", func(t *testing.T) string { return PostgresURL(t) }},
}

// OpenSQL opens the database at url with sqlstore.Open (migrations
// applied) and closes it when t ends.
func OpenSQL(t testing.TB, url string) *sqlstore.DB {
	t.Helper()
	db, err := sqlstore.Open(t.Context(), url)
	if err != nil {
		t.Fatalf("sqlstore.Open(%q): %v", url, err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return db
}

// EachSQL runs f, in a parallel subtest per SQLBackend, on a new database
// of that backend: how a domain runs its SQL store's conformance suite on
// both dialects.
func EachSQL(t *testing.T, f func(t *testing.T, db *sqlstore.DB)) {
	t.Helper()
	for _, b := range SQLBackends {
		t.Run(b.Name, func(t *testing.T) {
			t.Parallel()
			f(t, OpenSQL(t, b.URL(t)))
		})
	}
}
