package oauth

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// SQLStore is the Store on SQL (SQLite or PostgreSQL): the mcp_oauth_tokens
// table of sqlstore's migrations (00014).
type SQLStore struct {
	db *sqlstore.DB
}

// NewSQLStore returns the Store over db.
func NewSQLStore(db *sqlstore.DB) *SQLStore { return &SQLStore{db: db} }

const tokenColumns = `server_id, issuer, token_endpoint, resource, redirect_uri, client_id,
	client_secret, client_auth, registered, access_token, refresh_token, token_type, scopes,
	expires_at, obtained_at, authorized_at, authorized_by, version`

// Put inserts or replaces the record of r.ServerID.
func (s *SQLStore) Put(ctx context.Context, r Record) (int64, error) {
	if r.ServerID == "" {
		return 0, errors.New("oauth: put token: server id is required")
	}
	args := append(recordArgs(r), int64(1))
	row := s.db.QueryRow(ctx, `INSERT INTO mcp_oauth_tokens (`+tokenColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (server_id) DO UPDATE SET
			issuer = excluded.issuer, token_endpoint = excluded.token_endpoint,
			resource = excluded.resource, redirect_uri = excluded.redirect_uri,
			client_id = excluded.client_id, client_secret = excluded.client_secret,
			client_auth = excluded.client_auth, registered = excluded.registered,
			access_token = excluded.access_token, refresh_token = excluded.refresh_token,
			token_type = excluded.token_type, scopes = excluded.scopes,
			expires_at = excluded.expires_at, obtained_at = excluded.obtained_at,
			authorized_at = excluded.authorized_at, authorized_by = excluded.authorized_by,
			version = mcp_oauth_tokens.version + 1
		RETURNING version`, args...)
	var v int64
	if err := row.Scan(&v); err != nil {
		return 0, fmt.Errorf("oauth: put token of %q: %w", r.ServerID, err)
	}
	return v, nil
}

// Swap replaces the record if its version is still r.Version.
func (s *SQLStore) Swap(ctx context.Context, r Record) (int64, error) {
	args := recordArgs(r)[1:] // every column but server_id, in order
	args = append(args, r.ServerID, r.Version)
	row := s.db.QueryRow(ctx, `UPDATE mcp_oauth_tokens SET
			issuer = ?, token_endpoint = ?, resource = ?, redirect_uri = ?, client_id = ?,
			client_secret = ?, client_auth = ?, registered = ?, access_token = ?,
			refresh_token = ?, token_type = ?, scopes = ?, expires_at = ?, obtained_at = ?,
			authorized_at = ?, authorized_by = ?, version = version + 1
		WHERE server_id = ? AND version = ?
		RETURNING version`, args...)
	var v int64
	err := row.Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, fmt.Errorf("oauth: swap token of %q at version %d: %w", r.ServerID, r.Version, store.ErrConflict)
	}
	if err != nil {
		return 0, fmt.Errorf("oauth: swap token of %q: %w", r.ServerID, err)
	}
	return v, nil
}

// Record returns the record of serverID, or store.ErrNotFound.
func (s *SQLStore) Record(ctx context.Context, serverID string) (Record, error) {
	row := s.db.QueryRow(ctx, `SELECT `+tokenColumns+` FROM mcp_oauth_tokens WHERE server_id = ?`, serverID)
	r, err := scanRecord(row)
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return Record{}, fmt.Errorf("oauth: token of %q: %w", serverID, err)
	}
	return r, nil
}

// Records returns every record ordered by server id (byte order).
func (s *SQLStore) Records(ctx context.Context) ([]Record, error) {
	rows, err := s.db.Query(ctx, `SELECT `+tokenColumns+` FROM mcp_oauth_tokens ORDER BY server_id`)
	if err != nil {
		return nil, fmt.Errorf("oauth: list tokens: %w", err)
	}
	defer rows.Close()
	out := []Record{}
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, fmt.Errorf("oauth: list tokens: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("oauth: list tokens: %w", err)
	}
	return out, nil
}

// Delete removes the record of serverID; store.ErrNotFound if absent.
func (s *SQLStore) Delete(ctx context.Context, serverID string) error {
	res, err := s.db.Exec(ctx, `DELETE FROM mcp_oauth_tokens WHERE server_id = ?`, serverID)
	if err != nil {
		return fmt.Errorf("oauth: delete token of %q: %w", serverID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("oauth: delete token of %q: %w", serverID, err)
	}
	if n == 0 {
		return fmt.Errorf("oauth: delete token of %q: %w", serverID, store.ErrNotFound)
	}
	return nil
}

// recordArgs are r's columns in tokenColumns order, without version.
func recordArgs(r Record) []any {
	return []any{r.ServerID, r.Issuer, r.TokenEndpoint, r.Resource, r.RedirectURI, r.ClientID,
		nonNil(r.ClientSecret), r.ClientAuth, r.Registered, nonNil(r.AccessToken), nonNil(r.RefreshToken),
		r.TokenType, strings.Join(r.Scopes, " "), micros(r.ExpiresAt), micros(r.ObtainedAt),
		micros(r.AuthorizedAt), r.AuthorizedBy}
}

// scanRecord reads one row from a *sql.Row or *sql.Rows.
func scanRecord(row interface{ Scan(dest ...any) error }) (Record, error) {
	var (
		r                                  Record
		scopes                             string
		expires, obtained, authorized, ver int64
	)
	err := row.Scan(&r.ServerID, &r.Issuer, &r.TokenEndpoint, &r.Resource, &r.RedirectURI, &r.ClientID,
		&r.ClientSecret, &r.ClientAuth, &r.Registered, &r.AccessToken, &r.RefreshToken, &r.TokenType,
		&scopes, &expires, &obtained, &authorized, &r.AuthorizedBy, &ver)
	if err != nil {
		return Record{}, err
	}
	r.ClientSecret, r.AccessToken, r.RefreshToken = nonNil(r.ClientSecret), nonNil(r.AccessToken), nonNil(r.RefreshToken)
	r.Scopes = strings.Fields(scopes)
	r.ExpiresAt = fromMicros(expires)
	r.ObtainedAt = fromMicros(obtained)
	r.AuthorizedAt = fromMicros(authorized)
	r.Version = ver
	return r, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

// micros is t in Unix microseconds, 0 for the zero time.
func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return sqlstore.Micros(t)
}

// fromMicros is micros' inverse.
func fromMicros(us int64) time.Time {
	if us == 0 {
		return time.Time{}
	}
	return sqlstore.FromMicros(us)
}

var _ Store = (*SQLStore)(nil)
