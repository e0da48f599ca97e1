package sqlstore_test

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSQLiteFileMode checks that a new SQLite database and its WAL and
// shared-memory files are readable by their owner only (they hold key hashes,
// sealed provider keys and the audit log), whatever the umask, and that Open
// leaves the mode of an existing file alone.
func TestSQLiteFileMode(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "svc.db")
	db := open(t, "sqlite://"+path)
	// A write makes SQLite create the -wal and -shm files.
	if _, err := db.Exec(t.Context(), `INSERT INTO provider_keys (provider, sealed, masked, updated_at) VALUES (?, ?, ?, ?)`,
		"p", []byte("s"), "m", 0); err != nil {
		t.Fatalf("insert: %v", err)
	}
	for _, name := range []string{"svc.db", "svc.db-wal", "svc.db-shm"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("stat %s: %v", name, err)
			continue
		}
		if got := fi.Mode().Perm(); got != 0o600 {
			t.Errorf("%s mode: got %v, want %v", name, got, os.FileMode(0o600))
		}
	}

	existing := filepath.Join(dir, "shared.db")
	if err := os.WriteFile(existing, nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(existing, 0o640); err != nil {
		t.Fatal(err)
	}
	open(t, existing)
	fi, err := os.Stat(existing)
	if err != nil {
		t.Fatal(err)
	}
	if got := fi.Mode().Perm(); got != 0o640 {
		t.Errorf("existing file's mode after Open: got %v, want %v (unchanged)", got, os.FileMode(0o640))
	}
}
