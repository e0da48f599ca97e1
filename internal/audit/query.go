package audit

import (
	"context"
	"encoding/json"
	"net/url"
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
}

// ParseQuery reads limit, offset, provider, model and days from q, answering
// InvalidRequest for values out of range.
func ParseQuery(q url.Values, now time.Time) (Query, error) {
	out := Query{Limit: DefaultLimit, Provider: q.Get("provider"), Model: q.Get("model")}
	var err error
	if out.Limit, err = jsonbody.QueryInt(q, "limit", DefaultLimit, 1, MaxLimit); err != nil {
		return Query{}, err
	}
	if out.Offset, err = jsonbody.QueryInt(q, "offset", 0, 0, 1<<31-1); err != nil {
		return Query{}, err
	}
	days, err := jsonbody.QueryInt(q, "days", DefaultDays, 1, MaxDays)
	if err != nil {
		return Query{}, err
	}
	out.Since = now.UTC().Add(-time.Duration(days) * 24 * time.Hour)
	return out, nil
}

// DaysSince reads the days parameter (default 30) as a start time.
func DaysSince(q url.Values, now time.Time) (time.Time, error) {
	days, err := jsonbody.QueryInt(q, "days", DefaultDays, 1, MaxDays)
	if err != nil {
		return time.Time{}, err
	}
	return now.UTC().Add(-time.Duration(days) * 24 * time.Hour), nil
}

// Logs answers a query.
func Logs(ctx context.Context, s Store, q Query) (Page, error) {
	recs, total, err := s.QueryLogs(ctx, q)
	if err != nil {
		return Page{}, apierr.Wrap(apierr.Internal, "store_error", "could not read the logs", err)
	}
	p := Page{Success: true, Total: total, Limit: q.Limit, Offset: q.Offset, Data: make([]json.RawMessage, len(recs))}
	for i, r := range recs {
		p.Data[i] = r.Entry
	}
	return p, nil
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

// Summarize answers GET /api/vas/metrics for records since since.
func Summarize(ctx context.Context, s Store, since time.Time) (MetricsSummary, error) {
	sum, err := s.SummarizeLogs(ctx, since)
	if err != nil {
		return MetricsSummary{}, apierr.Wrap(apierr.Internal, "store_error", "could not summarise the logs", err)
	}
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
	return out, nil
}
