package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/svc-gateway/svc/internal/audit"
)

// logBatchRows is how many records one multi-row INSERT carries: 11 columns
// each keeps a statement well under SQLite's and PostgreSQL's parameter caps.
const logBatchRows = 500

const logColumns = `request_id, ts, key_id, provider, model, status, success, tokens, cost, latency_ms, entry`

const logPlaceholders = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// InsertLogs writes recs, as multi-row INSERTs of up to logBatchRows records
// in one transaction. A record whose RequestID is already stored (or repeated
// in recs) is skipped.
//
// Text is stored as escapeText and escapeEntry make it, so a NUL byte or
// invalid UTF-8 (which PostgreSQL's text refuses) never fails a write. When
// the batch is refused all the same, for a reason that lies in some record's
// data, the records are written one by one: a record refused alone is written
// again with every text field escaped to ASCII (asciiText, asciiEntry), and
// one refused even so is left out. Such records, and any without a
// RequestID, are named by the *audit.DataError returned once every other
// record is stored. Any other error leaves the call safe to retry.
func (d *DB) InsertLogs(ctx context.Context, recs []audit.Record) error {
	if len(recs) == 0 {
		return nil
	}
	var refused *audit.DataError
	rows := make([]audit.Record, 0, len(recs))
	for i, r := range recs {
		if r.RequestID == "" {
			refused = rejectLog(refused, "", fmt.Errorf("sqlstore: insert logs: record %d has no request id", i))
			continue
		}
		rows = append(rows, escapeRecord(r))
	}
	if err := d.insertLogBatch(ctx, rows); err != nil {
		if ctx.Err() != nil || !isDataError(err) {
			return err
		}
		if refused, err = d.insertLogRows(ctx, rows, refused); err != nil {
			return err
		}
	}
	if refused != nil {
		return refused
	}
	return nil
}

// insertLogBatch writes rows in one transaction.
func (d *DB) insertLogBatch(ctx context.Context, rows []audit.Record) error {
	if len(rows) == 0 {
		return nil
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlstore: insert logs: begin: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit

	var (
		query string
		built int // rows in query
	)
	args := make([]any, 0, min(len(rows), logBatchRows)*11)
	for start := 0; start < len(rows); start += logBatchRows {
		batch := rows[start:min(start+logBatchRows, len(rows))]
		if len(batch) != built {
			query, built = d.insertLogsQuery(len(batch)), len(batch)
		}
		args = args[:0]
		for i := range batch {
			args = appendLogArgs(args, &batch[i])
		}
		if _, err := tx.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("sqlstore: insert logs: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlstore: insert logs: commit: %w", err)
	}
	return nil
}

// insertLogRows writes rows one statement each, after their batch was
// refused for a data error: a row refused alone is tried again escaped to
// ASCII, and left out if refused even so. It adds those rows to refused, and
// returns an error (with nothing more written) at the first error that does
// not come from a row's data.
func (d *DB) insertLogRows(ctx context.Context, rows []audit.Record, refused *audit.DataError) (*audit.DataError, error) {
	query := d.insertLogsQuery(1)
	insert := func(r *audit.Record) error {
		_, err := d.db.ExecContext(ctx, query, appendLogArgs(make([]any, 0, 11), r)...)
		if err != nil {
			return fmt.Errorf("sqlstore: insert log %q: %w", r.RequestID, err)
		}
		return nil
	}
	for i := range rows {
		plainErr := insert(&rows[i])
		if plainErr == nil {
			continue
		}
		if ctx.Err() != nil || !isDataError(plainErr) {
			return nil, plainErr
		}
		ascii := asciiRecord(rows[i])
		err := insert(&ascii)
		switch {
		case err == nil:
			if refused == nil {
				refused = &audit.DataError{Err: plainErr}
			}
			refused.Escaped = append(refused.Escaped, rows[i].RequestID)
		case ctx.Err() != nil || !isDataError(err):
			return nil, err
		default:
			refused = rejectLog(refused, rows[i].RequestID, err)
		}
	}
	return refused, nil
}

// rejectLog adds a record left out, for cause err, to refused.
func rejectLog(refused *audit.DataError, requestID string, err error) *audit.DataError {
	if refused == nil {
		refused = &audit.DataError{Err: err}
	}
	refused.Rejected = append(refused.Rejected, requestID)
	return refused
}

// appendLogArgs appends r's column values in logColumns order.
func appendLogArgs(args []any, r *audit.Record) []any {
	return append(args, r.RequestID, micros(r.Timestamp), r.KeyID, r.Provider, r.Model,
		r.Status, r.Success, r.Tokens, r.Cost, r.LatencyMS, string(r.Entry))
}

// isDataError reports whether err is the database refusing a row's data (a
// value it cannot hold, a constraint, a trigger), as opposed to the database
// or the connection failing.
func isDataError(err error) bool {
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

func (d *DB) insertLogsQuery(rows int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO audit_logs (` + logColumns + `) VALUES `)
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(logPlaceholders)
	}
	b.WriteString(` ON CONFLICT (request_id) DO NOTHING`)
	return d.q(b.String())
}

// QueryLogs returns the records matching q newest first (ties by descending
// RequestID), and the number of matches ignoring Limit and Offset. A Limit
// <= 0 means no limit; a negative Offset counts as 0. The count and the page
// are read by two statements, so a concurrent insert may show in one only.
// Filters are escaped as InsertLogs escapes text, so the value a caller sent
// finds its record.
func (d *DB) QueryLogs(ctx context.Context, q audit.Query) ([]audit.Record, int64, error) {
	var (
		where []string
		args  []any
	)
	if !q.Since.IsZero() {
		where = append(where, "ts >= ?")
		args = append(args, micros(q.Since))
	}
	for _, f := range []struct{ col, val string }{
		{"provider", q.Provider}, {"model", q.Model}, {"key_id", q.KeyID},
	} {
		if f.val != "" {
			where = append(where, f.col+" = ?")
			args = append(args, escapeText(f.val))
		}
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}

	var total int64
	if err := d.db.QueryRowContext(ctx, d.q(`SELECT COUNT(*) FROM audit_logs`+cond), args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("sqlstore: query logs: count: %w", err)
	}
	limit, offset := int64(q.Limit), int64(max(q.Offset, 0))
	if limit <= 0 {
		limit = math.MaxInt64
	}
	recs := []audit.Record{}
	if total == 0 || offset >= total {
		return recs, total, nil
	}
	rows, err := d.db.QueryContext(ctx,
		d.q(`SELECT `+logColumns+` FROM audit_logs`+cond+` ORDER BY ts DESC, request_id DESC LIMIT ? OFFSET ?`),
		append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("sqlstore: query logs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r     audit.Record
			ts    int64
			entry string
		)
		if err := rows.Scan(&r.RequestID, &ts, &r.KeyID, &r.Provider, &r.Model, &r.Status,
			&r.Success, &r.Tokens, &r.Cost, &r.LatencyMS, &entry); err != nil {
			return nil, 0, fmt.Errorf("sqlstore: query logs: %w", err)
		}
		r.Timestamp = fromMicros(ts)
		if entry != "" {
			r.Entry = []byte(entry)
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("sqlstore: query logs: %w", err)
	}
	return recs, total, nil
}

// SummarizeLogs aggregates every record at or after since. Providers and
// Models list the distinct non-empty values in byte order.
func (d *DB) SummarizeLogs(ctx context.Context, since time.Time) (audit.Summary, error) {
	var s audit.Summary
	err := d.db.QueryRowContext(ctx, d.q(`SELECT
			COUNT(*),
			CAST(COALESCE(SUM(CASE WHEN success THEN 1 ELSE 0 END), 0) AS BIGINT),
			CAST(COALESCE(AVG(latency_ms), 0) AS DOUBLE PRECISION),
			CAST(COALESCE(SUM(tokens), 0) AS BIGINT),
			CAST(COALESCE(SUM(cost), 0) AS DOUBLE PRECISION)
		FROM audit_logs WHERE ts >= ?`), micros(since)).
		Scan(&s.TotalRequests, &s.Successes, &s.AvgLatencyMS, &s.TotalTokens, &s.TotalCost)
	if err != nil {
		return audit.Summary{}, fmt.Errorf("sqlstore: summarize logs: %w", err)
	}
	if s.Providers, err = d.distinct(ctx, "provider", since); err != nil {
		return audit.Summary{}, err
	}
	if s.Models, err = d.distinct(ctx, "model", since); err != nil {
		return audit.Summary{}, err
	}
	return s, nil
}

// distinct returns the distinct non-empty values of col (a constant column
// name) at or after since, in byte order.
func (d *DB) distinct(ctx context.Context, col string, since time.Time) ([]string, error) {
	rows, err := d.db.QueryContext(ctx,
		d.q(`SELECT DISTINCT `+col+` FROM audit_logs WHERE ts >= ? AND `+col+` <> '' ORDER BY `+col), micros(since))
	if err != nil {
		return nil, fmt.Errorf("sqlstore: summarize logs: distinct %s: %w", col, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("sqlstore: summarize logs: distinct %s: %w", col, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlstore: summarize logs: distinct %s: %w", col, err)
	}
	return out, nil
}

// SpendSince sums Cost over keyID's records at or after since.
func (d *DB) SpendSince(ctx context.Context, keyID string, since time.Time) (float64, error) {
	var spend float64
	err := d.db.QueryRowContext(ctx, d.q(`SELECT CAST(COALESCE(SUM(cost), 0) AS DOUBLE PRECISION)
		FROM audit_logs WHERE key_id = ? AND ts >= ?`), escapeText(keyID), micros(since)).Scan(&spend)
	if err != nil {
		return 0, fmt.Errorf("sqlstore: spend since: %w", err)
	}
	return spend, nil
}

var _ audit.Store = (*DB)(nil)
