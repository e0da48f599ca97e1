package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/svc-gateway/svc/internal/keyvault"
	"github.com/svc-gateway/svc/internal/store"
)

// PutProviderKey inserts or replaces the record for r.Provider.
func (d *DB) PutProviderKey(ctx context.Context, r keyvault.Record) error {
	if r.Provider == "" {
		return errors.New("sqlstore: put provider key: provider is required")
	}
	sealed := r.Sealed
	if sealed == nil {
		sealed = []byte{}
	}
	_, err := d.db.ExecContext(ctx, d.q(`INSERT INTO provider_keys (provider, sealed, masked, updated_at)
		VALUES (?, ?, ?, ?)
		ON CONFLICT (provider) DO UPDATE SET
			sealed = excluded.sealed, masked = excluded.masked, updated_at = excluded.updated_at`),
		r.Provider, sealed, r.Masked, micros(r.UpdatedAt))
	if err != nil {
		return fmt.Errorf("sqlstore: put provider key %q: %w", r.Provider, err)
	}
	return nil
}

// ProviderKey returns the record for provider, or store.ErrNotFound.
func (d *DB) ProviderKey(ctx context.Context, provider string) (keyvault.Record, error) {
	row := d.db.QueryRowContext(ctx, d.q(`SELECT provider, sealed, masked, updated_at
		FROM provider_keys WHERE provider = ?`), provider)
	r, err := scanProviderKey(row)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return keyvault.Record{}, fmt.Errorf("sqlstore: provider key %q: %w", provider, err)
	}
	return r, nil
}

// ListProviderKeys returns all records ordered by provider (byte order).
func (d *DB) ListProviderKeys(ctx context.Context) ([]keyvault.Record, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT provider, sealed, masked, updated_at
		FROM provider_keys ORDER BY provider`)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list provider keys: %w", err)
	}
	defer rows.Close()
	recs := []keyvault.Record{}
	for rows.Next() {
		r, err := scanProviderKey(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: list provider keys: %w", err)
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: list provider keys: %w", err)
	}
	return recs, nil
}

// DeleteProviderKey removes the record; store.ErrNotFound if absent.
func (d *DB) DeleteProviderKey(ctx context.Context, provider string) error {
	res, err := d.db.ExecContext(ctx, d.q(`DELETE FROM provider_keys WHERE provider = ?`), provider)
	if err != nil {
		return fmt.Errorf("sqlstore: delete provider key %q: %w", provider, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlstore: delete provider key %q: %w", provider, err)
	}
	if n == 0 {
		return fmt.Errorf("sqlstore: delete provider key %q: %w", provider, store.ErrNotFound)
	}
	return nil
}

func scanProviderKey(s scanner) (keyvault.Record, error) {
	var (
		r       keyvault.Record
		updated int64
	)
	if err := s.Scan(&r.Provider, &r.Sealed, &r.Masked, &updated); err != nil {
		return keyvault.Record{}, err
	}
	if r.Sealed == nil {
		r.Sealed = []byte{}
	}
	r.UpdatedAt = fromMicros(updated)
	return r, nil
}

var _ keyvault.Store = (*DB)(nil)
