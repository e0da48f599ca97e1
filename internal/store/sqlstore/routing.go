package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/store"
)

// LoadRouting returns the routing configuration and its version; an empty
// configuration and version 0 when none was ever saved.
func (d *DB) LoadRouting(ctx context.Context) (route.Config, int64, error) {
	var (
		version int64
		raw     string
	)
	err := d.db.QueryRowContext(ctx, `SELECT version, config FROM routing_config WHERE id = 1`).Scan(&version, &raw)
	if errors.Is(err, sql.ErrNoRows) {
		return route.Config{}, 0, nil
	}
	if err != nil {
		return route.Config{}, 0, fmt.Errorf("sqlstore: load routing config: %w", err)
	}
	var c route.Config
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return route.Config{}, 0, fmt.Errorf("sqlstore: load routing config version %d: %w", version, err)
	}
	return c, version, nil
}

// SaveRouting stores c when the stored version is still expectVersion (0: no
// configuration saved yet) and returns the new version, expectVersion+1;
// store.ErrConflict when the version moved.
func (d *DB) SaveRouting(ctx context.Context, c route.Config, expectVersion int64) (int64, error) {
	if expectVersion < 0 {
		return 0, fmt.Errorf("sqlstore: save routing config: negative version %d", expectVersion)
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return 0, fmt.Errorf("sqlstore: save routing config: %w", err)
	}
	next := expectVersion + 1
	now := micros(time.Now())
	if expectVersion == 0 {
		_, err := d.db.ExecContext(ctx, d.q(`INSERT INTO routing_config (id, version, config, updated_at) VALUES (1, ?, ?, ?)`),
			next, string(raw), now)
		if isUniqueViolation(err) {
			return 0, fmt.Errorf("sqlstore: save routing config: version moved from 0: %w", store.ErrConflict)
		}
		if err != nil {
			return 0, fmt.Errorf("sqlstore: save routing config: %w", err)
		}
		return next, nil
	}
	res, err := d.db.ExecContext(ctx, d.q(`UPDATE routing_config SET version = ?, config = ?, updated_at = ? WHERE id = 1 AND version = ?`),
		next, string(raw), now, expectVersion)
	if err != nil {
		return 0, fmt.Errorf("sqlstore: save routing config: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("sqlstore: save routing config: %w", err)
	}
	if n == 0 {
		return 0, fmt.Errorf("sqlstore: save routing config: version moved from %d: %w", expectVersion, store.ErrConflict)
	}
	return next, nil
}

var _ route.ConfigStore = (*DB)(nil)
