package sqlstore

import (
	"context"
	"database/sql"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// The statements of every store are written once, with ? placeholders, and
// run through these methods, which rebind them to $1, $2, … on PostgreSQL.

// Exec runs a statement that returns no rows.
func (d *DB) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return d.db.ExecContext(ctx, d.q(query), args...)
}

// Query runs a statement that returns rows.
func (d *DB) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return d.db.QueryContext(ctx, d.q(query), args...)
}

// QueryRow runs a statement that returns at most one row; its error, if
// any (sql.ErrNoRows when there is no row), comes from Scan.
func (d *DB) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return d.db.QueryRowContext(ctx, d.q(query), args...)
}

// Begin starts a transaction. On SQLite it takes the write lock at once
// (BEGIN IMMEDIATE), waiting for another writer up to the busy timeout.
func (d *DB) Begin(ctx context.Context) (*Tx, error) {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	return &Tx{tx: tx, d: d}, nil
}

// Stmt is a statement prepared once (DB.Prepare) and run many times in
// transactions (Tx.ExecStmt): the database parses it once per connection of
// the pool instead of at every run. Safe for concurrent use. A store that
// prepares its statements keeps them as long as its DB (DB.Close releases
// them); Close releases one earlier.
type Stmt struct {
	s *sql.Stmt
}

// Prepare prepares query, written with ? placeholders like Exec's.
func (d *DB) Prepare(ctx context.Context, query string) (*Stmt, error) {
	s, err := d.db.PrepareContext(ctx, d.q(query))
	if err != nil {
		return nil, err
	}
	return &Stmt{s: s}, nil
}

// Close releases the statement on every connection it was prepared on.
func (s *Stmt) Close() error { return s.s.Close() }

// Tx is a transaction begun by DB.Begin; its statements are rebound as DB's.
// End it with Commit or Rollback.
type Tx struct {
	tx *sql.Tx
	d  *DB
}

// Exec runs a statement that returns no rows within the transaction.
func (t *Tx) Exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, t.d.q(query), args...)
}

// ExecStmt runs the prepared statement s, of the same DB, within the
// transaction; it is prepared on the transaction's connection the first
// time that connection runs it, and reused after.
func (t *Tx) ExecStmt(ctx context.Context, s *Stmt, args ...any) (sql.Result, error) {
	return t.tx.StmtContext(ctx, s.s).ExecContext(ctx, args...)
}

// Query runs a statement that returns rows within the transaction.
func (t *Tx) Query(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, t.d.q(query), args...)
}

// QueryRow runs a statement that returns at most one row within the
// transaction.
func (t *Tx) QueryRow(ctx context.Context, query string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, t.d.q(query), args...)
}

// Commit commits the transaction.
func (t *Tx) Commit() error { return t.tx.Commit() }

// Rollback aborts the transaction; after Commit it is a no-op that returns
// sql.ErrTxDone.
func (t *Tx) Rollback() error { return t.tx.Rollback() }

// IsDataError reports whether err is the database refusing a row's data (a
// value it cannot hold, a constraint, a trigger), as opposed to the database
// or the connection failing: retrying the same row fails the same way.
func IsDataError(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		if len(pgErr.Code) != 5 {
			return false
		}
		switch pgErr.Code[:2] {
		case "22", // data exception: encoding, range, format
			"23", // integrity constraint
			"54", // program limit exceeded: e.g. an index row too large
			"P0": // raised by a PL/pgSQL function (a trigger)
			return true
		}
		return false
	}
	var liteErr *sqlite.Error
	if errors.As(err, &liteErr) {
		switch liteErr.Code() & 0xff { // the primary result code
		case sqlite3.SQLITE_CONSTRAINT, sqlite3.SQLITE_MISMATCH, sqlite3.SQLITE_TOOBIG:
			return true
		}
	}
	return false
}
