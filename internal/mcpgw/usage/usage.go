package usage

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/identity"
)

// Bounds of GET /api/mcp/usage.
const (
	// MaxRows bounds the rows of a report; past it the newest are kept
	// and Truncated is set.
	MaxRows = 10000
	// MaxHourWindow bounds the window of a report per hour.
	MaxHourWindow = 31 * 24 * time.Hour
)

// Periods of a report's rows.
const (
	PeriodHour = "hour"
	PeriodDay  = "day"
	PeriodAll  = "all" // one row per server and tool for the whole window
)

// Report is the answer of GET /api/mcp/usage:
//
//	{success, period, from, to, truncated,
//	 totals{calls, errors, cost_usd},
//	 data:[{period_start, server_id, tool, calls, errors, error_rate, cost_usd, avg_latency_ms}]}
//
// from and to are the window after widening to whole periods (RFC 3339,
// UTC). Rows are newest period first, then by server and tool; only
// periods with calls have rows. An error is a call answered with a status
// >= 400 or ending in a tool error (isError). Totals sum the rows listed
// (all of them unless truncated).
type Report struct {
	Success   bool      `json:"success"`
	Period    string    `json:"period"`
	From      time.Time `json:"from"`
	To        time.Time `json:"to"`
	Truncated bool      `json:"truncated"`
	Totals    Totals    `json:"totals"`
	Data      []Row     `json:"data"`
}

// Totals sum a report's rows.
type Totals struct {
	Calls   int64   `json:"calls"`
	Errors  int64   `json:"errors"`
	CostUSD float64 `json:"cost_usd"`
}

// Row is one server's tool in one period.
type Row struct {
	PeriodStart  time.Time `json:"period_start"`
	ServerID     string    `json:"server_id"`
	Tool         string    `json:"tool"`
	Calls        int64     `json:"calls"`
	Errors       int64     `json:"errors"`
	ErrorRate    float64   `json:"error_rate"` // 0–1
	CostUSD      float64   `json:"cost_usd"`
	AvgLatencyMS float64   `json:"avg_latency_ms"`
}

// UsageHandler answers GET /api/mcp/usage with a Report.
func (a *API) UsageHandler() http.Handler { return a.serve(a.usage) }

func (a *API) usage(ctx context.Context, params url.Values, p *identity.Principal) (any, error) {
	q, _, err := a.query(params, p)
	if err != nil {
		return nil, err
	}
	period, bucket, err := parsePeriod(params.Get("period"), params.Has("period"))
	if err != nil {
		return nil, err
	}
	from, to, err := a.window(q, bucket, period)
	if err != nil {
		return nil, err
	}
	q.Since, q.Until, q.Limit, q.Offset = from, to, MaxRows+1, 0
	gs, err := a.src.Groups(ctx, q, bucket)
	if err != nil {
		return nil, err
	}
	rep := Report{Success: true, Period: period, From: from, To: to, Data: make([]Row, 0, min(len(gs), MaxRows))}
	if len(gs) > MaxRows {
		gs, rep.Truncated = gs[:MaxRows], true
	}
	for _, g := range gs {
		row := rowOf(g, from)
		rep.Data = append(rep.Data, row)
		rep.Totals.Calls += row.Calls
		rep.Totals.Errors += row.Errors
		rep.Totals.CostUSD += row.CostUSD
	}
	return rep, nil
}

// parsePeriod reads the period parameter: its name and bucket length (0
// for all).
func parsePeriod(v string, given bool) (string, time.Duration, error) {
	switch {
	case !given:
		return PeriodDay, 24 * time.Hour, nil
	case v == PeriodHour:
		return v, time.Hour, nil
	case v == PeriodDay:
		return v, 24 * time.Hour, nil
	case v == PeriodAll:
		return v, 0, nil
	}
	return "", 0, apierr.BadParam("period", "period must be hour, day or all")
}

// window is the report's window: q's, from the earliest day audit's
// parameters allow when it has no start, to now when it has no end, and
// widened to whole buckets; a window per hour longer than MaxHourWindow
// (before widening) is refused.
func (a *API) window(q audit.Query, bucket time.Duration, period string) (time.Time, time.Time, error) {
	from, to := q.Since, q.Until
	if to.IsZero() {
		to = a.o.Now().UTC()
	}
	if from.IsZero() {
		from = to.Add(-audit.MaxDays * 24 * time.Hour)
	}
	if period == PeriodHour && to.Sub(from) > MaxHourWindow {
		return time.Time{}, time.Time{}, apierr.BadParam("period",
			"period=hour covers at most %d days: narrow the window (days, from, to) or use period=day", int(MaxHourWindow.Hours()/24))
	}
	if bucket > 0 {
		// Buckets are aligned on the Unix epoch, as audit groups them.
		from = time.UnixMicro(floorTo(from.UnixMicro(), bucket.Microseconds())).UTC()
		if c := floorTo(to.UnixMicro(), bucket.Microseconds()); c != to.UnixMicro() {
			to = time.UnixMicro(c + bucket.Microseconds()).UTC()
		}
	}
	return from, to, nil
}

// floorTo is us rounded down to a multiple of n (n > 0).
func floorTo(us, n int64) int64 {
	r := us % n
	if r < 0 {
		r += n
	}
	return us - r
}

// rowOf is the row of a group; from is the period start of a report over
// the whole window.
func rowOf(g audit.Group, from time.Time) Row {
	row := Row{PeriodStart: g.Bucket, ServerID: strings.TrimPrefix(g.Provider, ProviderPrefix), Tool: g.Model,
		Calls: g.Requests, Errors: g.Errors, CostUSD: g.Cost}
	if row.PeriodStart.IsZero() {
		row.PeriodStart = from
	}
	if g.Requests > 0 {
		row.ErrorRate = float64(g.Errors) / float64(g.Requests)
		row.AvgLatencyMS = float64(g.LatencySumMS) / float64(g.Requests)
	}
	return row
}
