package keyvault

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// SQLStore is the Store on SQL (SQLite or PostgreSQL): the provider_keys
// table of sqlstore's migrations.
type SQLStore struct {
	db *sqlstore.DB
}

// NewSQLStore returns the Store over db.
func NewSQLStore(db *sqlstore.DB) *SQLStore { return &SQLStore{db: db} }

// PutProviderKey inserts or replaces the record for r.Provider.
func (s *SQLStore) PutProviderKey(ctx context.Context, r Record) error {
	if r.Provider == "" {
		return errors.New("keyvault: put provider key: provider is required")
	}
	sealed := r.Sealed
	if sealed == nil {
		sealed = []byte{}
	}
	_, err := s.db.Exec(ctx, `INSERT INTO provider_keys (provider, sealed, masked, updated_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (provider) DO UPDATE SET
			sealed = excluded.sealed, masked = excluded.masked, updated_at = excluded.updated_at`,
		r.Provider, sealed, r.Masked, sqlstore.Micros(r.UpdatedAt))
	if err != nil {
		return fmt.Errorf("keyvault: put provider key %q: %w", r.Provider, err)
	}
	return nil
}

// ProviderKey returns the record for provider, or store.ErrNotFound.
func (s *SQLStore) ProviderKey(ctx context.Context, provider string) (Record, error) {
	row := s.db.QueryRow(ctx, `SELECT provider, sealed, masked, updated_at
		FROM provider_keys WHERE provider = ?`, provider)
	r, err := scanProviderKey(row)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return Record{}, fmt.Errorf("keyvault: provider key %q: %w", provider, err)
	}
	return r, nil
}

// ListProviderKeys returns all records ordered by provider (byte order).
func (s *SQLStore) ListProviderKeys(ctx context.Context) ([]Record, error) {
	rows, err := s.db.Query(ctx, `SELECT provider, sealed, masked, updated_at
		FROM provider_keys ORDER BY provider`)
	if err != nil {
		return nil, fmt.Errorf("keyvault: list provider keys: %w", err)
	}
	defer rows.Close()
	recs := []Record{}
	for rows.Next() {
		r, err := scanProviderKey(rows)
		if err != nil {
			return nil, fmt.Errorf("keyvault: list provider keys: %w", err)
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("keyvault: list provider keys: %w", err)
	}
	return recs, nil
}

// DeleteProviderKey removes the record; store.ErrNotFound if absent.
func (s *SQLStore) DeleteProviderKey(ctx context.Context, provider string) error {
	res, err := s.db.Exec(ctx, `DELETE FROM provider_keys WHERE provider = ?`, provider)
	if err != nil {
		return fmt.Errorf("keyvault: delete provider key %q: %w", provider, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("keyvault: delete provider key %q: %w", provider, err)
	}
	if n == 0 {
		return fmt.Errorf("keyvault: delete provider key %q: %w", provider, store.ErrNotFound)
	}
	return nil
}

// scanProviderKey reads one row from a *sql.Row or *sql.Rows.
func scanProviderKey(row interface{ Scan(dest ...any) error }) (Record, error) {
	var (
		r       Record
		updated int64
	)
	if err := row.Scan(&r.Provider, &r.Sealed, &r.Masked, &updated); err != nil {
		return Record{}, err
	}
	if r.Sealed == nil {
		r.Sealed = []byte{}
	}
	r.UpdatedAt = sqlstore.FromMicros(updated)
	return r, nil
}

var _ Store = (*SQLStore)(nil)
