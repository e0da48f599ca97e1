package access

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// Store keeps access requests; SQLStore is it on SQL. Unknown ids are
// store.ErrNotFound, refused transitions a *StateError, bad fields a
// *ValidationError.
type Store interface {
	Create(ctx context.Context, r Request) (Request, error)
	Get(ctx context.Context, id string) (Request, error)
	List(ctx context.Context, f Filter) ([]Request, error)
	Approve(ctx context.Context, id, by string) (Request, error)
	Deny(ctx context.Context, id, by, reason string) (Request, error)
	Revoke(ctx context.Context, id, by, reason string) (Request, error)
	GrantedTools(ctx context.Context, userID, serverID string) ([]string, error)
}

// Filter selects requests for List; empty fields select all.
type Filter struct {
	Status   Status
	ServerID string
	UserID   string // the requester, "<kind>:<id>"
	Limit    int    // 1–MaxList; 0 is DefaultList
}

// Sizes of a List.
const (
	DefaultList = 100
	MaxList     = 1000
)

// IDPrefix starts every request id.
const IDPrefix = "mcpreq_"

// SQLStore is the Store on SQL (SQLite or PostgreSQL): the table
// mcp_access_requests of sqlstore's migration 00013.
type SQLStore struct {
	db  *sqlstore.DB
	now func() time.Time
}

// NewSQLStore returns the store over db; now stamps the records (nil:
// time.Now).
func NewSQLStore(db *sqlstore.DB, now func() time.Time) *SQLStore {
	if now == nil {
		now = time.Now
	}
	return &SQLStore{db: db, now: now}
}

const columns = `id, server_id, user_id, justification, tools_requested, status,
	reason, decided_by, decided_at, revoked_by, revoked_at, created_at`

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand)
	return IDPrefix + hex.EncodeToString(b[:])
}

// Create validates r (server_id, user_id, justification, tools_requested;
// the rest is ignored), gives it an id and stores it pending. A requester
// with MaxPending pending requests is refused with ErrTooManyPending.
func (s *SQLStore) Create(ctx context.Context, r Request) (Request, error) {
	if err := r.normalize(); err != nil {
		return Request{}, err
	}
	var pending int
	err := s.db.QueryRow(ctx, `SELECT COUNT(*) FROM mcp_access_requests WHERE user_id = ? AND status = ?`,
		r.UserID, string(StatusPending)).Scan(&pending)
	if err != nil {
		return Request{}, fmt.Errorf("access: create: %w", err)
	}
	if pending >= MaxPending {
		return Request{}, ErrTooManyPending
	}
	tools, err := json.Marshal(r.ToolsRequested)
	if err != nil {
		return Request{}, fmt.Errorf("access: create: %w", err)
	}
	r = Request{ID: newID(), ServerID: r.ServerID, UserID: r.UserID, Justification: r.Justification,
		ToolsRequested: r.ToolsRequested, Status: StatusPending, CreatedAt: s.stamp()}
	_, err = s.db.Exec(ctx, `INSERT INTO mcp_access_requests (`+columns+`)
		VALUES (?, ?, ?, ?, ?, ?, '', '', 0, '', 0, ?)`,
		r.ID, r.ServerID, r.UserID, r.Justification, string(tools), string(r.Status), sqlstore.Micros(r.CreatedAt))
	if err != nil {
		return Request{}, fmt.Errorf("access: create: %w", err)
	}
	return r, nil
}

func (s *SQLStore) stamp() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// Get returns the request id, or store.ErrNotFound.
func (s *SQLStore) Get(ctx context.Context, id string) (Request, error) {
	if !lookable(id) {
		return Request{}, fmt.Errorf("access: request %q: %w", id, store.ErrNotFound)
	}
	r, err := scanRequest(s.db.QueryRow(ctx, `SELECT `+columns+` FROM mcp_access_requests WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		err = store.ErrNotFound
	}
	if err != nil {
		return Request{}, fmt.Errorf("access: request %q: %w", id, err)
	}
	return r, nil
}

// lookable reports whether id could be a stored id: anything else finds
// nothing (and never reaches PostgreSQL, which refuses invalid UTF-8).
func lookable(id string) bool {
	return id != "" && len(id) <= MaxIDLen && text("id", id, MaxIDLen) == nil
}

// List returns the requests f selects, newest first.
func (s *SQLStore) List(ctx context.Context, f Filter) ([]Request, error) {
	if f.Status != "" && !f.Status.Valid() {
		return nil, invalid("status", "must be pending, approved, denied or revoked")
	}
	limit := f.Limit
	switch {
	case limit == 0:
		limit = DefaultList
	case limit < 0 || limit > MaxList:
		return nil, invalid("limit", "must be between 1 and %d", MaxList)
	}
	var (
		where []string
		args  []any
	)
	for _, c := range []struct{ col, v string }{{"status", string(f.Status)}, {"server_id", f.ServerID}, {"user_id", f.UserID}} {
		if c.v == "" {
			continue
		}
		if text(c.col, c.v, MaxUserID) != nil {
			return []Request{}, nil // nothing stored can match
		}
		where = append(where, c.col+" = ?")
		args = append(args, c.v)
	}
	q := `SELECT ` + columns + ` FROM mcp_access_requests`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += fmt.Sprintf(` ORDER BY created_at DESC, id DESC LIMIT %d`, limit)
	rows, err := s.db.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("access: list: %w", err)
	}
	defer rows.Close()
	out := []Request{}
	for rows.Next() {
		r, err := scanRequest(rows)
		if err != nil {
			return nil, fmt.Errorf("access: list: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("access: list: %w", err)
	}
	return out, nil
}

// Approve grants a pending request's tools to its requester; by is the
// deciding admin ("<kind>:<id>").
func (s *SQLStore) Approve(ctx context.Context, id, by string) (Request, error) {
	return s.transition(ctx, id, by, StatusPending, StatusApproved, `decided_by = ?, decided_at = ?`)
}

// Deny refuses a pending request, recording reason.
func (s *SQLStore) Deny(ctx context.Context, id, by, reason string) (Request, error) {
	if err := checkReason(reason); err != nil {
		return Request{}, err
	}
	return s.transition(ctx, id, by, StatusPending, StatusDenied, `decided_by = ?, decided_at = ?, reason = ?`, reason)
}

// Revoke withdraws an approved request's grant, recording reason.
func (s *SQLStore) Revoke(ctx context.Context, id, by, reason string) (Request, error) {
	if err := checkReason(reason); err != nil {
		return Request{}, err
	}
	return s.transition(ctx, id, by, StatusApproved, StatusRevoked, `revoked_by = ?, revoked_at = ?, reason = ?`, reason)
}

// transition moves id from one status to another in one UPDATE guarded by
// the current status, so that of two racing decisions exactly one wins;
// the loser learns the winner's status (a *StateError). set assigns the
// actor and the time, then the extra values.
func (s *SQLStore) transition(ctx context.Context, id, by string, from, to Status, set string, extra ...any) (Request, error) {
	if by == "" {
		return Request{}, invalid("decided_by", "is required")
	}
	if err := text("decided_by", by, MaxUserID); err != nil {
		return Request{}, err
	}
	if !lookable(id) {
		return Request{}, fmt.Errorf("access: %s %q: %w", to, id, store.ErrNotFound)
	}
	args := append([]any{string(to), by, sqlstore.Micros(s.stamp())}, extra...)
	args = append(args, id, string(from))
	r, err := scanRequest(s.db.QueryRow(ctx, `UPDATE mcp_access_requests SET status = ?, `+set+`
		WHERE id = ? AND status = ? RETURNING `+columns, args...))
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return Request{}, fmt.Errorf("access: %s %q: %w", to, id, err)
	}
	cur, err := s.Get(ctx, id)
	if err != nil {
		return Request{}, err
	}
	return Request{}, &StateError{ID: id, Have: cur.Status, Want: from}
}

// GrantedTools is the union of the tools of userID's approved requests on
// serverID, sorted; empty when none.
func (s *SQLStore) GrantedTools(ctx context.Context, userID, serverID string) ([]string, error) {
	if text("user_id", userID, MaxUserID) != nil || text("server_id", serverID, MaxUserID) != nil {
		return []string{}, nil
	}
	rows, err := s.db.Query(ctx, `SELECT tools_requested FROM mcp_access_requests
		WHERE user_id = ? AND server_id = ? AND status = ?`, userID, serverID, string(StatusApproved))
	if err != nil {
		return nil, fmt.Errorf("access: granted tools: %w", err)
	}
	defer rows.Close()
	tools := []string{}
	for rows.Next() {
		var raw string
		if err := rows.Scan(&raw); err != nil {
			return nil, fmt.Errorf("access: granted tools: %w", err)
		}
		var l []string
		if err := json.Unmarshal([]byte(raw), &l); err != nil {
			return nil, fmt.Errorf("access: granted tools: %w", err)
		}
		tools = append(tools, l...)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("access: granted tools: %w", err)
	}
	slices.Sort(tools)
	return slices.Compact(tools), nil
}

// scanRequest reads one row from a *sql.Row or *sql.Rows.
func scanRequest(row interface{ Scan(dest ...any) error }) (Request, error) {
	var (
		r                         Request
		tools, status             string
		decided, revoked, created int64
	)
	err := row.Scan(&r.ID, &r.ServerID, &r.UserID, &r.Justification, &tools, &status,
		&r.Reason, &r.DecidedBy, &decided, &r.RevokedBy, &revoked, &created)
	if err != nil {
		return Request{}, err
	}
	if err := json.Unmarshal([]byte(tools), &r.ToolsRequested); err != nil {
		return Request{}, fmt.Errorf("tools_requested of %s: %w", r.ID, err)
	}
	r.Status = Status(status)
	r.CreatedAt = sqlstore.FromMicros(created)
	r.DecidedAt = optionalTime(decided)
	r.RevokedAt = optionalTime(revoked)
	return r, nil
}

func optionalTime(us int64) *time.Time {
	if us == 0 {
		return nil
	}
	t := sqlstore.FromMicros(us)
	return &t
}

var _ Store = (*SQLStore)(nil)
