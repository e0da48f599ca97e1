package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// logsBudget is the bar: each read answers in under 300 ms at p95.
const logsBudget = 300.0

// logQuery is one kind of read: its name and the paths its requests use,
// in turn (several when each request asks for another key, cursor, …).
type logQuery struct {
	name  string
	paths []string
	// optional: a 404 (the route not in this build) skips it.
	optional bool
}

// queryResult is what one query measured. Times are in milliseconds.
type queryResult struct {
	Name       string  `json:"name"`
	Example    string  `json:"example_path"`
	Requests   int     `json:"requests"`
	Failures   int     `json:"failures"`
	FirstError string  `json:"first_error,omitempty"`
	Skipped    string  `json:"skipped,omitempty"`
	P50        float64 `json:"p50_ms"`
	P95        float64 `json:"p95_ms"`
	P99        float64 `json:"p99_ms"`
	Max        float64 `json:"max_ms"`
	// Total and Rows are those of the first answer of a logs query: the
	// matches it counted and the entries it returned.
	Total int64 `json:"total"`
	Rows  int   `json:"rows"`
	Bytes int   `json:"bytes"`
}

// logsReport is the whole `svcbench logs` run.
type logsReport struct {
	Schema        string        `json:"schema"`
	Entries       int64         `json:"entries"`
	Generated     bool          `json:"generated"`
	FillSeconds   float64       `json:"fill_seconds,omitempty"`
	VacuumSeconds float64       `json:"vacuum_seconds,omitempty"`
	TableBytes    int64         `json:"table_bytes"`
	Requests      int           `json:"requests_per_query"`
	Queries       []queryResult `json:"queries"`
	Failures      int           `json:"failures"`
}

// sample is one stored entry the queries ask about.
type sample struct{ requestID, keyID, userID, provider, model string }

// logQueries are the reads measured, each with n paths: the default page,
// filters by a key (entries picked at random times, so popular keys come
// up as often as an operator would look them up; and the busiest key), by
// a user, by status and by provider and model, a cursor page from a random
// depth, offset 5000, the metrics and the analytics report.
func logQueries(ctx context.Context, db *sqlstore.DB, n int) ([]logQuery, error) {
	samples, err := sampleEntries(ctx, db, n)
	if err != nil {
		return nil, err
	}
	var busiest string
	if err := db.QueryRow(ctx, `SELECT key_id FROM audit_logs GROUP BY key_id ORDER BY COUNT(*) DESC LIMIT 1`).Scan(&busiest); err != nil {
		return nil, fmt.Errorf("the busiest key: %w", err)
	}
	each := func(f func(s sample) string) []string {
		out := make([]string, len(samples))
		for i, s := range samples {
			out[i] = f(s)
		}
		return out
	}
	logs := "/api/vas/logs"
	return []logQuery{
		{name: "logs: default (newest 100 of 30 days)", paths: []string{logs}},
		{name: "logs: key_id= (keys of random entries)", paths: each(func(s sample) string { return logs + "?key_id=" + url.QueryEscape(s.keyID) })},
		{name: "logs: key_id= (the busiest key)", paths: []string{logs + "?key_id=" + url.QueryEscape(busiest)}},
		{name: "logs: user_id=", paths: each(func(s sample) string { return logs + "?user_id=" + url.QueryEscape(s.userID) })},
		{name: "logs: status=error", paths: []string{logs + "?status=error"}},
		{name: "logs: provider= & model=", paths: each(func(s sample) string {
			return logs + "?provider=" + url.QueryEscape(s.provider) + "&model=" + url.QueryEscape(s.model)
		})},
		{name: "logs: before= (cursor at a random depth)", paths: each(func(s sample) string { return logs + "?before=" + url.QueryEscape(s.requestID) })},
		{name: "logs: offset=5000", paths: []string{logs + "?offset=5000"}},
		{name: "metrics: /api/vas/metrics (30 days)", paths: []string{"/api/vas/metrics"}},
		{name: "analytics: /api/analytics?period=30d", paths: []string{"/api/analytics?period=30d"}, optional: true},
	}, nil
}

// sampleEntries picks n stored entries: the newest at or before n random
// times of the last 30 days.
func sampleEntries(ctx context.Context, db *sqlstore.DB, n int) ([]sample, error) {
	var lo, hi int64
	if err := db.QueryRow(ctx, `SELECT COALESCE(MIN(ts), 0), COALESCE(MAX(ts), 0) FROM audit_logs`).Scan(&lo, &hi); err != nil {
		return nil, err
	}
	lo = max(lo, hi-int64(30*24*time.Hour/time.Microsecond))
	rng := rand.New(rand.NewPCG(uint64(hi), 7))
	var out []sample
	for range n {
		at := lo + rng.Int64N(max(hi-lo, 1))
		var s sample
		err := db.QueryRow(ctx, `SELECT request_id, key_id, user_id, provider, model FROM audit_logs
			WHERE ts <= ? AND key_id <> '' AND user_id <> '' AND provider <> '' ORDER BY ts DESC LIMIT 1`, at).
			Scan(&s.requestID, &s.keyID, &s.userID, &s.provider, &s.model)
		if err != nil {
			return nil, fmt.Errorf("sampling entries: %w", err)
		}
		out = append(out, s)
	}
	return out, nil
}

// measureQueries runs each query warmup times unmeasured, then
// rep.Requests times, one request at a time, against base with the admin
// key.
func measureQueries(ctx context.Context, base, admin string, queries []logQuery, warmup int, rep *logsReport, progress io.Writer) {
	client := &http.Client{Timeout: time.Minute}
	for _, q := range queries {
		res := queryResult{Name: q.name, Example: q.paths[0]}
		var lat []time.Duration
		for i := range warmup + rep.Requests {
			path := q.paths[i%len(q.paths)]
			start := time.Now()
			status, body, err := getJSON(ctx, client, base+path, admin)
			took := time.Since(start)
			if status == http.StatusNotFound && q.optional {
				res.Skipped = "the route answers 404 in this build"
				break
			}
			if err == nil && status != http.StatusOK {
				err = fmt.Errorf("GET %s: status %d: %.200s", path, status, body)
			}
			if i == 0 && err == nil {
				var page struct {
					Total    int64             `json:"total"`
					Requests int64             `json:"total_requests"` // metrics
					Data     []json.RawMessage `json:"data"`
				}
				if json.Unmarshal(body, &page) == nil {
					res.Total, res.Rows = max(page.Total, page.Requests), len(page.Data)
				}
				res.Bytes = len(body)
			}
			if i < warmup {
				continue
			}
			res.Requests++
			if err != nil {
				res.Failures++
				if res.FirstError == "" {
					res.FirstError = err.Error()
				}
				continue
			}
			lat = append(lat, took)
		}
		slices.Sort(lat)
		res.P50, res.P95 = ms(percentile(lat, 50)), ms(percentile(lat, 95))
		res.P99, res.Max = ms(percentile(lat, 99)), ms(percentile(lat, 100))
		rep.Failures += res.Failures
		rep.Queries = append(rep.Queries, res)
		if res.Skipped == "" {
			fmt.Fprintf(progress, "svcbench logs: %s: p50 %s p95 %s (%d failed)\n", q.name, fmtMS(res.P50), fmtMS(res.P95), res.Failures)
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// getJSON GETs u with the admin key and returns the status and body.
func getJSON(ctx context.Context, client *http.Client, u, admin string) (int, []byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	return resp.StatusCode, body, err
}

// writeLogsTable prints the report for people.
func writeLogsTable(w io.Writer, r *logsReport) {
	how := "measured as found"
	if r.Generated {
		how = fmt.Sprintf("generated in %.0fs (%.0f entries/s), VACUUM ANALYZE %.0fs", r.FillSeconds, float64(r.Entries)/r.FillSeconds, r.VacuumSeconds)
	}
	fmt.Fprintf(w, "svcbench logs: %d entries in PostgreSQL schema %s (%s; audit_logs %s with indexes)\n",
		r.Entries, r.Schema, how, fmtBytes(r.TableBytes))
	fmt.Fprintf(w, "through svc (SERVICE_TYPE=api-server), one request at a time, %d per query; budget p95 < %.0f ms\n\n", r.Requests, logsBudget)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "query\tp50\tp95\tp99\tmax\ttotal\trows\tfailed\t\t")
	for _, q := range r.Queries {
		if q.Skipped != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t-\tskipped: %s\t\n", q.Name, q.Skipped)
			continue
		}
		verdict := "ok"
		if q.P95 >= logsBudget {
			verdict = "OVER BUDGET"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%d\t%s\t\n", q.Name, fmtMS(q.P50), fmtMS(q.P95), fmtMS(q.P99), fmtMS(q.Max), q.Total, q.Rows, q.Failures, verdict)
	}
	_ = tw.Flush()
	if r.Failures > 0 {
		for _, q := range r.Queries {
			if q.FirstError != "" {
				fmt.Fprintf(w, "FAILED: %s: %s\n", q.Name, strings.TrimSpace(q.FirstError))
			}
		}
	}
}
