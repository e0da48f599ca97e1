package sqlstore

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/audit"
)

// logBatchRows is how many records one multi-row INSERT carries: 11 columns
// each keeps a statement well under SQLite's and PostgreSQL's parameter caps.
const logBatchRows = 500

const logColumns = `request_id, ts, key_id, provider, model, status, success, tokens, cost, latency_ms, entry`

const logPlaceholders = `(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// InsertLogs writes recs in one transaction, as multi-row INSERTs of up to
// logBatchRows records. A record whose RequestID is already stored (or
// repeated in recs) is skipped. Every record needs a RequestID.
func (d *DB) InsertLogs(ctx context.Context, recs []audit.Record) error {
	if len(recs) == 0 {
		return nil
	}
	for i := range recs {
		if recs[i].RequestID == "" {
			return fmt.Errorf("sqlstore: insert logs: record %d has no request id", i)
		}
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
	args := make([]any, 0, min(len(recs), logBatchRows)*11)
	for start := 0; start < len(recs); start += logBatchRows {
		batch := recs[start:min(start+logBatchRows, len(recs))]
		if len(batch) != built {
			query, built = d.insertLogsQuery(len(batch)), len(batch)
		}
		args = args[:0]
		for _, r := range batch {
			args = append(args, r.RequestID, micros(r.Timestamp), r.KeyID, r.Provider, r.Model,
				r.Status, r.Success, r.Tokens, r.Cost, r.LatencyMS, string(r.Entry))
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
			args = append(args, f.val)
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
		FROM audit_logs WHERE key_id = ? AND ts >= ?`), keyID, micros(since)).Scan(&spend)
	if err != nil {
		return 0, fmt.Errorf("sqlstore: spend since: %w", err)
	}
	return spend, nil
}

var _ audit.Store = (*DB)(nil)
