package auditchain

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// verifyPage is how many entries Verify reads at a time.
const verifyPage = 500

// SQLStore is the chain on SQL (SQLite or PostgreSQL): the audit_chain and
// audit_chain_head tables of sqlstore's migrations.
type SQLStore struct {
	db      *sqlstore.DB
	h       hasher
	metrics *Metrics
	now     func() time.Time
}

// NewSQLStore returns the chain over db.
func NewSQLStore(db *sqlstore.DB, o Options) *SQLStore {
	if o.Now == nil {
		o.Now = time.Now
	}
	key := append([]byte(nil), o.Key...)
	return &SQLStore{db: db, h: hasher{key: key}, metrics: o.Metrics, now: o.Now}
}

// Append adds ev as the next entry and returns it. Appends from every
// process sharing the database are serialised by the lock on the head row.
func (s *SQLStore) Append(ctx context.Context, ev Event) (Entry, error) {
	e, err := s.append(ctx, ev)
	if s.metrics != nil {
		if err != nil {
			s.metrics.Failures.Inc()
		} else {
			s.metrics.Appended.Inc()
		}
	}
	return e, err
}

func (s *SQLStore) append(ctx context.Context, ev Event) (Entry, error) {
	e, err := newEntry(ev, s.now())
	if err != nil {
		return Entry{}, err
	}
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return Entry{}, fmt.Errorf("auditchain: append: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // a no-op after Commit
	hd, err := s.lockHead(ctx, tx)
	if err != nil {
		return Entry{}, err
	}
	if len(s.h.key) == 0 && hd.keyedFrom > 0 {
		return Entry{}, ErrKeyRequired
	}
	e.Seq, e.PrevHash, e.Alg = hd.seq+1, hd.hash, s.h.alg()
	e.Hash, _ = s.h.sum(&e)
	if len(s.h.key) > 0 && hd.keyedFrom == 0 {
		hd.keyedFrom, hd.keyedMark = e.Seq, s.h.keyedMark(e.Seq)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO audit_chain (seq, event_type, actor, subject, details, created_at, prev_hash, hash, alg)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		e.Seq, e.EventType, e.Actor, e.Subject, string(e.Details), sqlstore.Micros(e.Timestamp), e.PrevHash, e.Hash, e.Alg); err != nil {
		return Entry{}, fmt.Errorf("auditchain: append seq %d: %w", e.Seq, err)
	}
	res, err := tx.Exec(ctx, `UPDATE audit_chain_head SET seq = ?, hash = ?, keyed_from = ?, keyed_mark = ? WHERE id = 1 AND seq = ?`,
		e.Seq, e.Hash, hd.keyedFrom, hd.keyedMark, hd.seq)
	if err != nil {
		return Entry{}, fmt.Errorf("auditchain: append seq %d: move head: %w", e.Seq, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return Entry{}, fmt.Errorf("auditchain: append seq %d: the head moved under the lock (%d rows, %v)", e.Seq, n, err)
	}
	if err := tx.Commit(); err != nil {
		return Entry{}, fmt.Errorf("auditchain: append seq %d: commit: %w", e.Seq, err)
	}
	return e, nil
}

// lockHead reads the head row and holds it until tx ends: PostgreSQL locks
// the row (FOR UPDATE); SQLite's transaction already holds the database's
// write lock (sqlstore begins them IMMEDIATE).
func (s *SQLStore) lockHead(ctx context.Context, tx *sqlstore.Tx) (head, error) {
	q := `SELECT seq, hash, keyed_from, keyed_mark FROM audit_chain_head WHERE id = 1`
	if s.db.Dialect() == sqlstore.DialectPostgres {
		q += ` FOR UPDATE`
	}
	var hd head
	if err := tx.QueryRow(ctx, q).Scan(&hd.seq, &hd.hash, &hd.keyedFrom, &hd.keyedMark); err != nil {
		return head{}, fmt.Errorf("auditchain: read head: %w", err)
	}
	return hd, nil
}

const entryColumns = `seq, event_type, actor, subject, details, created_at, prev_hash, hash, alg`

func scanEntry(rows *sql.Rows) (Entry, error) {
	var (
		e       Entry
		details string
		micros  int64
	)
	if err := rows.Scan(&e.Seq, &e.EventType, &e.Actor, &e.Subject, &details, &micros, &e.PrevHash, &e.Hash, &e.Alg); err != nil {
		return Entry{}, err
	}
	e.Details = json.RawMessage(details)
	e.Timestamp = sqlstore.FromMicros(micros)
	return e, nil
}

// List returns the entries f selects, newest first.
func (s *SQLStore) List(ctx context.Context, f Filter) ([]Entry, error) {
	limit := f.Limit
	if limit <= 0 {
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	var (
		where []string
		args  []any
	)
	if f.EventType != "" {
		where, args = append(where, "event_type = ?"), append(args, sqlstore.EscapeText(f.EventType))
	}
	if f.Actor != "" {
		where, args = append(where, "actor = ?"), append(args, sqlstore.EscapeText(f.Actor))
	}
	if f.Before > 0 {
		where, args = append(where, "seq < ?"), append(args, f.Before)
	}
	q := `SELECT ` + entryColumns + ` FROM audit_chain`
	if len(where) > 0 {
		q += ` WHERE ` + strings.Join(where, " AND ")
	}
	q += ` ORDER BY seq DESC LIMIT ?`
	rows, err := s.db.Query(ctx, q, append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("auditchain: list: %w", err)
	}
	defer rows.Close()
	out := []Entry{}
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, fmt.Errorf("auditchain: list: %w", err)
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("auditchain: list: %w", err)
	}
	return out, nil
}

// Verify walks the chain from seq 1 to the head, verifyPage entries at a
// time, and reports the first entry that does not hold. Entries appended
// while it runs are past the head it read and are left for the next run.
func (s *SQLStore) Verify(ctx context.Context) (Report, error) {
	var hd head
	if err := s.db.QueryRow(ctx, `SELECT seq, hash, keyed_from, keyed_mark FROM audit_chain_head WHERE id = 1`).
		Scan(&hd.seq, &hd.hash, &hd.keyedFrom, &hd.keyedMark); err != nil {
		return Report{}, fmt.Errorf("auditchain: verify: read head: %w", err)
	}
	v := newVerifier(s.h, hd)
	after := int64(0)
	for {
		n, last, ok, err := s.verifyPage(ctx, v, after, hd.seq)
		if err != nil {
			return Report{}, err
		}
		if !ok || n < verifyPage {
			break
		}
		after = last
	}
	// One statement, so the head and the largest seq are one snapshot.
	var headNow int64
	var beyond sql.NullInt64
	if err := s.db.QueryRow(ctx, `SELECT h.seq, (SELECT MAX(seq) FROM audit_chain) FROM audit_chain_head h WHERE h.id = 1`).
		Scan(&headNow, &beyond); err != nil {
		return Report{}, fmt.Errorf("auditchain: verify: read head: %w", err)
	}
	v.end(hd, headNow, beyond.Valid && beyond.Int64 > headNow)
	return v.report(hd), nil
}

// verifyPage checks the entries after seq after, up to upTo; n is how many
// it read, last the last seq, ok false once the chain is broken.
func (s *SQLStore) verifyPage(ctx context.Context, v *verifier, after, upTo int64) (n int, last int64, ok bool, err error) {
	rows, err := s.db.Query(ctx, `SELECT `+entryColumns+` FROM audit_chain WHERE seq > ? AND seq <= ? ORDER BY seq LIMIT ?`,
		after, upTo, verifyPage)
	if err != nil {
		return 0, 0, false, fmt.Errorf("auditchain: verify: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return n, last, false, fmt.Errorf("auditchain: verify: %w", err)
		}
		n, last = n+1, e.Seq
		if !v.check(&e) {
			return n, last, false, nil
		}
	}
	if err := rows.Err(); err != nil {
		return n, last, false, fmt.Errorf("auditchain: verify: %w", err)
	}
	return n, last, true, nil
}
