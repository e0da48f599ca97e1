package compliance

import (
	"context"
	"math"
	"slices"
	"strings"
	"time"
)

// Baseline is an organisation's behavioural baseline: its scans,
// violations by type, risk levels and actions per hour over the baseline
// period, and how the current window departs from it.
type Baseline struct {
	OrgID          string    `json:"org_id"`
	Window         Period    `json:"window"`
	BaselinePeriod Period    `json:"baseline_period"`
	Hours          []Hour    `json:"hours"`
	Metrics        []Measure `json:"metrics"`
	// Sufficient is false while fewer than MinBaselineHours hours of the
	// baseline period saw a scan: no deviation is flagged then.
	Sufficient       bool `json:"sufficient_history"`
	DeviationFlagged bool `json:"deviation_flagged"`
}

// Period is a time range, from inclusive, to exclusive.
type Period struct {
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
}

// Hour is one hour's counts: "scans", "violations", "level:<l>",
// "action:<a>", "type:<t>".
type Hour struct {
	Start  time.Time        `json:"start"`
	Counts map[string]int64 `json:"counts"`
}

// Measure compares one metric's rate per hour in the window with the
// baseline period's.
type Measure struct {
	Metric         string  `json:"metric"`
	BaselineMean   float64 `json:"baseline_mean_per_hour"`
	BaselineStddev float64 `json:"baseline_stddev_per_hour"`
	Current        float64 `json:"current_per_hour"`
	Z              float64 `json:"z_score"`
	Deviation      bool    `json:"deviation"`
}

// Baseline settings.
const (
	MinBaselineHours = 24
	// DeviationZ is the |z| from which a metric's window departs from
	// its baseline.
	DeviationZ = 3.0
)

// Baseline computes org's baseline: the window is the last windowHours
// complete hours before now, the baseline period the days before it.
func (r *Records) Baseline(ctx context.Context, org string, now time.Time, windowHours, days int) (Baseline, error) {
	end := now.Truncate(time.Hour)
	wStart := end.Add(-time.Duration(windowHours) * time.Hour)
	bStart := wStart.Add(-time.Duration(days) * 24 * time.Hour)
	out := Baseline{OrgID: org, Window: Period{wStart.UTC(), end.UTC()}, BaselinePeriod: Period{bStart.UTC(), wStart.UTC()}}
	rows, err := r.db.Query(ctx, `SELECT hour, metric, n FROM compliance_baseline WHERE org_id = ? AND hour >= ? AND hour < ? ORDER BY hour`,
		org, bStart.Unix(), end.Unix())
	if err != nil {
		return out, err
	}
	defer rows.Close()
	byHour := map[int64]map[string]int64{}
	for rows.Next() {
		var (
			hour, n int64
			metric  string
		)
		if err := rows.Scan(&hour, &metric, &n); err != nil {
			return out, err
		}
		if byHour[hour] == nil {
			byHour[hour] = map[string]int64{}
		}
		byHour[hour][metric] += n
	}
	if err := rows.Err(); err != nil {
		return out, err
	}
	out.Hours, out.Metrics, out.Sufficient = measure(byHour, bStart, wStart, end)
	for _, m := range out.Metrics {
		out.DeviationFlagged = out.DeviationFlagged || m.Deviation
	}
	return out, nil
}

// measure turns hourly counts into the series and the comparison.
func measure(byHour map[int64]map[string]int64, bStart, wStart, end time.Time) ([]Hour, []Measure, bool) {
	metrics := map[string]bool{"scans": true, "violations": true}
	hours := []Hour{}
	for h := bStart.Unix(); h < end.Unix(); h += 3600 {
		if c := byHour[h]; c != nil {
			hours = append(hours, Hour{Start: time.Unix(h, 0).UTC(), Counts: c})
			for m := range c {
				metrics[m] = true
			}
		}
	}
	busy := 0
	for h := bStart.Unix(); h < wStart.Unix(); h += 3600 {
		if byHour[h]["scans"] > 0 {
			busy++
		}
	}
	sufficient := busy >= MinBaselineHours
	names := make([]string, 0, len(metrics))
	for m := range metrics {
		names = append(names, m)
	}
	slices.SortFunc(names, func(a, b string) int {
		// scans and violations first, then by name
		ra, rb := rank(a), rank(b)
		if ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	out := make([]Measure, 0, len(names))
	for _, m := range names {
		mean, sd := stats(byHour, m, bStart.Unix(), wStart.Unix())
		cur, _ := stats(byHour, m, wStart.Unix(), end.Unix())
		n := float64(end.Unix()-wStart.Unix()) / 3600
		// The window's mean over n hours varies as sd/√n; a floor keeps a
		// flat baseline from flagging one extra scan.
		se := math.Max(sd/math.Sqrt(n), math.Sqrt(math.Max(mean, 1)/n))
		z := (cur - mean) / se
		out = append(out, Measure{Metric: m, BaselineMean: Round3(mean), BaselineStddev: Round3(sd),
			Current: Round3(cur), Z: Round3(z), Deviation: sufficient && math.Abs(z) >= DeviationZ})
	}
	return hours, out, sufficient
}

func rank(m string) int {
	switch {
	case m == "scans":
		return 0
	case m == "violations":
		return 1
	}
	return 2
}

// stats is the mean and standard deviation of metric's hourly counts over
// [from, to), hours without a row counting zero.
func stats(byHour map[int64]map[string]int64, metric string, from, to int64) (mean, sd float64) {
	n := float64((to - from) / 3600)
	if n <= 0 {
		return 0, 0
	}
	var sum, sq float64
	for h := from; h < to; h += 3600 {
		v := float64(byHour[h][metric])
		sum += v
		sq += v * v
	}
	mean = sum / n
	return mean, math.Sqrt(math.Max(0, sq/n-mean*mean))
}
