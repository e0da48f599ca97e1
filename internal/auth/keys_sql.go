package auth

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// SQLKeyStore is the KeyStore on SQL (SQLite or PostgreSQL): the
// virtual_keys table of sqlstore's migrations.
type SQLKeyStore struct {
	db *sqlstore.DB
}

// NewSQLKeyStore returns the KeyStore over db.
func NewSQLKeyStore(db *sqlstore.DB) *SQLKeyStore { return &SQLKeyStore{db: db} }

const virtualKeyColumns = `id, hash, masked_key, alias, budget_period, max_budget_usd,
	model_restrictions, rpm_limit, tpm_limit, policy_set, team_id, created_at, revoked_at`

// CreateVirtualKey inserts k; store.ErrConflict if its ID or hash exists.
// ModelRestrictions is stored as JSON and reads back as given (nil stays nil).
func (s *SQLKeyStore) CreateVirtualKey(ctx context.Context, k VirtualKey) error {
	if k.ID == "" || k.Hash == "" {
		return errors.New("auth: create virtual key: id and hash are required")
	}
	models, err := json.Marshal(k.ModelRestrictions)
	if err != nil {
		return fmt.Errorf("auth: create virtual key %q: model restrictions: %w", k.ID, err)
	}
	var revoked sql.NullInt64
	if k.RevokedAt != nil {
		revoked = sql.NullInt64{Int64: sqlstore.Micros(*k.RevokedAt), Valid: true}
	}
	_, err = s.db.Exec(ctx, `INSERT INTO virtual_keys (`+virtualKeyColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		k.ID, k.Hash, k.MaskedKey, k.Alias, k.BudgetPeriod, k.MaxBudgetUSD,
		string(models), k.RPMLimit, k.TPMLimit, k.PolicySet, k.TeamID, sqlstore.Micros(k.CreatedAt), revoked)
	if sqlstore.IsUniqueViolation(err) {
		return fmt.Errorf("auth: create virtual key %q: %w: %w", k.ID, store.ErrConflict, err)
	}
	if err != nil {
		return fmt.Errorf("auth: create virtual key %q: %w", k.ID, err)
	}
	return nil
}

// VirtualKeyByHash returns the key whose secret hashes to hash, revoked or
// not, or store.ErrNotFound.
func (s *SQLKeyStore) VirtualKeyByHash(ctx context.Context, hash string) (VirtualKey, error) {
	row := s.db.QueryRow(ctx, `SELECT `+virtualKeyColumns+` FROM virtual_keys WHERE hash = ?`, hash)
	k, err := scanVirtualKey(row)
	if err != nil {
		return VirtualKey{}, fmt.Errorf("auth: virtual key by hash: %w", err)
	}
	return k, nil
}

// VirtualKeyByID returns the key with id, or store.ErrNotFound.
func (s *SQLKeyStore) VirtualKeyByID(ctx context.Context, id string) (VirtualKey, error) {
	row := s.db.QueryRow(ctx, `SELECT `+virtualKeyColumns+` FROM virtual_keys WHERE id = ?`, id)
	k, err := scanVirtualKey(row)
	if err != nil {
		return VirtualKey{}, fmt.Errorf("auth: virtual key %q: %w", id, err)
	}
	return k, nil
}

// ListVirtualKeys returns every key, newest first (ties by descending ID).
func (s *SQLKeyStore) ListVirtualKeys(ctx context.Context) ([]VirtualKey, error) {
	rows, err := s.db.Query(ctx, `SELECT `+virtualKeyColumns+` FROM virtual_keys ORDER BY created_at DESC, id DESC`)
	if err != nil {
		return nil, fmt.Errorf("auth: list virtual keys: %w", err)
	}
	defer rows.Close()
	keys := []VirtualKey{}
	for rows.Next() {
		k, err := scanVirtualKey(rows)
		if err != nil {
			return nil, fmt.Errorf("auth: list virtual keys: %w", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("auth: list virtual keys: %w", err)
	}
	return keys, nil
}

// UpdateVirtualKey implements KeyStore.
func (s *SQLKeyStore) UpdateVirtualKey(ctx context.Context, k VirtualKey) error {
	models, err := json.Marshal(k.ModelRestrictions)
	if err != nil {
		return fmt.Errorf("auth: update virtual key %q: %w", k.ID, err)
	}
	res, err := s.db.Exec(ctx, `UPDATE virtual_keys SET alias = ?, budget_period = ?, max_budget_usd = ?, model_restrictions = ?,
		rpm_limit = ?, tpm_limit = ?, policy_set = ?, team_id = ? WHERE id = ?`,
		k.Alias, k.BudgetPeriod, k.MaxBudgetUSD, string(models), k.RPMLimit, k.TPMLimit, k.PolicySet, k.TeamID, k.ID)
	if err != nil {
		return fmt.Errorf("auth: update virtual key %q: %w", k.ID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("auth: update virtual key %q: %w", k.ID, err)
	}
	if n == 0 {
		return fmt.Errorf("auth: update virtual key %q: %w", k.ID, store.ErrNotFound)
	}
	return nil
}

// RevokeVirtualKey marks the key revoked at at, keeping an earlier revocation
// time if it is already revoked; store.ErrNotFound if there is no such key.
func (s *SQLKeyStore) RevokeVirtualKey(ctx context.Context, id string, at time.Time) error {
	res, err := s.db.Exec(ctx, `UPDATE virtual_keys SET revoked_at = COALESCE(revoked_at, ?) WHERE id = ?`,
		sqlstore.Micros(at), id)
	if err != nil {
		return fmt.Errorf("auth: revoke virtual key %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("auth: revoke virtual key %q: %w", id, err)
	}
	if n == 0 {
		return fmt.Errorf("auth: revoke virtual key %q: %w", id, store.ErrNotFound)
	}
	return nil
}

// scanVirtualKey reads one row of virtualKeyColumns from a *sql.Row or
// *sql.Rows; sql.ErrNoRows becomes store.ErrNotFound.
func scanVirtualKey(row interface{ Scan(dest ...any) error }) (VirtualKey, error) {
	var (
		k       VirtualKey
		models  string
		created int64
		revoked sql.NullInt64
	)
	err := row.Scan(&k.ID, &k.Hash, &k.MaskedKey, &k.Alias, &k.BudgetPeriod, &k.MaxBudgetUSD,
		&models, &k.RPMLimit, &k.TPMLimit, &k.PolicySet, &k.TeamID, &created, &revoked)
	if errors.Is(err, sql.ErrNoRows) {
		return VirtualKey{}, store.ErrNotFound
	}
	if err != nil {
		return VirtualKey{}, err
	}
	if err := json.Unmarshal([]byte(models), &k.ModelRestrictions); err != nil {
		return VirtualKey{}, fmt.Errorf("key %q: model restrictions: %w", k.ID, err)
	}
	k.CreatedAt = sqlstore.FromMicros(created)
	if revoked.Valid {
		t := sqlstore.FromMicros(revoked.Int64)
		k.RevokedAt = &t
	}
	return k, nil
}

var _ KeyStore = (*SQLKeyStore)(nil)
