package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestWriteTable pins writeTable's output, byte for byte, on two fixed
// reports: one with every path, a profile, an open load, failures and
// phases in which nothing succeeded; one with only direct, the reverse
// proxy (default transport) and svc, an in-process fake, a running svc and
// a duration per phase.
func TestWriteTable(t *testing.T) {
	ps := func(requests, failures int, rps, p50, p99, ttfb50, ttfb99 float64) phaseStats {
		return phaseStats{Requests: requests, Failures: failures, RPS: rps, P50: p50, P99: p99, TTFBP50: ttfb50, TTFBP99: ttfb99}
	}
	base := func(s phaseStats, p50, p99, ratio float64) *baselineResult {
		return &baselineResult{phaseStats: s, AddedP50: p50, AddedP99: p99, RPSRatio: ratio}
	}
	full := &report{
		Requests: 1000, Rate: 500, Warmup: 100, Chunks: 8, ChunkDelay: "1ms",
		Gateway: "http://127.0.0.1:3", Upstream: "http://127.0.0.1:1/v1", GatewayStarted: true,
		Relay: "http://127.0.0.1:2", ReverseProxy: "http://127.0.0.1:4", ReverseProxyIdle: 512,
		CPUProfile: "svc.pprof", CPUProfiled: "non-stream c=64",
		Scenarios: []scenarioResult{
			{
				Mode: modeNonStream, Concurrency: 1,
				Direct:   ps(1000, 0, 2500.4, 0.3254, 0.9, 0, 0),
				Relay:    base(ps(1000, 0, 2300, 0.41, 1.2, 0, 0), 0.0846, 0.3, 91.98),
				Baseline: base(ps(1000, 0, 1800, 0.62, 2.5, 0, 0), 0.2946, 1.6, 71.99),
				Svc:      ps(1000, 0, 1500, 0.7, 12.345, 0, 0),
				AddedP50: 0.3746, AddedP99: 11.445, RPSRatio: 59.99, AllocsPerRequest: 123.4, MaxRSS: 50 << 20,
			},
			{
				Mode: modeStream, Concurrency: 64,
				Direct:   ps(1000, 1000, 0, 0, 0, 0, 0), // nothing succeeded
				Relay:    base(ps(1000, 0, 9000, 5.5, 20, 1.1, 3.3), 5.5, 20, 0),
				Baseline: base(ps(1000, 3, 8000, 150.2, 400, 2.2, 4.4), 150.2, 400, 0),
				Svc:      ps(1000, 1000, 0, 0, 0, 0, 0), // nor here
				AddedP50: 0, AddedP99: 0, RPSRatio: 0, AllocsPerRequest: -1,
			},
		},
		PeakRSS: 64 << 20, Failures: 2003, FirstFailure: "svc: status 503",
	}
	small := &report{
		Duration: "10s", Warmup: 0, Chunks: 4, ChunkDelay: "0s", Gateway: "http://gw", Upstream: "http://fake/v1", FakeInProcess: true,
		ReverseProxy: "http://proxy",
		Scenarios: []scenarioResult{{
			Mode: modeStream, Concurrency: 2,
			Direct:   ps(10, 0, 100, 2, 4, 0.5, 0.9),
			Baseline: base(ps(10, 0, 90, 2.5, 5, 0.6, 1), 0.5, 1, 90),
			Svc:      ps(10, 0, 110, 1.5, 3, 0.4, 0.8),
			AddedP50: -0.5, AddedP99: -1, RPSRatio: 110, AllocsPerRequest: 0, MaxRSS: 1 << 20,
		}},
	}
	for _, tt := range []struct {
		name string
		r    *report
		want string
	}{
		{"full", full, endOfLine(fullTable)},
		{"small", small, endOfLine(smallTable)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := writeTable(&b, tt.r); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, b.String()); diff != "" {
				t.Errorf("table (-want +got):\n%s", diff)
			}
		})
	}
}

// endOfLine makes the tables below readable with their trailing spaces:
// each of their lines ends with a "$".
func endOfLine(s string) string { return strings.ReplaceAll(s, "$\n", "\n") }

const fullTable = `svcbench: 1000 requests per phase, an open load of 500 requests/s (at most c in flight, each timed from when it was due) after 100 warm-up requests, sent from svcbench's process to$
  fake upstream  own process, http://127.0.0.1:1/v1, streams 8 chunks 1ms apart$
  tcp-relay      own process, http://127.0.0.1:2: bytes copied both ways, unread$
  reverse-proxy  own process, http://127.0.0.1:4: httputil.ReverseProxy, default transport but 512 idle conns per host$
  svc            own process, started by svcbench, http://127.0.0.1:3$
  svc's CPU profile of non-stream c=64: svc.pprof$
$
        scenario           path     p50     p99  added p50  added p99   rps  ratio  allocs/req   max RSS$
  non-stream c=1         direct   325µs   900µs                        2500                             $
                      tcp-relay   410µs  1.20ms      +85µs     +300µs  2300    92%                      $
                  reverse-proxy   620µs  2.50ms     +295µs    +1.60ms  1800    72%                      $
                            svc   700µs  12.3ms     +375µs    +11.4ms  1500    60%         123  50.0 MiB$
     stream c=64         direct       -       -                           0                             $
                      tcp-relay  5.50ms  20.0ms          -          -  9000     0%                      $
                  reverse-proxy   150ms   400ms          -          -  8000     0%                      $
                            svc       -       -          -          -     0     0%           -         -$
$
stream time to first byte (p50/p99): c=64 direct 0µs/0µs, tcp-relay 1.10ms/3.30ms, reverse-proxy 2.20ms/4.40ms, via svc 0µs/0µs$
svc peak RSS (VmHWM): 64.0 MiB$
FAILED requests: 2003; first: svc: status 503$
`

const smallTable = `svcbench: 10s per phase after 0 warm-up requests, sent from svcbench's process to$
  fake upstream  svcbench's process (-fake-inprocess), http://fake/v1, streams 4 chunks 0s apart$
  reverse-proxy  own process, http://proxy: httputil.ReverseProxy, default transport (2 idle conns per host)$
  svc            already running (-gateway), http://gw$
$
    scenario           path     p50     p99  added p50  added p99  rps  ratio  allocs/req  max RSS$
  stream c=2         direct  2.00ms  4.00ms                        100                            $
              reverse-proxy  2.50ms  5.00ms     +500µs    +1.00ms   90    90%                     $
                        svc  1.50ms  3.00ms     -500µs    -1.00ms  110   110%           0  1.0 MiB$
$
stream time to first byte (p50/p99): c=2 direct 500µs/900µs, reverse-proxy 600µs/1.00ms, via svc 400µs/800µs$
svc peak RSS (VmHWM): -$
failed requests: 0$
`
