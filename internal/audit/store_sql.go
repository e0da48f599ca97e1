package audit

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// SQLStore is the Store on SQL (SQLite or PostgreSQL): the audit_logs table
// of sqlstore's migrations.
type SQLStore struct {
	db *sqlstore.DB
}

// NewSQLStore returns the Store over db.
func NewSQLStore(db *sqlstore.DB) *SQLStore { return &SQLStore{db: db} }

// logBatchRows is how many records one multi-row INSERT carries: 11 columns
// each keeps a statement well under SQLite's and PostgreSQL's parameter caps.
const logBatchRows = 500

const logColumns = `request_id, ts, key_id, provider, model, status, success, tokens, cost, latency_ms, entry`

const logPlaceholders = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

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
	if len(recs) == 0 {
		return nil
	}
	var refused *DataError
	rows := make([]Record, 0, len(recs))
	for i, r := range recs {
		if r.RequestID == "" {
			refused = rejectLog(refused, "", fmt.Errorf("audit: insert logs: record %d has no request id", i))
			continue
		}
		rows = append(rows, escapeRecord(r))
	}
	if err := s.insertLogBatch(ctx, rows); err != nil {
		if ctx.Err() != nil || !sqlstore.IsDataError(err) {
			return err
		}
		if refused, err = s.insertLogRows(ctx, rows, refused); err != nil {
			return err
		}
	}
	if refused != nil {
		return refused
	}
	return nil
}

// insertLogBatch writes rows in one transaction.
func (s *SQLStore) insertLogBatch(ctx context.Context, rows []Record) error {
	if len(rows) == 0 {
		return nil
	}
	tx, err := s.db.Begin(ctx)
	if err != nil {
		return fmt.Errorf("audit: insert logs: begin: %w", err)
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
			query, built = s.insertLogsQuery(len(batch)), len(batch)
		}
		args = args[:0]
		for i := range batch {
			args = appendLogArgs(args, &batch[i])
		}
		if _, err := tx.Exec(ctx, query, args...); err != nil {
			return fmt.Errorf("audit: insert logs: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("audit: insert logs: commit: %w", err)
	}
	return nil
}

// insertLogRows writes rows one statement each, after their batch was
// refused for a data error: a row refused alone is tried again escaped to
// ASCII, and left out if refused even so. It adds those rows to refused, and
// returns an error (with nothing more written) at the first error that does
// not come from a row's data.
func (s *SQLStore) insertLogRows(ctx context.Context, rows []Record, refused *DataError) (*DataError, error) {
	query := s.insertLogsQuery(1)
	insert := func(r *Record) error {
		_, err := s.db.Exec(ctx, query, appendLogArgs(make([]any, 0, 11), r)...)
		if err != nil {
			return fmt.Errorf("audit: insert log %q: %w", r.RequestID, err)
		}
		return nil
	}
	for i := range rows {
		plainErr := insert(&rows[i])
		if plainErr == nil {
			continue
		}
		if ctx.Err() != nil || !sqlstore.IsDataError(plainErr) {
			return nil, plainErr
		}
		ascii := asciiRecord(rows[i])
		err := insert(&ascii)
		switch {
		case err == nil:
			if refused == nil {
				refused = &DataError{Err: plainErr}
			}
			refused.Escaped = append(refused.Escaped, rows[i].RequestID)
		case ctx.Err() != nil || !sqlstore.IsDataError(err):
			return nil, err
		default:
			refused = rejectLog(refused, rows[i].RequestID, err)
		}
	}
	return refused, nil
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
	r.Entry = sqlstore.EscapeJSON(r.Entry)
	return r
}

// asciiRecord returns r, already escaped, with its text escaped to ASCII.
func asciiRecord(r Record) Record {
	r.RequestID = sqlstore.ASCIIText(r.RequestID)
	r.KeyID = sqlstore.ASCIIText(r.KeyID)
	r.Provider = sqlstore.ASCIIText(r.Provider)
	r.Model = sqlstore.ASCIIText(r.Model)
	r.Entry = sqlstore.ASCIIJSON(r.Entry)
	return r
}

// appendLogArgs appends r's column values in logColumns order.
func appendLogArgs(args []any, r *Record) []any {
	return append(args, r.RequestID, sqlstore.Micros(r.Timestamp), r.KeyID, r.Provider, r.Model,
		r.Status, r.Success, r.Tokens, r.Cost, r.LatencyMS, string(r.Entry))
}

func (s *SQLStore) insertLogsQuery(rows int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO audit_logs (` + logColumns + `) VALUES `)
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(logPlaceholders)
	}
	b.WriteString(` ON CONFLICT (request_id) DO NOTHING`)
	return b.String()
}

// QueryLogs returns the records matching q newest first (ties by descending
// RequestID), and the number of matches ignoring Limit and Offset. A Limit
// <= 0 means no limit; a negative Offset counts as 0. The count and the page
// are read by two statements, so a concurrent insert may show in one only.
// Filters are escaped as InsertLogs escapes text, so the value a caller sent
// finds its record.
func (s *SQLStore) QueryLogs(ctx context.Context, q Query) ([]Record, int64, error) {
	var (
		where []string
		args  []any
	)
	if !q.Since.IsZero() {
		where = append(where, "ts >= ?")
		args = append(args, sqlstore.Micros(q.Since))
	}
	for _, f := range []struct{ col, val string }{
		{"provider", q.Provider}, {"model", q.Model}, {"key_id", q.KeyID},
	} {
		if f.val != "" {
			where = append(where, f.col+" = ?")
			args = append(args, sqlstore.EscapeText(f.val))
		}
	}
	cond := ""
	if len(where) > 0 {
		cond = " WHERE " + strings.Join(where, " AND ")
	}

	var total int64
	if err := s.db.QueryRow(ctx, `SELECT COUNT(*) FROM audit_logs`+cond, args...).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("audit: query logs: count: %w", err)
	}
	limit, offset := int64(q.Limit), int64(max(q.Offset, 0))
	if limit <= 0 {
		limit = math.MaxInt64
	}
	recs := []Record{}
	if total == 0 || offset >= total {
		return recs, total, nil
	}
	rows, err := s.db.Query(ctx,
		`SELECT `+logColumns+` FROM audit_logs`+cond+` ORDER BY ts DESC, request_id DESC LIMIT ? OFFSET ?`,
		append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("audit: query logs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			r     Record
			ts    int64
			entry string
		)
		if err := rows.Scan(&r.RequestID, &ts, &r.KeyID, &r.Provider, &r.Model, &r.Status,
			&r.Success, &r.Tokens, &r.Cost, &r.LatencyMS, &entry); err != nil {
			return nil, 0, fmt.Errorf("audit: query logs: %w", err)
		}
		r.Timestamp = sqlstore.FromMicros(ts)
		if entry != "" {
			r.Entry = []byte(entry)
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("audit: query logs: %w", err)
	}
	return recs, total, nil
}

// SummarizeLogs aggregates every record at or after since. Providers and
// Models list the distinct non-empty values in byte order.
func (s *SQLStore) SummarizeLogs(ctx context.Context, since time.Time) (Summary, error) {
	var sum Summary
	err := s.db.QueryRow(ctx, `SELECT
			COUNT(*),
			CAST(COALESCE(SUM(CASE WHEN success THEN 1 ELSE 0 END), 0) AS BIGINT),
			CAST(COALESCE(AVG(latency_ms), 0) AS DOUBLE PRECISION),
			CAST(COALESCE(SUM(tokens), 0) AS BIGINT),
			CAST(COALESCE(SUM(cost), 0) AS DOUBLE PRECISION)
		FROM audit_logs WHERE ts >= ?`, sqlstore.Micros(since)).
		Scan(&sum.TotalRequests, &sum.Successes, &sum.AvgLatencyMS, &sum.TotalTokens, &sum.TotalCost)
	if err != nil {
		return Summary{}, fmt.Errorf("audit: summarize logs: %w", err)
	}
	if sum.Providers, err = s.distinct(ctx, "provider", since); err != nil {
		return Summary{}, err
	}
	if sum.Models, err = s.distinct(ctx, "model", since); err != nil {
		return Summary{}, err
	}
	return sum, nil
}

// distinct returns the distinct non-empty values of col (a constant column
// name) at or after since, in byte order.
func (s *SQLStore) distinct(ctx context.Context, col string, since time.Time) ([]string, error) {
	rows, err := s.db.Query(ctx,
		`SELECT DISTINCT `+col+` FROM audit_logs WHERE ts >= ? AND `+col+` <> '' ORDER BY `+col, sqlstore.Micros(since))
	if err != nil {
		return nil, fmt.Errorf("audit: summarize logs: distinct %s: %w", col, err)
	}
	defer rows.Close()
	out := []string{}
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("audit: summarize logs: distinct %s: %w", col, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: summarize logs: distinct %s: %w", col, err)
	}
	return out, nil
}

// SpendSince sums Cost over keyID's records at or after since.
func (s *SQLStore) SpendSince(ctx context.Context, keyID string, since time.Time) (float64, error) {
	var spend float64
	err := s.db.QueryRow(ctx, `SELECT CAST(COALESCE(SUM(cost), 0) AS DOUBLE PRECISION)
		FROM audit_logs WHERE key_id = ? AND ts >= ?`, sqlstore.EscapeText(keyID), sqlstore.Micros(since)).Scan(&spend)
	if err != nil {
		return 0, fmt.Errorf("audit: spend since: %w", err)
	}
	return spend, nil
}

var _ Store = (*SQLStore)(nil)
