package route

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

// SQLConfigStore is the ConfigStore on SQL (SQLite or PostgreSQL): the one
// row of the routing_config table of sqlstore's migrations.
type SQLConfigStore struct {
	db *sqlstore.DB
}

// NewSQLConfigStore returns the ConfigStore over db.
func NewSQLConfigStore(db *sqlstore.DB) *SQLConfigStore { return &SQLConfigStore{db: db} }

// LoadRouting returns the routing configuration and its version; an empty
// configuration and version 0 when none was ever saved.
func (s *SQLConfigStore) LoadRouting(ctx context.Context) (Config, int64, error) {
	var (
		version int64
		raw     string
	)
	err := s.db.QueryRow(ctx, `SELECT version, config FROM routing_config WHERE id = 1`).Scan(&version, &raw)
	if errors.Is(err, sql.ErrNoRows) {
		return Config{}, 0, nil
	}
	if err != nil {
		return Config{}, 0, fmt.Errorf("route: load routing config: %w", err)
	}
	var c Config
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return Config{}, 0, fmt.Errorf("route: load routing config version %d: %w", version, err)
	}
	return c, version, nil
}

// SaveRouting stores c when the stored version is still expectVersion (0: no
// configuration saved yet) and returns the new version, expectVersion+1;
// store.ErrConflict when the version moved.
func (s *SQLConfigStore) SaveRouting(ctx context.Context, c Config, expectVersion int64) (int64, error) {
	if expectVersion < 0 {
		return 0, fmt.Errorf("route: save routing config: negative version %d", expectVersion)
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return 0, fmt.Errorf("route: save routing config: %w", err)
	}
	next := expectVersion + 1
	now := sqlstore.Micros(time.Now())
	if expectVersion == 0 {
		_, err := s.db.Exec(ctx, `INSERT INTO routing_config (id, version, config, updated_at) VALUES (1, ?, ?, ?)`,
			next, string(raw), now)
		if sqlstore.IsUniqueViolation(err) {
			return 0, fmt.Errorf("route: save routing config: version moved from 0: %w", store.ErrConflict)
		}
		if err != nil {
			return 0, fmt.Errorf("route: save routing config: %w", err)
		}
		return next, nil
	}
	res, err := s.db.Exec(ctx, `UPDATE routing_config SET version = ?, config = ?, updated_at = ? WHERE id = 1 AND version = ?`,
		next, string(raw), now, expectVersion)
	if err != nil {
		return 0, fmt.Errorf("route: save routing config: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("route: save routing config: %w", err)
	}
	if n == 0 {
		return 0, fmt.Errorf("route: save routing config: version moved from %d: %w", expectVersion, store.ErrConflict)
	}
	return next, nil
}

var _ ConfigStore = (*SQLConfigStore)(nil)
