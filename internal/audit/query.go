package audit

import (
	"encoding/json"
	"net/url"
	"strconv"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
)

// Limits of GET /api/vas/logs.
const (
	DefaultLimit = 100
	MaxLimit     = 1000
	DefaultDays  = 30
	MaxDays      = 365
)

// Page is the answer of GET /api/vas/logs.
type Page struct {
	Success bool              `json:"success"`
	Total   int64             `json:"total"`
	Limit   int               `json:"limit"`
	Offset  int               `json:"offset"`
	Data    []json.RawMessage `json:"data"`
	// NextBefore is the cursor of the next page (before=), when the page
	// is full.
	NextBefore string `json:"next_before,omitempty"`
}

// ParseQuery reads GET /api/vas/logs's parameters: limit, offset,
// provider, model, key_id, user_id, conversation_id, status (an HTTP status
// 100–599, or success or error), the window (from and to, RFC 3339; else
// days back from now) and the cursor before (a request id, returned for
// Reader.Page to resolve). A value out of range or malformed is
// InvalidRequest naming the parameter.
func ParseQuery(q url.Values, now time.Time) (Query, string, error) {
	out := Query{Provider: q.Get("provider"), Model: q.Get("model"), KeyID: q.Get("key_id"),
		UserID: q.Get("user_id"), ConversationID: q.Get("conversation_id")}
	var err error
	if out.Limit, err = jsonbody.QueryInt(q, "limit", DefaultLimit, 1, MaxLimit); err != nil {
		return Query{}, "", err
	}
	if out.Offset, err = jsonbody.QueryInt(q, "offset", 0, 0, 1<<31-1); err != nil {
		return Query{}, "", err
	}
	if out.Status, out.Outcome, err = parseStatus(q.Get("status")); err != nil {
		return Query{}, "", err
	}
	if out.Since, out.Until, err = parseWindow(q, now); err != nil {
		return Query{}, "", err
	}
	before := q.Get("before")
	if q.Has("before") && (before == "" || len(before) > 200) {
		return Query{}, "", apierr.BadParam("before", "before must be the request_id of an entry")
	}
	return out, before, nil
}

// parseStatus reads the status filter.
func parseStatus(v string) (int, string, error) {
	switch v {
	case "":
		return 0, "", nil
	case OutcomeSuccess, OutcomeError:
		return 0, v, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 100 || n > 599 {
		return 0, "", apierr.BadParam("status", "status must be an HTTP status (100-599), success or error")
	}
	return n, "", nil
}

// parseWindow reads from and to (RFC 3339), else days (default 30, 1–365)
// back from now.
func parseWindow(q url.Values, now time.Time) (since, until time.Time, err error) {
	for _, p := range []struct {
		name string
		t    *time.Time
	}{{"from", &since}, {"to", &until}} {
		v := q.Get(p.name)
		if v == "" {
			if q.Has(p.name) {
				return time.Time{}, time.Time{}, apierr.BadParam(p.name, "%s must be an RFC 3339 time", p.name)
			}
			continue
		}
		t, perr := time.Parse(time.RFC3339Nano, v)
		if perr != nil || t.Year() < 1970 || t.Year() > 9999 {
			return time.Time{}, time.Time{}, apierr.BadParam(p.name, "%s must be an RFC 3339 time, such as 2026-01-02T15:04:05Z", p.name)
		}
		*p.t = t.UTC()
	}
	if !since.IsZero() || !until.IsZero() {
		if q.Has("days") {
			return time.Time{}, time.Time{}, apierr.BadParam("days", "days cannot be combined with from or to")
		}
		if !since.IsZero() && !until.IsZero() && !until.After(since) {
			return time.Time{}, time.Time{}, apierr.BadParam("to", "to must be after from")
		}
		return since, until, nil
	}
	since, err = DaysSince(q, now)
	return since, time.Time{}, err
}

// DaysSince reads the days parameter (default 30) as a start time.
func DaysSince(q url.Values, now time.Time) (time.Time, error) {
	days, err := jsonbody.QueryInt(q, "days", DefaultDays, 1, MaxDays)
	if err != nil {
		return time.Time{}, err
	}
	return now.UTC().Add(-time.Duration(days) * 24 * time.Hour), nil
}

// MetricsSummary is the answer of GET /api/vas/metrics.
type MetricsSummary struct {
	TotalRequests int64    `json:"total_requests"`
	SuccessRate   float64  `json:"success_rate"`
	AvgLatencyMS  float64  `json:"avg_latency_ms"`
	TotalTokens   int64    `json:"total_tokens"`
	TotalCostUSD  float64  `json:"total_cost_usd"`
	Providers     []string `json:"providers"`
	Models        []string `json:"models"`
}

// summaryOf is the answer for an aggregate.
func summaryOf(sum Summary) MetricsSummary {
	out := MetricsSummary{
		TotalRequests: sum.TotalRequests,
		AvgLatencyMS:  sum.AvgLatencyMS,
		TotalTokens:   sum.TotalTokens,
		TotalCostUSD:  sum.TotalCost,
		Providers:     sum.Providers,
		Models:        sum.Models,
	}
	if out.Providers == nil {
		out.Providers = []string{}
	}
	if out.Models == nil {
		out.Models = []string{}
	}
	if sum.TotalRequests > 0 {
		out.SuccessRate = float64(sum.Successes) * 100 / float64(sum.TotalRequests)
	}
	return out
}
