package registry

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// SQLStore is the Store on SQL (SQLite or PostgreSQL): the mcp_servers
// table of sqlstore's migrations.
type SQLStore struct {
	db *sqlstore.DB
}

// NewSQLStore returns the Store over db.
func NewSQLStore(db *sqlstore.DB) *SQLStore { return &SQLStore{db: db} }

const columns = `id, config, sealed, version, created_at, updated_at`

// Put creates (r.Version 1) or replaces (r.Version n > 1, the row at n-1
// created at r.CreatedAt) the record of r.ID.
func (s *SQLStore) Put(ctx context.Context, r Record) error {
	if r.ID == "" || r.Version < 1 {
		return fmt.Errorf("registry: put server %q: id and a version from 1 are required", r.ID)
	}
	sealed := r.Sealed
	if sealed == nil {
		sealed = []byte{}
	}
	if r.Version == 1 {
		_, err := s.db.Exec(ctx, `INSERT INTO mcp_servers (`+columns+`) VALUES (?, ?, ?, ?, ?, ?)`,
			r.ID, string(r.Config), sealed, r.Version, sqlstore.Micros(r.CreatedAt), sqlstore.Micros(r.UpdatedAt))
		if sqlstore.IsUniqueViolation(err) {
			return fmt.Errorf("registry: create server %q: %w", r.ID, store.ErrConflict)
		}
		if err != nil {
			return fmt.Errorf("registry: create server %q: %w", r.ID, err)
		}
		return nil
	}
	res, err := s.db.Exec(ctx, `UPDATE mcp_servers SET config = ?, sealed = ?, version = ?, updated_at = ?
		WHERE id = ? AND version = ? AND created_at = ?`,
		string(r.Config), sealed, r.Version, sqlstore.Micros(r.UpdatedAt),
		r.ID, r.Version-1, sqlstore.Micros(r.CreatedAt))
	if err != nil {
		return fmt.Errorf("registry: update server %q: %w", r.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("registry: update server %q: %w", r.ID, err)
	}
	if n == 1 {
		return nil
	}
	if _, err := s.Get(ctx, r.ID); err != nil {
		return err // store.ErrNotFound, or the failure to tell
	}
	return fmt.Errorf("registry: update server %q: it changed since version %d: %w", r.ID, r.Version-1, store.ErrConflict)
}

// Get returns the record of id, or store.ErrNotFound.
func (s *SQLStore) Get(ctx context.Context, id string) (Record, error) {
	if !storableID(id) {
		return Record{}, fmt.Errorf("registry: server %q: %w", id, store.ErrNotFound)
	}
	r, err := scan(s.db.QueryRow(ctx, `SELECT `+columns+` FROM mcp_servers WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return Record{}, fmt.Errorf("registry: server %q: %w", id, err)
	}
	return r, nil
}

// List returns every record ordered by id.
func (s *SQLStore) List(ctx context.Context) ([]Record, error) {
	rows, err := s.db.Query(ctx, `SELECT `+columns+` FROM mcp_servers ORDER BY id`)
	if err != nil {
		return nil, fmt.Errorf("registry: list servers: %w", err)
	}
	defer rows.Close()
	recs := []Record{}
	for rows.Next() {
		r, err := scan(rows)
		if err != nil {
			return nil, fmt.Errorf("registry: list servers: %w", err)
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("registry: list servers: %w", err)
	}
	return recs, nil
}

// Delete removes the record of id; store.ErrNotFound if absent.
func (s *SQLStore) Delete(ctx context.Context, id string) error {
	if !storableID(id) {
		return fmt.Errorf("registry: delete server %q: %w", id, store.ErrNotFound)
	}
	res, err := s.db.Exec(ctx, `DELETE FROM mcp_servers WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("registry: delete server %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("registry: delete server %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("registry: delete server %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// scan reads one row from a *sql.Row or *sql.Rows.
func scan(row interface{ Scan(dest ...any) error }) (Record, error) {
	var (
		r                Record
		config           string
		created, updated int64
	)
	if err := row.Scan(&r.ID, &config, &r.Sealed, &r.Version, &created, &updated); err != nil {
		return Record{}, err
	}
	r.Config = []byte(config)
	if len(r.Sealed) == 0 {
		r.Sealed = nil
	}
	r.CreatedAt, r.UpdatedAt = sqlstore.FromMicros(created), sqlstore.FromMicros(updated)
	return r, nil
}

// storableID reports whether id can be a registration's id (mcpgw's
// Validate allows no other): anything else is not found without a query,
// so bytes PostgreSQL refuses never reach it.
func storableID(id string) bool {
	if id == "" || len(id) > mcpgw.MaxIDLen {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

var _ Store = (*SQLStore)(nil)
