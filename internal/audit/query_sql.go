package audit

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// where is q's filter as SQL conditions and their arguments. Filters are
// escaped as InsertLogs escapes text, so the value a caller sent finds its
// record.
func where(q Query) (string, []any) {
	var (
		conds []string
		args  []any
	)
	if !q.Since.IsZero() {
		conds = append(conds, "ts >= ?")
		args = append(args, sqlstore.Micros(q.Since))
	}
	if !q.Until.IsZero() {
		conds = append(conds, "ts < ?")
		args = append(args, sqlstore.Micros(q.Until))
	}
	for _, f := range []struct{ col, val string }{
		{"provider", q.Provider}, {"model", q.Model}, {"key_id", q.KeyID},
		{"user_id", q.UserID}, {"conversation_id", q.ConversationID},
	} {
		if f.val != "" {
			conds = append(conds, f.col+" = ?")
			args = append(args, sqlstore.EscapeText(f.val))
		}
	}
	if q.ProviderPrefix != "" {
		// A range of the (provider, ts) index: provider is compared in
		// byte order (COLLATE "C" on PostgreSQL, BINARY on SQLite).
		p := sqlstore.EscapeText(q.ProviderPrefix)
		conds = append(conds, "provider >= ?")
		args = append(args, p)
		if end := prefixEnd(p); end != "" {
			conds = append(conds, "provider < ?")
			args = append(args, end)
		}
	}
	if q.Status != 0 {
		conds = append(conds, "status = ?")
		args = append(args, q.Status)
	}
	switch q.Outcome {
	case OutcomeSuccess:
		conds = append(conds, "success")
	case OutcomeError:
		conds = append(conds, "NOT success")
	}
	if c := q.Before; c != nil {
		// A row comparison, (ts < c.ts) or (ts = c.ts and request_id <
		// c.id): unlike that OR, both dialects use it as a range of the
		// (ts, request_id) key, so a cursor page deep in a month of
		// entries reads its page, not every newer entry (PostgreSQL
		// filtered ~500,000 heap rows for a page 15 days back among
		// 1,000,000; docs/benchmarks.md, issue 12).
		conds = append(conds, "(ts, request_id) < (?, ?)")
		args = append(args, sqlstore.Micros(c.Timestamp), sqlstore.EscapeText(c.RequestID))
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// prefixEnd is the least string above, in byte order, every string that
// starts with p (valid UTF-8): p with its last rune below U+10FFFF
// incremented and the runes after it dropped; "" when there is none.
// UTF-8's byte order is its code points' order, so the strings starting
// with p are exactly those in [p, prefixEnd(p)).
func prefixEnd(p string) string {
	rs := []rune(p)
	for i := len(rs) - 1; i >= 0; i-- {
		switch rs[i] {
		case utf8.MaxRune:
			continue
		case 0xD7FF: // the next rune past the surrogates
			rs[i] = 0xE000
		default:
			rs[i]++
		}
		return string(rs[:i+1])
	}
	return ""
}

// QueryLogs returns the records matching q newest first (ties by descending
// RequestID), and the number of matches ignoring Limit and Offset. A Limit
// <= 0 means no limit; a negative Offset counts as 0. The count and the page
// are read by two statements, so a concurrent insert may show in one only.
func (s *SQLStore) QueryLogs(ctx context.Context, q Query) ([]Record, int64, error) {
	cond, args := where(q)
	var total int64
	if err := s.db.QueryRow(ctx, countLogsSQL(cond), args...).Scan(&total); err != nil {
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
	rows, err := s.db.Query(ctx, pageLogsSQL(cond), append(args, limit, offset)...)
	if err != nil {
		return nil, 0, fmt.Errorf("audit: query logs: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRecord(rows)
		if err != nil {
			return nil, 0, fmt.Errorf("audit: query logs: %w", err)
		}
		recs = append(recs, r)
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("audit: query logs: %w", err)
	}
	return recs, total, nil
}

// countLogsSQL counts the records matching cond (where's).
func countLogsSQL(cond string) string { return `SELECT COUNT(*) FROM audit_logs` + cond }

// pageLogsSQL reads a page of the records matching cond, newest first; its
// last two arguments are the limit and the offset.
func pageLogsSQL(cond string) string {
	return `SELECT ` + logColumns + ` FROM audit_logs` + cond + ` ORDER BY ts DESC, request_id DESC LIMIT ? OFFSET ?`
}

// groupLogsSQL sums the records matching cond per bucket (of bucket's
// length; one bucket when <= 0), provider and model; its last argument
// is the limit.
func groupLogsSQL(cond string, bucket time.Duration) string {
	b := "0"
	if us := bucket.Microseconds(); us > 0 {
		// The floor of ts to the bucket, negative times too (% truncates).
		n := strconv.FormatInt(us, 10)
		b = "ts - ((ts % " + n + ") + " + n + ") % " + n
	}
	return `SELECT CAST(b AS BIGINT), provider, model, COUNT(*),
			CAST(SUM(CASE WHEN success AND status < 400 THEN 0 ELSE 1 END) AS BIGINT),
			CAST(SUM(cost) AS DOUBLE PRECISION), CAST(SUM(latency_ms) AS BIGINT)
		FROM (SELECT ` + b + ` AS b, provider, model, success, status, cost, latency_ms FROM audit_logs` + cond + `) grouped
		GROUP BY b, provider, model ORDER BY b DESC, provider, model LIMIT ?`
}

// GroupLogs sums the records matching q per bucket, provider and model
// (Store.GroupLogs): one aggregate over q's rows, which the filters'
// indexes select.
func (s *SQLStore) GroupLogs(ctx context.Context, q Query, bucket time.Duration) ([]Group, error) {
	cond, args := where(q)
	limit := int64(q.Limit)
	if limit <= 0 {
		limit = math.MaxInt64
	}
	rows, err := s.db.Query(ctx, groupLogsSQL(cond, bucket), append(args, limit)...)
	if err != nil {
		return nil, fmt.Errorf("audit: group logs: %w", err)
	}
	defer rows.Close()
	out := []Group{}
	for rows.Next() {
		var (
			g  Group
			us int64
		)
		if err := rows.Scan(&us, &g.Provider, &g.Model, &g.Requests, &g.Errors, &g.Cost, &g.LatencySumMS); err != nil {
			return nil, fmt.Errorf("audit: group logs: %w", err)
		}
		if bucket.Microseconds() > 0 {
			g.Bucket = sqlstore.FromMicros(us)
		}
		out = append(out, g)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("audit: group logs: %w", err)
	}
	return out, nil
}

// scanRecord reads one row of logColumns.
func scanRecord(rows *sql.Rows) (Record, error) {
	var (
		r     Record
		ts    int64
		entry string
	)
	if err := rows.Scan(&r.RequestID, &ts, &r.KeyID, &r.Provider, &r.Model, &r.Status,
		&r.Success, &r.Tokens, &r.Cost, &r.LatencyMS, &entry, &r.UserID, &r.ConversationID); err != nil {
		return Record{}, err
	}
	r.Timestamp = sqlstore.FromMicros(ts)
	if entry != "" {
		r.Entry = []byte(entry)
	}
	return r, nil
}

// StoredIDs returns which of ids are stored, in chunks of 500 per query.
func (s *SQLStore) StoredIDs(ctx context.Context, ids []string) (map[string]bool, error) {
	out := make(map[string]bool, len(ids))
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = sqlstore.EscapeText(id)
		}
		rows, err := s.db.Query(ctx, `SELECT request_id FROM audit_logs WHERE request_id IN (`+
			sqlstore.Placeholders(len(chunk), "?")+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("audit: stored ids: %w", err)
		}
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, fmt.Errorf("audit: stored ids: %w", err)
			}
			out[id] = true
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("audit: stored ids: %w", err)
		}
	}
	// Report the ids as the caller sent them (escaping changes only
	// unsafe ones).
	for _, id := range ids {
		if out[sqlstore.EscapeText(id)] {
			out[id] = true
		}
	}
	return out, nil
}

// Locate returns the cursor of the stored record requestID.
func (s *SQLStore) Locate(ctx context.Context, requestID string) (Cursor, error) {
	var ts int64
	err := s.db.QueryRow(ctx, `SELECT ts FROM audit_logs WHERE request_id = ? ORDER BY ts DESC LIMIT 1`,
		sqlstore.EscapeText(requestID)).Scan(&ts)
	if errors.Is(err, sql.ErrNoRows) {
		return Cursor{}, store.ErrNotFound
	}
	if err != nil {
		return Cursor{}, fmt.Errorf("audit: locate %q: %w", requestID, err)
	}
	return Cursor{Timestamp: sqlstore.FromMicros(ts), RequestID: requestID}, nil
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
