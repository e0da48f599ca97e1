package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"
)

// phaseStats summarises one measured phase. Times are in milliseconds.
type phaseStats struct {
	Requests   int     `json:"requests"`
	Failures   int     `json:"failures"`
	FirstError string  `json:"first_error,omitempty"`
	Seconds    float64 `json:"seconds"`
	RPS        float64 `json:"rps"`
	P50        float64 `json:"p50_ms"`
	P90        float64 `json:"p90_ms"`
	P99        float64 `json:"p99_ms"`
	Max        float64 `json:"max_ms"`
	Mean       float64 `json:"mean_ms"`
	TTFBP50    float64 `json:"ttfb_p50_ms,omitempty"`
	TTFBP99    float64 `json:"ttfb_p99_ms,omitempty"`
}

// scenarioResult compares one scenario direct and through svc.
type scenarioResult struct {
	Mode        string     `json:"mode"` // "non-stream" or "stream"
	Concurrency int        `json:"concurrency"`
	Direct      phaseStats `json:"direct"`
	Svc         phaseStats `json:"svc"`
	AddedP50    float64    `json:"added_p50_ms"`
	AddedP99    float64    `json:"added_p99_ms"`
	// RPSRatio is svc's throughput as a percentage of the direct one.
	RPSRatio float64 `json:"rps_ratio_pct"`
	// AllocsPerRequest is svc's heap allocations per request in the measured
	// phase; negative when svc's /metrics could not be read.
	AllocsPerRequest float64 `json:"svc_allocs_per_request"`
	// MaxRSS is the largest VmRSS of svc sampled during the measured phase,
	// in bytes; 0 when svc's process is unknown.
	MaxRSS int64 `json:"svc_max_rss_bytes"`
}

// report is the whole run.
type report struct {
	Requests     int              `json:"requests_per_phase,omitempty"`
	Duration     string           `json:"duration_per_phase,omitempty"`
	Warmup       int              `json:"warmup_requests"`
	Chunks       int              `json:"stream_chunks"`
	ChunkDelay   string           `json:"chunk_delay"`
	Gateway      string           `json:"gateway"`
	Scenarios    []scenarioResult `json:"scenarios"`
	PeakRSS      int64            `json:"svc_peak_rss_bytes"` // VmHWM at the end; 0 when unknown
	Failures     int              `json:"failures"`
	FirstFailure string           `json:"first_failure,omitempty"`
}

// percentile is the nearest-rank p-th percentile (0 < p ≤ 100) of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p/100*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func stats(r phaseResult) phaseStats {
	s := phaseStats{
		Requests: r.requests,
		Failures: r.failures,
		Seconds:  r.elapsed.Seconds(),
		P50:      ms(percentile(r.latency, 50)),
		P90:      ms(percentile(r.latency, 90)),
		P99:      ms(percentile(r.latency, 99)),
		Max:      ms(percentile(r.latency, 100)),
		TTFBP50:  ms(percentile(r.ttfb, 50)),
		TTFBP99:  ms(percentile(r.ttfb, 99)),
	}
	if r.firstError != nil {
		s.FirstError = r.firstError.Error()
	}
	if r.elapsed > 0 {
		s.RPS = float64(len(r.latency)) / r.elapsed.Seconds()
	}
	if len(r.latency) > 0 {
		var sum time.Duration
		for _, d := range r.latency {
			sum += d
		}
		s.Mean = ms(sum / time.Duration(len(r.latency)))
	}
	return s
}

// compare fills in the differences between the direct and the svc phase.
func compare(sc *scenarioResult) {
	sc.AddedP50 = sc.Svc.P50 - sc.Direct.P50
	sc.AddedP99 = sc.Svc.P99 - sc.Direct.P99
	if sc.Direct.RPS > 0 {
		sc.RPSRatio = sc.Svc.RPS / sc.Direct.RPS * 100
	}
}

// fmtMS prints milliseconds compactly: µs below 1 ms.
func fmtMS(v float64) string {
	a := math.Abs(v)
	switch {
	case a < 1:
		return fmt.Sprintf("%.0fµs", v*1000)
	case a < 10:
		return fmt.Sprintf("%.2fms", v)
	case a < 100:
		return fmt.Sprintf("%.1fms", v)
	}
	return fmt.Sprintf("%.0fms", v)
}

func fmtAdded(v float64) string {
	if v >= 0 {
		return "+" + fmtMS(v)
	}
	return fmtMS(v)
}

func fmtBytes(b int64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f MiB", float64(b)/(1<<20))
}

// latencyCells are the p50 and p99 cells of a phase, "-" when nothing in it
// succeeded.
func latencyCells(ok bool, s phaseStats) []string {
	if !ok {
		return []string{"-", "-"}
	}
	return []string{fmtMS(s.P50), fmtMS(s.P99)}
}

// writeTable prints the report for people.
func writeTable(w io.Writer, r *report) error {
	per := fmt.Sprintf("%d requests per phase", r.Requests)
	if r.Duration != "" {
		per = r.Duration + " per phase"
	}
	fmt.Fprintf(w, "svcbench: %s after %d warm-up requests; fake upstream streams %d chunks %s apart; svc: %s\n\n",
		per, r.Warmup, r.Chunks, r.ChunkDelay, r.Gateway)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tdirect p50\tp99\tvia svc p50\tp99\tadded p50\tp99\trps direct\trps svc\tratio\tallocs/req\tmax RSS\t")
	for _, sc := range r.Scenarios {
		cells := []string{fmt.Sprintf("%s c=%d", sc.Mode, sc.Concurrency)}
		directOK, svcOK := sc.Direct.Requests > sc.Direct.Failures, sc.Svc.Requests > sc.Svc.Failures
		cells = append(cells, latencyCells(directOK, sc.Direct)...)
		cells = append(cells, latencyCells(svcOK, sc.Svc)...)
		if directOK && svcOK {
			cells = append(cells, fmtAdded(sc.AddedP50), fmtAdded(sc.AddedP99))
		} else {
			cells = append(cells, "-", "-")
		}
		cells = append(cells, fmt.Sprintf("%.0f", sc.Direct.RPS), fmt.Sprintf("%.0f", sc.Svc.RPS), fmt.Sprintf("%.0f%%", sc.RPSRatio))
		if sc.AllocsPerRequest >= 0 {
			cells = append(cells, fmt.Sprintf("%.0f", sc.AllocsPerRequest))
		} else {
			cells = append(cells, "-")
		}
		cells = append(cells, fmtBytes(sc.MaxRSS))
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	var ttfb []string
	for _, sc := range r.Scenarios {
		if sc.Mode == modeStream {
			ttfb = append(ttfb, fmt.Sprintf("c=%d direct %s/%s, via svc %s/%s",
				sc.Concurrency, fmtMS(sc.Direct.TTFBP50), fmtMS(sc.Direct.TTFBP99), fmtMS(sc.Svc.TTFBP50), fmtMS(sc.Svc.TTFBP99)))
		}
	}
	if len(ttfb) > 0 {
		fmt.Fprintf(w, "\nstream time to first byte (p50/p99): %s\n", strings.Join(ttfb, "; "))
	}
	fmt.Fprintf(w, "svc peak RSS (VmHWM): %s\n", fmtBytes(r.PeakRSS))
	if r.Failures > 0 {
		fmt.Fprintf(w, "FAILED requests: %d; first: %s\n", r.Failures, r.FirstFailure)
	} else {
		fmt.Fprintln(w, "failed requests: 0")
	}
	return nil
}

func writeJSON(w io.Writer, r *report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}
