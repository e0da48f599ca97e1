package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/store"
)

const virtualKeyColumns = `id, hash, masked_key, alias, budget_period, max_budget_usd,
	model_restrictions, rpm_limit, tpm_limit, policy_set, team_id, created_at, revoked_at`

// CreateVirtualKey inserts k; store.ErrConflict if its ID or hash exists.
// ModelRestrictions is stored as JSON and reads back as given (nil stays nil).
func (d *DB) CreateVirtualKey(ctx context.Context, k auth.VirtualKey) error {
	if k.ID == "" || k.Hash == "" {
		return errors.New("sqlstore: create virtual key: id and hash are required")
	}
	models, err := json.Marshal(k.ModelRestrictions)
	if err != nil {
		return fmt.Errorf("sqlstore: create virtual key %q: model restrictions: %w", k.ID, err)
	}
	var revoked sql.NullInt64
	if k.RevokedAt != nil {
		revoked = sql.NullInt64{Int64: micros(*k.RevokedAt), Valid: true}
	}
	_, err = d.db.ExecContext(ctx, d.q(`INSERT INTO virtual_keys (`+virtualKeyColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
		k.ID, k.Hash, k.MaskedKey, k.Alias, k.BudgetPeriod, k.MaxBudgetUSD,
		string(models), k.RPMLimit, k.TPMLimit, k.PolicySet, k.TeamID, micros(k.CreatedAt), revoked)
	if isUniqueViolation(err) {
		return fmt.Errorf("sqlstore: create virtual key %q: %w: %w", k.ID, store.ErrConflict, err)
	}
	if err != nil {
		return fmt.Errorf("sqlstore: create virtual key %q: %w", k.ID, err)
	}
	return nil
}

// VirtualKeyByHash returns the key whose secret hashes to hash, revoked or
// not, or store.ErrNotFound.
func (d *DB) VirtualKeyByHash(ctx context.Context, hash string) (auth.VirtualKey, error) {
	row := d.db.QueryRowContext(ctx, d.q(`SELECT `+virtualKeyColumns+` FROM virtual_keys WHERE hash = ?`), hash)
	k, err := scanVirtualKey(row)
	if err != nil {
		return auth.VirtualKey{}, fmt.Errorf("sqlstore: virtual key by hash: %w", err)
	}
	return k, nil
}

// VirtualKeyByID returns the key with id, or store.ErrNotFound.
func (d *DB) VirtualKeyByID(ctx context.Context, id string) (auth.VirtualKey, error) {
	row := d.db.QueryRowContext(ctx, d.q(`SELECT `+virtualKeyColumns+` FROM virtual_keys WHERE id = ?`), id)
	k, err := scanVirtualKey(row)
	if err != nil {
		return auth.VirtualKey{}, fmt.Errorf("sqlstore: virtual key %q: %w", id, err)
	}
	return k, nil
}

// ListVirtualKeys returns every key, newest first (ties by descending ID).
func (d *DB) ListVirtualKeys(ctx context.Context) ([]auth.VirtualKey, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT `+virtualKeyColumns+` FROM virtual_keys ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("sqlstore: list virtual keys: %w", err)
	}
	defer rows.Close()
	keys := []auth.VirtualKey{}
	for rows.Next() {
		k, err := scanVirtualKey(rows)
		if err != nil {
			return nil, fmt.Errorf("sqlstore: list virtual keys: %w", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: list virtual keys: %w", err)
	}
	return keys, nil
}

// RevokeVirtualKey marks the key revoked at at, keeping an earlier revocation
// time if it is already revoked; store.ErrNotFound if there is no such key.
func (d *DB) RevokeVirtualKey(ctx context.Context, id string, at time.Time) error {
	res, err := d.db.ExecContext(ctx, d.q(`UPDATE virtual_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`),
		micros(at), id)
	if err != nil {
		return fmt.Errorf("sqlstore: revoke virtual key %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("sqlstore: revoke virtual key %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("sqlstore: revoke virtual key %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// scanner is a *sql.Row or *sql.Rows.
type scanner interface {
	Scan(dest ...any) error
}

func scanVirtualKey(s scanner) (auth.VirtualKey, error) {
	var (
		k       auth.VirtualKey
		models  string
		created int64
		revoked sql.NullInt64
	)
	err := s.Scan(&k.ID, &k.Hash, &k.MaskedKey, &k.Alias, &k.BudgetPeriod, &k.MaxBudgetUSD,
		&models, &k.RPMLimit, &k.TPMLimit, &k.PolicySet, &k.TeamID, &created, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return auth.VirtualKey{}, store.ErrNotFound
	}
	if err != nil {
		return auth.VirtualKey{}, err
	}
	if err := json.Unmarshal([]byte(models), &k.ModelRestrictions); err != nil {
		return auth.VirtualKey{}, fmt.Errorf("key %q: model restrictions: %w", k.ID, err)
	}
	k.CreatedAt = fromMicros(created)
	if revoked.Valid {
		t := fromMicros(revoked.Int64)
		k.RevokedAt = &t
	}
	return k, nil
}

var _ auth.KeyStore = (*DB)(nil)
