package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/bits"
	"strings"
	"sync"
	"unsafe"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// SQLStore is the Store on SQL (SQLite or PostgreSQL): the audit_logs table
// of sqlstore's migrations.
type SQLStore struct {
	db *sqlstore.DB

	// inserts are the prepared INSERTs of SQLite, of 1, 2, 4, …,
	// logChunkRows rows (index: log2 of the rows), made when first needed.
	mu      sync.Mutex
	inserts insertStmts
}

// insertStmts are prepared INSERTs by log2 of their rows.
type insertStmts [logChunkBits + 1]*sqlstore.Stmt

// NewSQLStore returns the Store over db.
func NewSQLStore(db *sqlstore.DB) *SQLStore { return &SQLStore{db: db} }

// logBatchRows is how many records one multi-row INSERT carries: 13 columns
// each keeps a statement well under SQLite's and PostgreSQL's parameter caps.
const logBatchRows = 500

// logChunkRows is the most records one prepared INSERT carries on SQLite.
// A batch is written as INSERTs of power-of-two sizes (300 records: 256,
// 32, 8 and 4), each statement prepared once and reused by every batch:
// parsing a multi-row INSERT anew cost about 3 µs per record, a third of
// the insert (docs/benchmarks.md, issue 12).
const (
	logChunkBits = 8
	logChunkRows = 1 << logChunkBits
)

// logColumns are the columns of audit_logs, in the order appendLogArgs and
// scanRecord use.
const logColumns = `request_id, ts, key_id, provider, model, status, success, tokens, cost, latency_ms, entry, user_id, conversation_id`

const nLogColumns = 13

// logPlaceholders is one row of a multi-row INSERT on PostgreSQL; the
// casts let it type a VALUES list that is selected from (insertLogsQuery).
const logPlaceholders = `(?, CAST(? AS BIGINT), ?, ?, ?, CAST(? AS INTEGER), CAST(? AS BOOLEAN), CAST(? AS BIGINT), ` +
	`CAST(? AS DOUBLE PRECISION), CAST(? AS BIGINT), ?, ?, ?)`

// logPlaceholdersSQLite is one row on SQLite, which binds the values as
// they are: without the casts SQLite parses (each batch's statement is
// prepared anew) and runs the INSERT faster, about 3 µs less per row.
const logPlaceholdersSQLite = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// Inserted is called by Write inside the transaction that inserted
// records, with the records stored for the first time (never one that was
// already there), so that what it adds (analytics rollups) counts each
// entry once. An error rolls the transaction back.
type Inserted func(ctx context.Context, tx *sqlstore.Tx, recs []Record) error

// InsertLogs writes recs, as multi-row INSERTs of up to logBatchRows records
// in one transaction. A record whose RequestID is already stored (or repeated
// in recs) is skipped.
//
// Text is stored as escapeRecord makes it (sqlstore.EscapeText for the
// columns, sqlstore.EscapeJSON for the entry), so a NUL byte or invalid UTF-8
// (which PostgreSQL's text refuses) never fails a write. When the batch is
// refused all the same, for a reason that lies in some record's data, the
// records are written one by one: a record refused alone is written again
// with every text field escaped to ASCII (asciiRecord), and one refused even
// so is left out. Such records, and any without a
// RequestID, are named by the *DataError returned once every other
// record is stored. Any other error leaves the call safe to retry.
func (s *SQLStore) InsertLogs(ctx context.Context, recs []Record) error {
	_, err := s.Write(ctx, recs, nil)
	return err
}

// Write is InsertLogs that also runs then (when not nil) in each
// transaction that inserts records, with the records it inserted, and
// returns how many records were new. The bridge writes its batches with
// it, the rollups in the same transaction.
func (s *SQLStore) Write(ctx context.Context, recs []Record, then Inserted) (int, error) {
	if len(recs) == 0 {
		return 0, nil
	}
	var refused *DataError
	rows := make([]Record, 0, len(recs))
	seen := make(map[string]bool, len(recs))
	for i, r := range recs {
		if r.RequestID == "" {
			refused = rejectLog(refused, "", fmt.Errorf("audit: insert logs: record %d has no request id", i))
			continue
		}
		if seen[r.RequestID] {
			continue // the first of a batch's copies wins, as against the table
		}
		seen[r.RequestID] = true
		rows = append(rows, escapeRecord(r))
	}
	n, err := s.insertLogBatch(ctx, rows, then)
	if err != nil {
		if ctx.Err() != nil || !sqlstore.IsDataError(err) {
			return 0, err
		}
		if n, refused, err = s.insertLogRows(ctx, rows, refused, then); err != nil {
			return 0, err
		}
	}
	if refused != nil {
		return n, refused
	}
	return n, nil
}

// errSomeStored reports that a batch inserted without RETURNING found some
// of its records stored already: insertLogBatch writes it again with
// RETURNING, to learn which.
var errSomeStored = errors.New("audit: some records of the batch are stored already")

// insertLogBatch writes rows in one transaction, with then, and returns how
// many were new. On SQLite it first inserts without RETURNING (about 2 µs
// less per record) and counts the rows inserted: all of them, the usual
// case, are new; when some were stored already (a redelivered batch), the
// transaction is rolled back and written again with RETURNING.
func (s *SQLStore) insertLogBatch(ctx context.Context, rows []Record, then Inserted) (int, error) {
	if len(rows) == 0 {
		return 0, nil
	}
	if s.db.Dialect() == sqlstore.DialectSQLite {
		n, err := s.insertLogTx(ctx, rows, then, false)
		if !errors.Is(err, errSomeStored) {
			return n, err
		}
	}
	return s.insertLogTx(ctx, rows, then, true)
}

// insertLogTx is insertLogBatch with RETURNING (returning), or without it,
// failing with errSomeStored when a record was stored already.
func (s *SQLStore) insertLogTx(ctx context.Context, rows []Record, then Inserted, returning bool) (int, error) {
	var stmts *insertStmts
	if !returning && s.db.Dialect() == sqlstore.DialectSQLite {
		// Prepared before the transaction takes a connection: an
		// in-memory database has only one.
		var err error
		if stmts, err = s.prepareInserts(ctx, len(rows)); err != nil {
			return 0, err
		}
	}
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return 0, fmt.Errorf("audit: insert logs: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit

	var (
		query string
		built int // rows in query
		fresh []Record
	)
	args := make([]any, 0, min(len(rows), logBatchRows)*nLogColumns)
	for start, n := 0, 0; start < len(rows); start += n {
		n = s.chunkRows(len(rows)-start, returning)
		batch := rows[start : start+n]
		if n != built && (returning || stmts == nil) {
			query, built = s.insertLogsQuery(n, returning), n
		}
		args = args[:0]
		for i := range batch {
			args = appendLogArgs(args, &batch[i])
		}
		if returning {
			if fresh, err = insertReturning(ctx, tx, query, args, batch, fresh); err != nil {
				return 0, err
			}
			continue
		}
		var res sql.Result
		if stmts != nil {
			res, err = tx.ExecStmt(ctx, stmts[bits.Len(uint(n))-1], args...)
		} else {
			res, err = tx.Exec(ctx, query, args...)
		}
		if err != nil {
			return 0, fmt.Errorf("audit: insert logs: %w", err)
		}
		if n, err := res.RowsAffected(); err != nil || n != int64(len(batch)) {
			return 0, errSomeStored
		}
		fresh = append(fresh, batch...)
	}
	if then != nil && len(fresh) > 0 {
		if err := then(ctx, tx, fresh); err != nil {
			return 0, fmt.Errorf("audit: insert logs: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("audit: insert logs: commit: %w", err)
	}
	return len(fresh), nil
}

// chunkRows is how many of the remaining records the next INSERT of a
// batch carries: on SQLite without RETURNING the largest power of two up
// to logChunkRows (a prepared statement's), otherwise up to logBatchRows.
func (s *SQLStore) chunkRows(remaining int, returning bool) int {
	if returning || s.db.Dialect() != sqlstore.DialectSQLite {
		return min(remaining, logBatchRows)
	}
	n := 1
	for n*2 <= min(remaining, logChunkRows) {
		n *= 2
	}
	return n
}

// prepareInserts returns the prepared INSERTs (without RETURNING) with
// every chunk size a batch of rows records uses, preparing those not made
// yet: a copy, which the caller reads while others may prepare more.
func (s *SQLStore) prepareInserts(ctx context.Context, rows int) (*insertStmts, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for start, n := 0, 0; start < rows; start += n {
		n = s.chunkRows(rows-start, false)
		i := bits.Len(uint(n)) - 1
		if s.inserts[i] != nil {
			continue
		}
		st, err := s.db.Prepare(ctx, s.insertLogsQuery(n, false))
		if err != nil {
			return nil, fmt.Errorf("audit: insert logs: prepare: %w", err)
		}
		s.inserts[i] = st
	}
	stmts := s.inserts
	return &stmts, nil
}

// insertReturning runs one INSERT … RETURNING request_id of batch and
// appends to fresh the records it inserted.
func insertReturning(ctx context.Context, tx *sqlstore.Tx, query string, args []any, batch, fresh []Record) ([]Record, error) {
	rs, err := tx.Query(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("audit: insert logs: %w", err)
	}
	defer rs.Close()
	ids := make(map[string]bool, len(batch))
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, fmt.Errorf("audit: insert logs: %w", err)
		}
		ids[id] = true
	}
	if err := rs.Err(); err != nil {
		return nil, fmt.Errorf("audit: insert logs: %w", err)
	}
	for i := range batch {
		if ids[batch[i].RequestID] {
			fresh = append(fresh, batch[i])
		}
	}
	return fresh, nil
}

// insertLogRows writes rows one statement each, after their batch was
// refused for a data error: a row refused alone is tried again escaped to
// ASCII, and left out if refused even so. It adds those rows to refused, and
// returns an error (with nothing more written) at the first error that does
// not come from a row's data.
func (s *SQLStore) insertLogRows(ctx context.Context, rows []Record, refused *DataError, then Inserted) (int, *DataError, error) {
	inserted := 0
	insert := func(r Record) error {
		n, err := s.insertLogBatch(ctx, []Record{r}, then)
		if err != nil {
			return fmt.Errorf("audit: insert log %q: %w", r.RequestID, err)
		}
		inserted += n
		return nil
	}
	for i := range rows {
		plainErr := insert(rows[i])
		if plainErr == nil {
			continue
		}
		if ctx.Err() != nil || !sqlstore.IsDataError(plainErr) {
			return 0, nil, plainErr
		}
		err := insert(asciiRecord(rows[i]))
		switch {
		case err == nil:
			if refused == nil {
				refused = &DataError{Err: plainErr}
			}
			refused.Escaped = append(refused.Escaped, rows[i].RequestID)
		case ctx.Err() != nil || !sqlstore.IsDataError(err):
			return 0, nil, err
		default:
			refused = rejectLog(refused, rows[i].RequestID, err)
		}
	}
	return inserted, refused, nil
}

// rejectLog adds a record left out, for cause err, to refused.
func rejectLog(refused *DataError, requestID string, err error) *DataError {
	if refused == nil {
		refused = &DataError{Err: err}
	}
	refused.Rejected = append(refused.Rejected, requestID)
	return refused
}

// escapeRecord returns r with its text escaped for storage: the columns
// with sqlstore.EscapeText (a query's filter escaped the same way finds
// them), the entry with sqlstore.EscapeJSON (it still decodes to the bytes
// the caller sent).
func escapeRecord(r Record) Record {
	r.RequestID = sqlstore.EscapeText(r.RequestID)
	r.KeyID = sqlstore.EscapeText(r.KeyID)
	r.Provider = sqlstore.EscapeText(r.Provider)
	r.Model = sqlstore.EscapeText(r.Model)
	r.UserID = sqlstore.EscapeText(r.UserID)
	r.ConversationID = sqlstore.EscapeText(r.ConversationID)
	r.KeyMask = sqlstore.EscapeText(r.KeyMask)
	r.Entry = sqlstore.EscapeJSON(r.Entry)
	return r
}

// asciiRecord returns r, already escaped, with its text escaped to ASCII.
func asciiRecord(r Record) Record {
	r.RequestID = sqlstore.ASCIIText(r.RequestID)
	r.KeyID = sqlstore.ASCIIText(r.KeyID)
	r.Provider = sqlstore.ASCIIText(r.Provider)
	r.Model = sqlstore.ASCIIText(r.Model)
	r.UserID = sqlstore.ASCIIText(r.UserID)
	r.ConversationID = sqlstore.ASCIIText(r.ConversationID)
	r.KeyMask = sqlstore.ASCIIText(r.KeyMask)
	r.Entry = sqlstore.ASCIIJSON(r.Entry)
	return r
}

// appendLogArgs appends r's column values in logColumns order.
// The entry is bound as text over r.Entry's bytes, not a copy of them:
// the drivers copy what they bind during the statement, and the record's
// bytes do not change while it is written.
func appendLogArgs(args []any, r *Record) []any {
	entry := unsafe.String(unsafe.SliceData(r.Entry), len(r.Entry))
	return append(args, r.RequestID, sqlstore.Micros(r.Timestamp), r.KeyID, r.Provider, r.Model,
		r.Status, r.Success, r.Tokens, r.Cost, r.LatencyMS, entry, r.UserID, r.ConversationID)
}

// insertLogsQuery is the INSERT of rows records, answering (with
// returning) the request ids it inserted. On SQLite request_id is the key, and a conflict skips the
// row. On PostgreSQL the partitioned table's key is (ts, request_id) — a
// unique key must hold the partition key —, which skips an entry delivered
// again (same bytes, same timestamp) atomically even between bridges; a
// request id already stored under another timestamp is skipped by the NOT
// EXISTS probe of the request_id index.
//
// On SQLite the INSERT without RETURNING (insertLogTx's first try) is
// INSERT OR IGNORE, so that SQLite keeps no statement journal for it. A
// multi-row INSERT that a constraint may abort midway (NOT NULL's default
// ABORT) copies, into a statement journal, every page it changes that
// existed before it, spilled past 64 KiB to a temporary file: two write
// calls a page, 236 per 1,000 entries on a fresh database and about
// 5,900 on one of 200,000 entries from many users, where a batch changes
// a thousand index pages (BenchmarkDrainPages in internal/bridge). OR
// IGNORE makes NOT NULL skip the row instead. It changes nothing stored:
// no value appendLogArgs binds is NULL; a row skipped all the same leaves
// the batch's count short, and the batch is rolled back and written again
// with RETURNING, without OR IGNORE, which refuses the row as before; and
// any error (a STRICT type check still aborts) rolls the transaction back.
func (s *SQLStore) insertLogsQuery(rows int, returning bool) string {
	var b strings.Builder
	b.WriteString(`INSERT `)
	if s.db.Dialect() == sqlstore.DialectSQLite && !returning {
		b.WriteString(`OR IGNORE `)
	}
	b.WriteString(`INTO audit_logs (` + logColumns + `) `)
	if s.db.Dialect() == sqlstore.DialectPostgres {
		b.WriteString(`SELECT * FROM (VALUES `)
		b.WriteString(sqlstore.Placeholders(rows, logPlaceholders))
		b.WriteString(`) AS v (` + logColumns + `) WHERE NOT EXISTS (SELECT 1 FROM audit_logs a WHERE a.request_id = v.request_id)`)
	} else {
		b.WriteString(`VALUES `)
		b.WriteString(sqlstore.Placeholders(rows, logPlaceholdersSQLite))
	}
	b.WriteString(` ON CONFLICT DO NOTHING`)
	if returning {
		b.WriteString(` RETURNING request_id`)
	}
	return b.String()
}
