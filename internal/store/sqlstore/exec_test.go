package sqlstore

import "testing"

// TestRebind checks that ? placeholders become $n outside quoted strings and
// identifiers only.
func TestRebind(t *testing.T) {
	tests := []struct{ in, want string }{
		{`SELECT 1`, `SELECT 1`},
		{`SELECT a FROM t WHERE a = ? AND b = ?`, `SELECT a FROM t WHERE a = $1 AND b = $2`},
		{`INSERT INTO t VALUES (?, '?', "?", ?)`, `INSERT INTO t VALUES ($1, '?', "?", $2)`},
		{`SELECT 'it''s ?' || ?`, `SELECT 'it''s ?' || $1`},
	}
	for _, tt := range tests {
		if got := rebind(tt.in); got != tt.want {
			t.Errorf("rebind(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}
