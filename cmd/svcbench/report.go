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
	// Relay is the TCP relay; nil with -relay=false.
	Relay *baselineResult `json:"tcp_relay,omitempty"`
	// Baseline is the bare reverse proxy; nil with -baseline=false.
	Baseline *baselineResult `json:"baseline,omitempty"`
	Svc      phaseStats      `json:"svc"`
	AddedP50 float64         `json:"added_p50_ms"`
	AddedP99 float64         `json:"added_p99_ms"`
	// RPSRatio is svc's throughput as a percentage of the direct one.
	RPSRatio float64 `json:"rps_ratio_pct"`
	// AllocsPerRequest is svc's heap allocations per request in the measured
	// phase; negative when svc's /metrics could not be read.
	AllocsPerRequest float64 `json:"svc_allocs_per_request"`
	// MaxRSS is the largest VmRSS of svc sampled during the measured phase,
	// in bytes; 0 when svc's process is unknown.
	MaxRSS int64 `json:"svc_max_rss_bytes"`
	// CPUPerRequest (-variants) is the CPU time svc's processes used per
	// request, in µs, from the measured phase's start until the bridge had
	// written its entries (DrainMS after the phase ended), so that it holds
	// the whole cost of a request and its audit entry; -1 when unknown.
	CPUPerRequest float64 `json:"svc_cpu_us_per_request,omitempty"`
	// ProxyCPUPerRequest is CPUPerRequest of svc's first process alone:
	// the proxy's, without the bridge process of a split setup.
	ProxyCPUPerRequest float64 `json:"proxy_cpu_us_per_request,omitempty"`
	DrainMS            float64 `json:"drain_ms,omitempty"`
}

// baselineResult is a reference path's phase (the relay's, the bare reverse
// proxy's) and how it compares with the direct one, as the scenario's Added
// and RPSRatio fields do for svc.
type baselineResult struct {
	phaseStats
	AddedP50 float64 `json:"added_p50_ms"`
	AddedP99 float64 `json:"added_p99_ms"`
	RPSRatio float64 `json:"rps_ratio_pct"`
}

// report is the whole run.
type report struct {
	Requests int    `json:"requests_per_phase,omitempty"`
	Duration string `json:"duration_per_phase,omitempty"`
	// Rate is -rate: requests per second of an open load, 0 a closed loop.
	Rate       float64 `json:"rate_per_second,omitempty"`
	Warmup     int     `json:"warmup_requests"`
	Chunks     int     `json:"stream_chunks"`
	ChunkDelay string  `json:"chunk_delay"`
	Gateway    string  `json:"gateway"`
	// Where the parties run: the client always in svcbench's process.
	Upstream      string `json:"fake_upstream"`
	FakeInProcess bool   `json:"fake_in_process"`
	Relay         string `json:"tcp_relay,omitempty"`     // its own process; "" with -relay=false
	ReverseProxy  string `json:"reverse_proxy,omitempty"` // its own process; "" with -baseline=false
	// ReverseProxyIdle is its MaxIdleConnsPerHost; 0: http.DefaultTransport's.
	ReverseProxyIdle int  `json:"reverse_proxy_max_idle_per_host,omitempty"`
	GatewayStarted   bool `json:"gateway_started"` // svc is svcbench's subprocess, not -gateway
	// CPUProfile is the file -cpuprofile-svc wrote, during CPUProfiled's
	// svc phase; "" when none was taken.
	CPUProfile   string           `json:"svc_cpu_profile,omitempty"`
	CPUProfiled  string           `json:"svc_cpu_profiled_scenario,omitempty"`
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
	sc.AddedP50, sc.AddedP99, sc.RPSRatio = added(sc.Direct, sc.Svc)
}

// added is what a gateway's phase g adds to the direct phase d at p50 and p99,
// and its throughput as a percentage of d's.
func added(d, g phaseStats) (p50, p99, ratio float64) {
	if d.RPS > 0 {
		ratio = g.RPS / d.RPS * 100
	}
	return g.P50 - d.P50, g.P99 - d.P99, ratio
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

// writeTable prints the report for people: for each scenario a row per path,
// direct first, then the bare reverse proxy, then svc.
func writeTable(w io.Writer, r *report) error {
	writeSetup(w, r)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tpath\tp50\tp99\tadded p50\tadded p99\trps\tratio\tallocs/req\tmax RSS\t")
	for _, sc := range r.Scenarios {
		writeScenarioRows(tw, sc)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	writeSummary(w, r)
	return nil
}

// writeSetup prints the table's heading: how each phase was loaded and where
// each party runs, then a blank line.
func writeSetup(w io.Writer, r *report) {
	per := fmt.Sprintf("%d requests per phase", r.Requests)
	if r.Duration != "" {
		per = r.Duration + " per phase"
	}
	per += openLoadNote(r.Rate)
	fake, svc := "own process", "own process, started by svcbench"
	if r.FakeInProcess {
		fake = "svcbench's process (-fake-inprocess)"
	}
	if !r.GatewayStarted {
		svc = "already running (-gateway)"
	}
	fmt.Fprintf(w, "svcbench: %s after %d warm-up requests, sent from svcbench's process to\n", per, r.Warmup)
	fmt.Fprintf(w, "  fake upstream  %s, %s, streams %d chunks %s apart\n", fake, r.Upstream, r.Chunks, r.ChunkDelay)
	if r.Relay != "" {
		fmt.Fprintf(w, "  tcp-relay      own process, %s: bytes copied both ways, unread\n", r.Relay)
	}
	if r.ReverseProxy != "" {
		tr := "default transport (2 idle conns per host)"
		if r.ReverseProxyIdle > 0 {
			tr = fmt.Sprintf("default transport but %d idle conns per host", r.ReverseProxyIdle)
		}
		fmt.Fprintf(w, "  reverse-proxy  own process, %s: httputil.ReverseProxy, %s\n", r.ReverseProxy, tr)
	}
	fmt.Fprintf(w, "  svc            %s, %s\n", svc, r.Gateway)
	if r.CPUProfile != "" {
		fmt.Fprintf(w, "  svc's CPU profile of %s: %s\n", r.CPUProfiled, r.CPUProfile)
	}
	fmt.Fprintln(w)
}

// pathRow is one path's row of a scenario in the table.
type pathRow struct {
	path               string
	stats              phaseStats
	addedP50, addedP99 float64
	ratio              float64
	svcCells           []string // svc's row only: allocs/req and max RSS
}

// scenarioRows are a scenario's rows: direct, the reference paths, svc.
func scenarioRows(sc scenarioResult) []pathRow {
	rows := []pathRow{{path: "direct", stats: sc.Direct}}
	if b := sc.Relay; b != nil {
		rows = append(rows, pathRow{"tcp-relay", b.phaseStats, b.AddedP50, b.AddedP99, b.RPSRatio, nil})
	}
	if b := sc.Baseline; b != nil {
		rows = append(rows, pathRow{"reverse-proxy", b.phaseStats, b.AddedP50, b.AddedP99, b.RPSRatio, nil})
	}
	allocs := "-"
	if sc.AllocsPerRequest >= 0 {
		allocs = fmt.Sprintf("%.0f", sc.AllocsPerRequest)
	}
	return append(rows, pathRow{"svc", sc.Svc, sc.AddedP50, sc.AddedP99, sc.RPSRatio, []string{allocs, fmtBytes(sc.MaxRSS)}})
}

// writeScenarioRows prints a scenario's rows to the table, its name on the
// first only.
func writeScenarioRows(tw io.Writer, sc scenarioResult) {
	name := fmt.Sprintf("%s c=%d", sc.Mode, sc.Concurrency)
	directOK := sc.Direct.Requests > sc.Direct.Failures
	for _, row := range scenarioRows(sc) {
		fmt.Fprintln(tw, strings.Join(row.cells(name, directOK), "\t")+"\t")
		name = ""
	}
}

// cells are the row's ten cells, under the scenario's name ("" but on its
// first row); the added latencies are "-" unless both the path and direct
// (directOK) had requests that succeeded.
func (p pathRow) cells(name string, directOK bool) []string {
	s := p.stats
	ok := s.Requests > s.Failures
	cells := append([]string{name, p.path}, latencyCells(ok, s)...)
	switch {
	case p.path == "direct":
		cells = append(cells, "", "")
	case ok && directOK:
		cells = append(cells, fmtAdded(p.addedP50), fmtAdded(p.addedP99))
	default:
		cells = append(cells, "-", "-")
	}
	cells = append(cells, fmt.Sprintf("%.0f", s.RPS))
	if p.path == "direct" {
		cells = append(cells, "")
	} else {
		cells = append(cells, fmt.Sprintf("%.0f%%", p.ratio))
	}
	cells = append(cells, p.svcCells...)
	for len(cells) < 10 {
		cells = append(cells, "")
	}
	return cells
}

// writeSummary prints what follows the table: the streams' time to first
// byte, svc's peak RSS and the failures.
func writeSummary(w io.Writer, r *report) {
	var ttfb []string
	for _, sc := range r.Scenarios {
		if sc.Mode == modeStream {
			ttfb = append(ttfb, streamTTFB(sc))
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
}

// streamTTFB is a stream scenario's time to first byte on each path.
func streamTTFB(sc scenarioResult) string {
	proxy := ""
	if b := sc.Relay; b != nil {
		proxy = fmt.Sprintf(", tcp-relay %s/%s", fmtMS(b.TTFBP50), fmtMS(b.TTFBP99))
	}
	if b := sc.Baseline; b != nil {
		proxy += fmt.Sprintf(", reverse-proxy %s/%s", fmtMS(b.TTFBP50), fmtMS(b.TTFBP99))
	}
	return fmt.Sprintf("c=%d direct %s/%s%s, via svc %s/%s",
		sc.Concurrency, fmtMS(sc.Direct.TTFBP50), fmtMS(sc.Direct.TTFBP99), proxy, fmtMS(sc.Svc.TTFBP50), fmtMS(sc.Svc.TTFBP99))
}

func writeJSON(w io.Writer, r any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// openLoadNote says how a run with -rate loaded svc; "" for a closed loop.
func openLoadNote(rate float64) string {
	if rate <= 0 {
		return ""
	}
	return fmt.Sprintf(", an open load of %.0f requests/s (at most c in flight, each timed from when it was due)", rate)
}
