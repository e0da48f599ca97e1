package responses

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

// SQLStore is the Store on SQL (SQLite or PostgreSQL): the responses table
// of sqlstore's migrations.
type SQLStore struct {
	db *sqlstore.DB
}

// NewSQLStore returns the Store over db.
func NewSQLStore(db *sqlstore.DB) *SQLStore { return &SQLStore{db: db} }

// Save inserts r; saving an id again replaces it.
func (s *SQLStore) Save(ctx context.Context, r *Record) error {
	if r.ID == "" || r.Owner == "" || r.Response == nil {
		return errors.New("responses: save: id, owner and response are required")
	}
	input, err := json.Marshal(r.Input)
	if err != nil {
		return fmt.Errorf("responses: save %q: %w", r.ID, err)
	}
	resp, err := json.Marshal(r.Response)
	if err != nil {
		return fmt.Errorf("responses: save %q: %w", r.ID, err)
	}
	_, err = s.db.Exec(ctx, `INSERT INTO responses (id, owner, provider, native, previous, input, response, created_at, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, provider = excluded.provider, native = excluded.native,
			previous = excluded.previous, input = excluded.input, response = excluded.response,
			created_at = excluded.created_at, expires_at = excluded.expires_at`,
		r.ID, r.Owner, r.Provider, r.Native, r.Previous, input, resp, sqlstore.Micros(r.Created), sqlstore.Micros(r.Expires))
	if err != nil {
		return fmt.Errorf("responses: save %q: %w", r.ID, err)
	}
	return nil
}

// Load returns owner's record id if it has not expired at now.
func (s *SQLStore) Load(ctx context.Context, owner, id string, now time.Time) (*Record, error) {
	row := s.db.QueryRow(ctx, `SELECT id, owner, provider, native, previous, input, response, created_at, expires_at
		FROM responses WHERE id = ? AND owner = ? AND expires_at > ?`, id, owner, sqlstore.Micros(now))
	var (
		r                Record
		input, resp      []byte
		created, expires int64
	)
	err := row.Scan(&r.ID, &r.Owner, &r.Provider, &r.Native, &r.Previous, &input, &resp, &created, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, store.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("responses: load %q: %w", id, err)
	}
	if err := json.Unmarshal(input, &r.Input); err != nil {
		return nil, fmt.Errorf("responses: load %q: input: %w", id, err)
	}
	if err := json.Unmarshal(resp, &r.Response); err != nil {
		return nil, fmt.Errorf("responses: load %q: response: %w", id, err)
	}
	r.Created, r.Expires = sqlstore.FromMicros(created), sqlstore.FromMicros(expires)
	return &r, nil
}

// Delete removes owner's record id; store.ErrNotFound when there is none.
func (s *SQLStore) Delete(ctx context.Context, owner, id string) error {
	res, err := s.db.Exec(ctx, `DELETE FROM responses WHERE id = ? AND owner = ?`, id, owner)
	if err != nil {
		return fmt.Errorf("responses: delete %q: %w", id, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("responses: delete %q: %w", id, err)
	}
	if n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Purge removes the records that expired before now.
func (s *SQLStore) Purge(ctx context.Context, now time.Time) (int64, error) {
	res, err := s.db.Exec(ctx, `DELETE FROM responses WHERE expires_at <= ?`, sqlstore.Micros(now))
	if err != nil {
		return 0, fmt.Errorf("responses: purge: %w", err)
	}
	return res.RowsAffected()
}

var _ Store = (*SQLStore)(nil)
