package sso

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

// User is a user who signed in: their last identity and their roles.
type User struct {
	Identity
	Roles     []string
	FirstSeen time.Time
	LastSeen  time.Time
}

// Revocation kinds.
const (
	RevokeUser  = "user"  // every token of the user issued until RevokedAt
	RevokeToken = "token" // one token, by its jti
)

// Revocation refuses a user's tokens or one token until ExpiresAt.
type Revocation struct {
	Kind      string
	Subject   string // the username or the jti
	RevokedAt time.Time
	ExpiresAt time.Time
}

// Store keeps the configuration, the users and the revocations.
type Store interface {
	// Config is the stored configuration, or store.ErrNotFound.
	Config(ctx context.Context) (Config, error)
	// PutConfig stores c at c.Version: 1 creates it, n replaces version n-1
	// (store.ErrConflict when another update came first).
	PutConfig(ctx context.Context, c Config) error
	User(ctx context.Context, username string) (User, error)
	PutUser(ctx context.Context, u User) error
	Revoke(ctx context.Context, r Revocation) error
	// Revocations are those still in force at now.
	Revocations(ctx context.Context, now time.Time) ([]Revocation, error)
}

// SQLStore is the Store on SQL (migration 00015).
type SQLStore struct{ db *sqlstore.DB }

// NewSQLStore returns the Store over db.
func NewSQLStore(db *sqlstore.DB) *SQLStore { return &SQLStore{db: db} }

// Config implements Store.
func (s *SQLStore) Config(ctx context.Context) (Config, error) {
	var raw string
	var version, updated int64
	err := s.db.QueryRow(ctx, `SELECT config, version, updated_at FROM sso_config WHERE id = 1`).Scan(&raw, &version, &updated)
	if errors.Is(err, sql.ErrNoRows) {
		return Config{}, store.ErrNotFound
	}
	if err != nil {
		return Config{}, fmt.Errorf("sso: read the configuration: %w", err)
	}
	var c Config
	if err := json.Unmarshal([]byte(raw), &c); err != nil {
		return Config{}, fmt.Errorf("sso: decode the configuration: %w", err)
	}
	c.Version, c.UpdatedAt = version, sqlstore.FromMicros(updated)
	return c, nil
}

// PutConfig implements Store.
func (s *SQLStore) PutConfig(ctx context.Context, c Config) error {
	b, err := json.Marshal(c)
	if err != nil {
		return err
	}
	if c.Version == 1 {
		_, err := s.db.Exec(ctx, `INSERT INTO sso_config (id, config, version, updated_at) VALUES (1, ?, 1, ?)`,
			string(b), sqlstore.Micros(c.UpdatedAt))
		if sqlstore.IsUniqueViolation(err) {
			return store.ErrConflict
		}
		return err
	}
	res, err := s.db.Exec(ctx, `UPDATE sso_config SET config = ?, version = ?, updated_at = ? WHERE id = 1 AND version = ?`,
		string(b), c.Version, sqlstore.Micros(c.UpdatedAt), c.Version-1)
	if err != nil {
		return fmt.Errorf("sso: store the configuration: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return store.ErrConflict
	}
	return nil
}

// userRow is the identity column's JSON.
type userRow struct {
	Email       string   `json:"email,omitempty"`
	DisplayName string   `json:"display_name,omitempty"`
	Department  string   `json:"department,omitempty"`
	Groups      []string `json:"groups,omitempty"`
	Method      string   `json:"method"`
	Subject     string   `json:"subject,omitempty"`
}

// User implements Store.
func (s *SQLStore) User(ctx context.Context, username string) (User, error) {
	var ident, roles string
	var first, last int64
	err := s.db.QueryRow(ctx, `SELECT identity, roles, first_seen, last_seen FROM sso_users WHERE username = ?`, username).
		Scan(&ident, &roles, &first, &last)
	if errors.Is(err, sql.ErrNoRows) {
		return User{}, store.ErrNotFound
	}
	if err != nil {
		return User{}, fmt.Errorf("sso: read user: %w", err)
	}
	var row userRow
	u := User{FirstSeen: sqlstore.FromMicros(first), LastSeen: sqlstore.FromMicros(last)}
	if err := json.Unmarshal([]byte(ident), &row); err != nil {
		return User{}, fmt.Errorf("sso: decode user: %w", err)
	}
	if err := json.Unmarshal([]byte(roles), &u.Roles); err != nil {
		return User{}, fmt.Errorf("sso: decode user roles: %w", err)
	}
	u.Identity = Identity{Username: username, Email: row.Email, DisplayName: row.DisplayName, Department: row.Department,
		Groups: row.Groups, Method: row.Method, Subject: row.Subject}
	return u, nil
}

// PutUser implements Store: it creates the user or replaces its identity,
// roles and last sign-in (first_seen stays).
func (s *SQLStore) PutUser(ctx context.Context, u User) error {
	ident, err := json.Marshal(userRow{Email: u.Email, DisplayName: u.DisplayName, Department: u.Department, Groups: u.Groups, Method: u.Method, Subject: u.Subject})
	if err != nil {
		return err
	}
	roles, err := json.Marshal(u.Roles)
	if err != nil {
		return err
	}
	_, err = s.db.Exec(ctx, `INSERT INTO sso_users (username, identity, roles, first_seen, last_seen) VALUES (?, ?, ?, ?, ?)
		ON CONFLICT (username) DO UPDATE SET identity = excluded.identity, roles = excluded.roles, last_seen = excluded.last_seen`,
		u.Username, string(ident), string(roles), sqlstore.Micros(u.FirstSeen), sqlstore.Micros(u.LastSeen))
	if err != nil {
		return fmt.Errorf("sso: store user: %w", err)
	}
	return nil
}

// Revoke implements Store: a later revocation of the same subject
// replaces an earlier one. Revocations that expired (no token they could
// refuse is still valid) are deleted with it, so the table holds only
// live ones.
func (s *SQLStore) Revoke(ctx context.Context, r Revocation) error {
	_, err := s.db.Exec(ctx, `INSERT INTO sso_revocations (kind, subject, revoked_at, expires_at) VALUES (?, ?, ?, ?)
		ON CONFLICT (kind, subject) DO UPDATE SET revoked_at = excluded.revoked_at, expires_at = excluded.expires_at`,
		r.Kind, r.Subject, sqlstore.Micros(r.RevokedAt), sqlstore.Micros(r.ExpiresAt))
	if err != nil {
		return fmt.Errorf("sso: store revocation: %w", err)
	}
	// The revocation is stored: a failure to prune expired ones is not the
	// caller's (they are never read, and the next revocation prunes them).
	_, _ = s.db.Exec(ctx, `DELETE FROM sso_revocations WHERE expires_at <= ?`, sqlstore.Micros(r.RevokedAt))
	return nil
}

// Revocations implements Store.
func (s *SQLStore) Revocations(ctx context.Context, now time.Time) ([]Revocation, error) {
	rows, err := s.db.Query(ctx, `SELECT kind, subject, revoked_at, expires_at FROM sso_revocations WHERE expires_at > ?`, sqlstore.Micros(now))
	if err != nil {
		return nil, fmt.Errorf("sso: read revocations: %w", err)
	}
	defer rows.Close()
	var out []Revocation
	for rows.Next() {
		var r Revocation
		var at, exp int64
		if err := rows.Scan(&r.Kind, &r.Subject, &at, &exp); err != nil {
			return nil, fmt.Errorf("sso: read revocations: %w", err)
		}
		r.RevokedAt, r.ExpiresAt = sqlstore.FromMicros(at), sqlstore.FromMicros(exp)
		out = append(out, r)
	}
	return out, rows.Err()
}
