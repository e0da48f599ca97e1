package main

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// mcpReport is a whole `svcbench mcp` run. Times are in milliseconds.
type mcpReport struct {
	Started string `json:"started"`
	// LoadStart and LoadEnd are /proc/loadavg's averages (1, 5 and 15
	// minutes) before and after: the machine may be shared.
	LoadStart string `json:"load_average_start"`
	LoadEnd   string `json:"load_average_end"`
	Calls     int    `json:"calls_per_path"`
	Rounds    int    `json:"rounds"`
	Warmup    int    `json:"warmup_calls_per_path"`
	Upstream  string `json:"fake_mcp_server"`
	Gateway   string `json:"svc_endpoint"`
	// Relay and ReverseProxy are the reference hops' URLs, "" when left
	// out; ReverseProxyIdle is the proxy's idle connections per host (0:
	// http.DefaultTransport's 2).
	Relay            string   `json:"tcp_relay,omitempty"`
	ReverseProxy     string   `json:"reverse_proxy,omitempty"`
	ReverseProxyIdle int      `json:"reverse_proxy_idle_per_host,omitempty"`
	Paths            []string `json:"paths"`
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

// mcpPathResult is a path other than direct (through svc, or a reference
// hop) and what it adds to direct.
type mcpPathResult struct {
	Path string `json:"path"`
	// Reference is true for a reference hop (tcp-relay, reverse-proxy),
	// false for a path through svc.
	Reference bool `json:"reference"`
	phaseStats
	AddedP50 float64 `json:"added_p50_ms"`
	AddedP99 float64 `json:"added_p99_ms"`
	RPSRatio float64 `json:"rps_ratio_pct"`
	// AddedP50Rounds is the path's p50 minus direct's in each round.
	AddedP50Rounds []float64 `json:"added_p50_ms_by_round"`
	// BeyondProxyP50 is, for a path through svc, its added p50 minus the
	// reverse proxy's at the same concurrency in the same rounds: what svc
	// adds beyond a bare proxy hop. BeyondProxyP50Rounds is the same in
	// each round. Both are absent without the reverse-proxy path.
	BeyondProxyP50       *float64  `json:"beyond_proxy_p50_ms,omitempty"`
	BeyondProxyP50Rounds []float64 `json:"beyond_proxy_p50_ms_by_round,omitempty"`
	// AllocsPerCall is svc's heap allocations per call in the path's
	// phases; -1 when svc's /metrics could not be read, or for a reference.
	AllocsPerCall float64 `json:"svc_allocs_per_call"`
	// CPUPerCall is the CPU time per call of the process serving the path
	// (svc, or the reference's own), in µs; -1 when unknown.
	CPUPerCall float64 `json:"cpu_us_per_call"`
}

// setBeyondProxy sets what every path through svc adds beyond the
// reverse-proxy path; it leaves them alone when that path is not there.
func setBeyondProxy(paths []mcpPathResult) {
	i := slices.IndexFunc(paths, func(p mcpPathResult) bool { return p.Path == mcpProxyPath })
	if i < 0 {
		return
	}
	ref := paths[i]
	for k := range paths {
		p := &paths[k]
		if p.Reference {
			continue
		}
		b := p.AddedP50 - ref.AddedP50
		p.BeyondProxyP50 = &b
		for r := range min(len(p.AddedP50Rounds), len(ref.AddedP50Rounds)) {
			p.BeyondProxyP50Rounds = append(p.BeyondProxyP50Rounds, p.AddedP50Rounds[r]-ref.AddedP50Rounds[r])
		}
	}
}

// setRefs records the reference hops' URLs.
func (r *mcpReport) setRefs(refs []mcpRef, idle int) {
	for _, ref := range refs {
		switch ref.name {
		case mcpRelayPath:
			r.Relay = ref.c.url
		case mcpProxyPath:
			r.ReverseProxy, r.ReverseProxyIdle = ref.c.url, idle
		}
	}
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
	mcpRelayPath: "SDK session → TCP relay → fake, tool echo: the floor of any hop",
	mcpProxyPath: "SDK session → bare reverse proxy → fake, tool echo: the reference for svc",
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
	if r.Relay != "" {
		fmt.Fprintf(w, "  tcp relay        %s (own process: bytes copied both ways, unread)\n", r.Relay)
	}
	if r.ReverseProxy != "" {
		idle := "http.DefaultTransport's 2"
		if r.ReverseProxyIdle > 0 {
			idle = strconv.Itoa(r.ReverseProxyIdle)
		}
		fmt.Fprintf(w, "  reverse proxy    %s (own process: httputil.ReverseProxy, streams flushed as they come, %s idle connections per host, full duplex)\n",
			r.ReverseProxy, idle)
	}
	for _, p := range r.Paths {
		fmt.Fprintf(w, "  %-16s %s\n", p, mcpPathNotes[p])
	}
	fmt.Fprintf(w, "  load average     %s at the start, %s at the end\n", r.LoadStart, r.LoadEnd)
	if r.CPUProfile != "" {
		fmt.Fprintf(w, "  svc's CPU profile of the %s rounds: %s\n", r.CPUProfiled, r.CPUProfile)
	}
	fmt.Fprintln(w)
	if err := writeMCPRows(w, r); err != nil {
		return err
	}
	refs := ""
	if r.Relay != "" || r.ReverseProxy != "" {
		refs = ", the reference's own for a reference"
	}
	fmt.Fprintf(w, "\ncpu/call: CPU time per call of the process serving the path (the fake for direct%s, svc for the others; /proc, 10 ms ticks)\n", refs)
	if r.ReverseProxy != "" {
		fmt.Fprintln(w, "beyond proxy: the path's added p50 minus reverse-proxy's at the same concurrency, same rounds: what svc adds beyond a bare proxy hop")
	}
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

// writeMCPRows prints the table proper: for each concurrency a row per
// path, direct first; the "beyond proxy" column when the reverse proxy was
// measured.
func writeMCPRows(w io.Writer, r *mcpReport) error {
	beyond := r.ReverseProxy != ""
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	row := func(cells ...string) {
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	cols := func(head []string, beyondCell string, tail ...string) []string {
		if beyond {
			head = append(head, beyondCell)
		}
		return append(head, tail...)
	}
	row(cols([]string{"scenario", "path", "p50", "p99", "added p50", "added p99"}, "beyond proxy",
		"added p50 by round", "calls/s", "ratio", "allocs/call", "cpu/call")...)
	for _, sc := range r.Scenarios {
		row(cols([]string{fmt.Sprintf("c=%d", sc.Concurrency), "direct", fmtMS(sc.Direct.P50), fmtMS(sc.Direct.P99), "", ""}, "",
			"", fmt.Sprintf("%.0f", sc.Direct.RPS), "", "", fmtCPU(sc.DirectCPUPerCall))...)
		for _, p := range sc.Paths {
			var byRound []string
			for _, a := range p.AddedP50Rounds {
				byRound = append(byRound, fmtAdded(a))
			}
			allocs, past := "-", ""
			if p.AllocsPerCall >= 0 {
				allocs = fmt.Sprintf("%.0f", p.AllocsPerCall)
			}
			if p.BeyondProxyP50 != nil {
				past = fmtAdded(*p.BeyondProxyP50)
			}
			if p.Reference {
				allocs = ""
			}
			row(cols([]string{"", p.Path, fmtMS(p.P50), fmtMS(p.P99), fmtAdded(p.AddedP50), fmtAdded(p.AddedP99)}, past,
				strings.Join(byRound, " "), fmt.Sprintf("%.0f", p.RPS), fmt.Sprintf("%.0f%%", p.RPSRatio), allocs, fmtCPU(p.CPUPerCall))...)
		}
	}
	return tw.Flush()
}

// fmtCPU prints a CPU time per call in µs, "-" when unknown.
func fmtCPU(us float64) string {
	if us < 0 {
		return "-"
	}
	return fmt.Sprintf("%.0fµs", us)
}
