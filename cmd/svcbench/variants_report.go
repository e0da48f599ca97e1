package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
)

// variantMedian sums up one variant in one scenario over the rounds.
// Figures are medians over the rounds, in milliseconds; the ratios are
// medians of the per-round ratios to the variant's reference (variantRefs;
// else the run's) measured in the same round, 0 for the reference itself.
type variantMedian struct {
	Variant          string  `json:"variant"`
	Mode             string  `json:"mode"`
	Concurrency      int     `json:"concurrency"`
	Rounds           int     `json:"rounds"`
	SvcP50           float64 `json:"svc_p50_ms"`
	SvcP99           float64 `json:"svc_p99_ms"`
	AddedP50         float64 `json:"added_p50_ms"`
	AddedP99         float64 `json:"added_p99_ms"`
	RPS              float64 `json:"rps"`
	AllocsPerRequest float64 `json:"svc_allocs_per_request"`
	// CPUPerRequest is svc's CPU per request, µs, its phase's entries
	// written (-1 when unknown); CPURatio its ratio to the reference's,
	// the figure the machine's load disturbs least; DrainMS how long the
	// bridge took to finish writing after the phase.
	CPUPerRequest float64 `json:"svc_cpu_us_per_request"`
	CPURatio      float64 `json:"cpu_ratio"`
	// ProxyCPURatio is CPURatio for svc's first process alone (the proxy,
	// without a split setup's bridge process).
	ProxyCPURatio float64 `json:"proxy_cpu_ratio"`
	DrainMS       float64 `json:"drain_ms"`
	AddedP50Ratio float64 `json:"added_p50_ratio"`
	AddedP99Ratio float64 `json:"added_p99_ratio"`
	RPSRatio      float64 `json:"rps_ratio"`
	// Versus is the variant the ratios compare with.
	Versus string `json:"versus,omitempty"`
	// BridgeWritten is the median of the runs' BridgeWritten.
	BridgeWritten int64 `json:"bridge_written"`
}

// median is the median of xs (the mean of the middle two for an even
// count); 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// ratio is a/b, 0 when b is not positive.
func ratio(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return a / b
}

// summarize computes each variant's medians per scenario.
func summarize(rep *variantReport) []variantMedian {
	type key struct {
		variant, mode string
		c, round      int
	}
	byKey := map[key]scenarioResult{}
	written := map[string][]float64{}
	var scenarios []key // mode and concurrency, in the order they ran
	for _, run := range rep.Runs {
		for _, sc := range run.Scenarios {
			byKey[key{run.Variant, sc.Mode, sc.Concurrency, run.Round}] = sc
			if k := (key{mode: sc.Mode, c: sc.Concurrency}); !slices.Contains(scenarios, k) {
				scenarios = append(scenarios, k)
			}
		}
		if run.BridgeWritten >= 0 {
			written[run.Variant] = append(written[run.Variant], float64(run.BridgeWritten))
		}
	}
	var out []variantMedian
	for _, s := range scenarios {
		for _, v := range rep.Variants {
			versus := rep.Reference
			if ref, ok := variantRefs[v]; ok && slices.Contains(rep.Variants, ref) {
				versus = ref
			}
			m := variantMedian{Variant: v, Mode: s.mode, Concurrency: s.c, BridgeWritten: -1}
			if v != versus {
				m.Versus = versus
			}
			var p50, p99, add50, add99, rps, allocs, cpu, drain, r50, r99, rr, rc, rf []float64
			for round := 1; round <= rep.Rounds; round++ {
				sc, ok := byKey[key{v, s.mode, s.c, round}]
				if !ok {
					continue
				}
				m.Rounds++
				p50, p99 = append(p50, sc.Svc.P50), append(p99, sc.Svc.P99)
				add50, add99, rps = append(add50, sc.AddedP50), append(add99, sc.AddedP99), append(rps, sc.Svc.RPS)
				if sc.AllocsPerRequest >= 0 {
					allocs = append(allocs, sc.AllocsPerRequest)
				}
				if sc.CPUPerRequest > 0 {
					cpu = append(cpu, sc.CPUPerRequest)
				}
				drain = append(drain, sc.DrainMS)
				if ref, ok := byKey[key{versus, s.mode, s.c, round}]; ok && m.Versus != "" {
					r50 = append(r50, ratio(sc.AddedP50, ref.AddedP50))
					r99 = append(r99, ratio(sc.AddedP99, ref.AddedP99))
					rr = append(rr, ratio(sc.Svc.RPS, ref.Svc.RPS))
					if sc.CPUPerRequest > 0 && ref.CPUPerRequest > 0 {
						rc = append(rc, ratio(sc.CPUPerRequest, ref.CPUPerRequest))
					}
					if sc.ProxyCPUPerRequest > 0 && ref.ProxyCPUPerRequest > 0 {
						rf = append(rf, ratio(sc.ProxyCPUPerRequest, ref.ProxyCPUPerRequest))
					}
				}
			}
			m.SvcP50, m.SvcP99, m.AddedP50, m.AddedP99, m.RPS = median(p50), median(p99), median(add50), median(add99), median(rps)
			m.AllocsPerRequest, m.CPUPerRequest = -1, -1
			if len(allocs) > 0 {
				m.AllocsPerRequest = median(allocs)
			}
			if len(cpu) > 0 {
				m.CPUPerRequest = median(cpu)
			}
			m.DrainMS, m.CPURatio, m.ProxyCPURatio = median(drain), median(rc), median(rf)
			m.AddedP50Ratio, m.AddedP99Ratio, m.RPSRatio = median(r50), median(r99), median(rr)
			if w := written[v]; len(w) > 0 {
				m.BridgeWritten = int64(median(w))
			}
			out = append(out, m)
		}
	}
	return out
}

// fmtRatio prints a ratio, "" when there is none.
func fmtRatio(r float64) string {
	if r == 0 {
		return ""
	}
	return fmt.Sprintf("%.2f", r)
}

// writeVariantsTable prints the medians and ratios for people.
func writeVariantsTable(w io.Writer, r *variantReport) error {
	per := fmt.Sprintf("%d requests per phase", r.Requests)
	if r.Duration != "" {
		per = r.Duration + " per phase"
	}
	per += openLoadNote(r.Rate)
	fmt.Fprintf(w, "svcbench -variants: %s after %d warm-up requests, %d rounds (variants in rotating order, each a fresh svc;\n", per, r.Warmup, r.Rounds)
	fmt.Fprintf(w, "  each svc phase right after its own direct phase). Medians over the rounds; \"× ref\" are medians of the\n")
	fmt.Fprintf(w, "  per-round ratios to the variant named under \"vs\", measured in the same round. \"CPU/req\" is svc's CPU time\n")
	fmt.Fprintf(w, "  (all its processes) per request, from the phase's start until the bridge had written the phase's entries\n")
	fmt.Fprintf(w, "  (\"drain\" after the phase's end): what a request and its audit entry cost, whatever else loads the machine.\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tvariant\tsvc p50\tsvc p99\tadded p50\tadded p99\trps\tallocs/req\tCPU/req\tdrain\tvs\tadded p50 × ref\tadded p99 × ref\trps × ref\tCPU × ref\tproxy CPU × ref\t")
	last := ""
	for _, m := range r.Summary {
		name := fmt.Sprintf("%s c=%d", m.Mode, m.Concurrency)
		if name == last {
			name = ""
		} else {
			last = name
		}
		allocs := "-"
		if m.AllocsPerRequest >= 0 {
			allocs = fmt.Sprintf("%.0f", m.AllocsPerRequest)
		}
		cpu, drain := "-", ""
		if m.CPUPerRequest >= 0 {
			cpu = fmt.Sprintf("%.0fµs", m.CPUPerRequest)
		}
		if m.DrainMS > 0 {
			drain = fmt.Sprintf("%.0fms", m.DrainMS)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", name, m.Variant, fmtMS(m.SvcP50), fmtMS(m.SvcP99),
			fmtAdded(m.AddedP50), fmtAdded(m.AddedP99), m.RPS, allocs, cpu, drain, m.Versus, fmtRatio(m.AddedP50Ratio), fmtRatio(m.AddedP99Ratio),
			fmtRatio(m.RPSRatio), fmtRatio(m.CPURatio), fmtRatio(m.ProxyCPURatio))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var notes []string
	for _, v := range r.Variants {
		var ws, conns []string
		for _, run := range r.Runs {
			if run.Variant != v {
				continue
			}
			if run.BridgeWritten >= 0 {
				ws = append(ws, fmt.Sprintf("%d (backlog %d)", run.BridgeWritten, run.BridgeBacklog))
			}
			if v == variantAlertsHang {
				conns = append(conns, fmt.Sprint(run.WebhookConns))
			}
		}
		if len(ws) > 0 {
			notes = append(notes, fmt.Sprintf("%s: the bridge wrote per run %s", v, strings.Join(ws, ", ")))
		}
		if len(conns) > 0 {
			notes = append(notes, fmt.Sprintf("%s: the hanging webhook took %s connections per run, answered none", v, strings.Join(conns, ", ")))
		}
	}
	if len(notes) > 0 {
		fmt.Fprintf(w, "\n%s\n", strings.Join(notes, "\n"))
	}
	if r.Failures > 0 {
		fmt.Fprintf(w, "FAILED requests: %d; first: %s\n", r.Failures, r.FirstFailure)
	} else {
		fmt.Fprintln(w, "failed requests: 0")
	}
	return nil
}
