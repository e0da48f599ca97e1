package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// mcpReport is a whole `svcbench mcp` run. Times are in milliseconds.
type mcpReport struct {
	Started string `json:"started"`
	// LoadStart and LoadEnd are /proc/loadavg's averages (1, 5 and 15
	// minutes) before and after: the machine may be shared.
	LoadStart string   `json:"load_average_start"`
	LoadEnd   string   `json:"load_average_end"`
	Calls     int      `json:"calls_per_path"`
	Rounds    int      `json:"rounds"`
	Warmup    int      `json:"warmup_calls_per_path"`
	Upstream  string   `json:"fake_mcp_server"`
	Gateway   string   `json:"svc_endpoint"`
	Paths     []string `json:"paths"`
	// UpstreamCalls is what reached each tool of the fake during the run
	// (warm-up included); nil when its /stats could not be read.
	UpstreamCalls map[string]int64 `json:"upstream_calls,omitempty"`
	CPUProfile    string           `json:"svc_cpu_profile,omitempty"`
	CPUProfiled   string           `json:"svc_cpu_profiled,omitempty"`
	Scenarios     []mcpScenario    `json:"scenarios"`
	PeakRSS       int64            `json:"svc_peak_rss_bytes"`
	Failures      int              `json:"failures"`
	FirstFailure  string           `json:"first_failure,omitempty"`
}

// mcpScenario is one concurrency: the direct path and the others compared
// with it.
type mcpScenario struct {
	Concurrency int        `json:"concurrency"`
	Direct      phaseStats `json:"direct"`
	// DirectCPUPerCall is the fake server's CPU time per direct call, in
	// µs (10 ms ticks over the phases); -1 when unknown.
	DirectCPUPerCall float64         `json:"direct_fake_cpu_us_per_call"`
	Paths            []mcpPathResult `json:"paths"`
	Failures         int             `json:"failures"` // warm-up included
	FirstFailure     string          `json:"first_failure,omitempty"`
}

// mcpPathResult is a path through svc and what it adds to direct.
type mcpPathResult struct {
	Path string `json:"path"`
	phaseStats
	AddedP50 float64 `json:"added_p50_ms"`
	AddedP99 float64 `json:"added_p99_ms"`
	RPSRatio float64 `json:"rps_ratio_pct"`
	// AddedP50Rounds is the path's p50 minus direct's in each round.
	AddedP50Rounds []float64 `json:"added_p50_ms_by_round"`
	// AllocsPerCall is svc's heap allocations per call in the path's
	// phases; -1 when svc's /metrics could not be read.
	AllocsPerCall float64 `json:"svc_allocs_per_call"`
	// CPUPerCall is svc's CPU time per call of the path, in µs; -1 when
	// unknown.
	CPUPerCall float64 `json:"svc_cpu_us_per_call"`
}

func (r *mcpReport) add(sc *mcpScenario) {
	r.Scenarios = append(r.Scenarios, *sc)
	r.Failures += sc.Failures
	if r.FirstFailure == "" {
		r.FirstFailure = sc.FirstFailure
	}
}

// summary is the scenario in one line, for progress.
func (sc *mcpScenario) summary() string {
	s := fmt.Sprintf("c=%d: direct p50 %s", sc.Concurrency, fmtMS(sc.Direct.P50))
	for _, p := range sc.Paths {
		s += fmt.Sprintf(", %s p50 %s (%s)", p.Path, fmtMS(p.P50), fmtAdded(p.AddedP50))
	}
	return s + fmt.Sprintf(", %d failed", sc.Failures)
}

// mcpPathNotes say what each path is, for the table's head.
var mcpPathNotes = map[string]string{
	"direct":     "SDK session → fake server, tool echo (arguments differ on every call)",
	"svc":        "SDK session → svc /" + mcpServerID + "/mcp → svc's upstream session → fake, tool echo",
	"svc-v1":     "POST svc /mcp/v1/" + mcpServerID + "/tools/call {name, arguments}, plain JSON, tool echo",
	"svc-cached": "SDK session → svc, read-only tool lookup, same arguments: answered by svc's tool cache",
}

// writeMCPTable prints the report for people: for each concurrency a row
// per path, direct first.
func writeMCPTable(w io.Writer, r *mcpReport) error {
	fmt.Fprintf(w, "svcbench mcp (%s): tools/call, %d calls per path per concurrency in %d rounds (order rotating), after %d warm-up calls;\n",
		r.Started, r.Calls, r.Rounds, r.Warmup)
	fmt.Fprintln(w, "one Go SDK client session per worker and path, held for the whole run; each party its own process")
	fmt.Fprintf(w, "  fake MCP server  %s (Go SDK streamable HTTP, its defaults: sessions, SSE-framed answers)\n", r.Upstream)
	fmt.Fprintf(w, "  svc              %s\n", r.Gateway)
	for _, p := range r.Paths {
		fmt.Fprintf(w, "  %-16s %s\n", p, mcpPathNotes[p])
	}
	fmt.Fprintf(w, "  load average     %s at the start, %s at the end\n", r.LoadStart, r.LoadEnd)
	if r.CPUProfile != "" {
		fmt.Fprintf(w, "  svc's CPU profile of the %s rounds: %s\n", r.CPUProfiled, r.CPUProfile)
	}
	fmt.Fprintln(w)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tpath\tp50\tp99\tadded p50\tadded p99\tadded p50 by round\tcalls/s\tratio\tallocs/call\tcpu/call\t")
	for _, sc := range r.Scenarios {
		name := fmt.Sprintf("c=%d", sc.Concurrency)
		fmt.Fprintf(tw, "%s\tdirect\t%s\t%s\t\t\t\t%.0f\t\t\t%s\t\n", name, fmtMS(sc.Direct.P50), fmtMS(sc.Direct.P99), sc.Direct.RPS, fmtCPU(sc.DirectCPUPerCall))
		for _, p := range sc.Paths {
			var byRound []string
			for _, a := range p.AddedP50Rounds {
				byRound = append(byRound, fmtAdded(a))
			}
			allocs := "-"
			if p.AllocsPerCall >= 0 {
				allocs = fmt.Sprintf("%.0f", p.AllocsPerCall)
			}
			fmt.Fprintf(tw, "\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.0f%%\t%s\t%s\t\n", p.Path, fmtMS(p.P50), fmtMS(p.P99),
				fmtAdded(p.AddedP50), fmtAdded(p.AddedP99), strings.Join(byRound, " "), p.RPS, p.RPSRatio, allocs, fmtCPU(p.CPUPerCall))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\ncpu/call: CPU time per call of the process serving the path (the fake for direct, svc for the others; /proc, 10 ms ticks)")
	if r.UpstreamCalls != nil {
		fmt.Fprintf(w, "calls that reached the fake (warm-up included): %s %d, %s %d\n",
			mcpEchoTool, r.UpstreamCalls[mcpEchoTool], mcpLookupTool, r.UpstreamCalls[mcpLookupTool])
	}
	fmt.Fprintf(w, "svc peak RSS (VmHWM): %s\n", fmtBytes(r.PeakRSS))
	if r.Failures > 0 {
		fmt.Fprintf(w, "FAILED calls: %d; first: %s\n", r.Failures, r.FirstFailure)
	} else {
		fmt.Fprintln(w, "failed calls: 0")
	}
	return nil
}

// fmtCPU prints a CPU time per call in µs, "-" when unknown.
func fmtCPU(us float64) string {
	if us < 0 {
		return "-"
	}
	return fmt.Sprintf("%.0fµs", us)
}
