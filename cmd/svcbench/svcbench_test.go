package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/providertest"
)

func TestParseFlags(t *testing.T) {
	o, err := parseFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{1, 64}, o.concurrency); diff != "" {
		t.Errorf("default -c (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{modeNonStream, modeStream}, o.modes); diff != "" {
		t.Errorf("default -modes (-want +got):\n%s", diff)
	}
	if o.warmup != o.n/10 {
		t.Errorf("default warm-up: got %d, want n/10 = %d", o.warmup, o.n/10)
	}
	if o.fakeInProc || !o.baseline || !o.relay || o.baseIdle != 0 || o.cpuprofile != "" {
		t.Errorf("default -fake-inprocess %v, -baseline %v, -relay %v, -baseline-idle %d, -cpuprofile-svc %q", o.fakeInProc, o.baseline, o.relay, o.baseIdle, o.cpuprofile)
	}
	o, err = parseFlags([]string{"-fake-inprocess", "-baseline=false", "-relay=false", "-baseline-idle", "512", "-cpuprofile-svc", "p.out"}, &bytes.Buffer{})
	if err != nil || !o.fakeInProc || o.baseline || o.relay || o.baseIdle != 512 || o.cpuprofile != "p.out" {
		t.Errorf("got %+v, %v", o, err)
	}

	o, err = parseFlags([]string{"-c", "2, 8", "-modes", "stream", "-n", "50", "-gateway", "http://h:1/v1/", "-vkey", "k", "-svc-env", "A=b"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]int{2, 8}, o.concurrency); diff != "" || o.modes[0] != modeStream || o.warmup != 100 || o.gateway != "http://h:1" || o.svcEnv[0] != "A=b" {
		t.Errorf("got %+v", o)
	}

	for _, args := range [][]string{
		{"-c", "0"}, {"-c", "x"}, {"-modes", "batch"}, {"-n", "0"}, {"-gateway", "http://h"},
		{"-vkey", "k"}, {"-svc-pid", "3"}, {"-gateway", "http://h:1", "-vkey", "k", "-cpuprofile-svc", "p"}, {"-baseline-idle", "-1"}, {"-svc-env", "novalue"}, {"extra"}, {"-chunks", "0"},
		{"-rate", "NaN"}, {"-rate", "-1"}, {"-rate", "1e-9"}, {"-rate", "2e6"}, {"-bridge-cpus", "0"},
	} {
		if _, err := parseFlags(args, &bytes.Buffer{}); err == nil {
			t.Errorf("parseFlags(%q): got no error", args)
		}
	}
	if _, err := parseFlags([]string{"-n", "0", "-duration", "1s"}, &bytes.Buffer{}); err != nil {
		t.Errorf("-n 0 -duration 1s: %v", err)
	}
	if o, err := parseFlags([]string{"-rate", "5000"}, &bytes.Buffer{}); err != nil || o.rate != 5000 {
		t.Errorf("-rate 5000: %v", err)
	}
}

func TestPercentile(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 200; i++ {
		d = append(d, time.Duration(i))
	}
	for _, tt := range []struct {
		p    float64
		want time.Duration
	}{{50, 100}, {99, 198}, {100, 200}, {0.1, 1}} {
		if got := percentile(d, tt.p); got != tt.want {
			t.Errorf("p%v: got %d, want %d", tt.p, got, tt.want)
		}
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("p50 of nothing: got %v", got)
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("p99 of one: got %v", got)
	}
}

func TestStatsAndCompare(t *testing.T) {
	r := phaseResult{requests: 4, failures: 1, elapsed: 2 * time.Second,
		latency: []time.Duration{time.Millisecond, 2 * time.Millisecond, 3 * time.Millisecond}}
	sc := scenarioResult{Direct: stats(phaseResult{requests: 2, elapsed: time.Second, latency: []time.Duration{500 * time.Microsecond, time.Millisecond}}), Svc: stats(r)}
	compare(&sc)
	want := scenarioResult{
		Direct:   phaseStats{Requests: 2, Seconds: 1, RPS: 2, P50: 0.5, P90: 1, P99: 1, Max: 1, Mean: 0.75},
		Svc:      phaseStats{Requests: 4, Failures: 1, Seconds: 2, RPS: 1.5, P50: 2, P90: 3, P99: 3, Max: 3, Mean: 2},
		AddedP50: 1.5, AddedP99: 2, RPSRatio: 75,
	}
	if diff := cmp.Diff(want, sc); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestFormat(t *testing.T) {
	for _, tt := range []struct {
		v    float64
		want string
	}{{0.0254, "25µs"}, {1.234, "1.23ms"}, {12.34, "12.3ms"}, {123.4, "123ms"}, {-0.5, "-500µs"}} {
		if got := fmtMS(tt.v); got != tt.want {
			t.Errorf("fmtMS(%v): got %q, want %q", tt.v, got, tt.want)
		}
	}
	if got := fmtAdded(0.3); got != "+300µs" {
		t.Errorf("fmtAdded: got %q", got)
	}
	if got := fmtBytes(3 << 20); got != "3.0 MiB" {
		t.Errorf("fmtBytes: got %q", got)
	}
}

func TestMetricValue(t *testing.T) {
	text := `# HELP go_memstats_mallocs_total Total number of heap objects allocated.
# TYPE go_memstats_mallocs_total counter
go_memstats_mallocs_total_extra 1
go_memstats_mallocs_total 1.234567e+06
go_memstats_frees_total 3
`
	got, err := metricValue(strings.NewReader(text), "go_memstats_mallocs_total")
	if err != nil || got != 1234567 {
		t.Errorf("got %v, %v; want 1234567", got, err)
	}
	if _, err := metricValue(strings.NewReader("x 1\n"), "go_memstats_mallocs_total"); err == nil {
		t.Error("missing metric: got no error")
	}
}

func TestStatusField(t *testing.T) {
	status := "Name:\tsvc\nVmPeak:\t  812345 kB\nVmHWM:\t   51200 kB\nVmRSS:\t   40960 kB\n"
	for field, want := range map[string]int64{"VmHWM": 50 << 20, "VmRSS": 40 << 20} {
		got, err := statusField(strings.NewReader(status), field)
		if err != nil || got != want {
			t.Errorf("%s: got %d, %v; want %d", field, got, err, want)
		}
	}
	if _, err := statusField(strings.NewReader(status), "VmSwap"); err == nil {
		t.Error("missing field: got no error")
	}
	// This very process has them.
	if rss, err := procStatus(os.Getpid(), "VmRSS"); err != nil || rss <= 0 {
		t.Errorf("own VmRSS: got %d, %v", rss, err)
	}
	s := sampleRSS(os.Getpid(), time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	if got := s.done(); got <= 0 {
		t.Errorf("sampled RSS: got %d", got)
	}
	if got := sampleRSS(0, time.Millisecond).done(); got != 0 {
		t.Errorf("sampled RSS of no process: got %d", got)
	}
}

// A running "gateway" (here a second fake, which is OpenAI-compatible too)
// is measured with -gateway; it has no /metrics, so allocations are unknown.
func TestRunAgainstRunningGateway(t *testing.T) {
	gw := providertest.NewOpenAI(t, providertest.WithAPIKey("sk-svc-test"))
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-gateway", gw.URL(), "-vkey", "sk-svc-test", "-n", "40", "-warmup", "5", "-c", "1,3", "-json"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &out, &errOut)
	}
	// Each scenario: 45 requests, and svc's /metrics read twice.
	if want := 2 * 2 * (40 + 5 + 2); gw.Count() != want {
		t.Errorf("requests at the gateway: got %d, want %d", gw.Count(), want)
	}
	table, js, ok := strings.Cut(out.String(), "\n{")
	if !ok {
		t.Fatalf("no JSON after the table:\n%s", &out)
	}
	for _, want := range []string{"non-stream c=1", "non-stream c=3", "stream c=1", "stream c=3", "failed requests: 0", "added p50",
		"tcp-relay", "reverse-proxy", "fake upstream  own process", "already running (-gateway)"} {
		if !strings.Contains(table, want) {
			t.Errorf("table has no %q:\n%s", want, table)
		}
	}
	var rep report
	if err := json.Unmarshal([]byte("{"+js), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Scenarios) != 4 || rep.Failures != 0 || rep.PeakRSS != 0 || rep.FakeInProcess || rep.GatewayStarted || rep.ReverseProxy == "" || rep.Relay == "" {
		t.Fatalf("report: %+v", rep)
	}
	for _, sc := range rep.Scenarios {
		if sc.AllocsPerRequest != -1 || sc.Svc.Requests != 40 || sc.Direct.Requests != 40 || sc.Svc.P50 <= 0 || sc.RPSRatio <= 0 {
			t.Errorf("scenario %s c=%d: %+v", sc.Mode, sc.Concurrency, sc)
		}
		if b := sc.Baseline; b == nil || b.Requests != 40 || b.Failures != 0 || b.P50 <= 0 || b.RPSRatio <= 0 || b.AddedP50 != b.P50-sc.Direct.P50 {
			t.Errorf("scenario %s c=%d: reverse proxy %+v", sc.Mode, sc.Concurrency, b)
		}
		if r := sc.Relay; r == nil || r.Requests != 40 || r.Failures != 0 || r.P50 <= 0 || r.RPSRatio <= 0 || r.AddedP50 != r.P50-sc.Direct.P50 {
			t.Errorf("scenario %s c=%d: tcp relay %+v", sc.Mode, sc.Concurrency, r)
		}
	}
}

func TestRunFailsOnFailedRequests(t *testing.T) {
	gw := providertest.NewOpenAI(t, providertest.WithStatus(503))
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-gateway", gw.URL(), "-vkey", "k", "-n", "10", "-warmup", "0", "-c", "2", "-modes", "stream"}, &out, &errOut)
	if code != 1 {
		t.Errorf("exit: got %d, want 1", code)
	}
	if !strings.Contains(out.String(), "FAILED requests: 10; first: svc: status 503") {
		t.Errorf("output does not report the failures:\n%s", &out)
	}
}

// startGateway runs a subprocess with svc's settings, waits for it and makes
// a virtual key; the test binary stands in for svc (see fakeSvc).
func TestRunStartsGateway(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	var out, errOut bytes.Buffer
	prof := filepath.Join(t.TempDir(), "svc.pprof")
	code := run(context.Background(), []string{"-svc-bin", os.Args[0], "-svc-env", fakeSvcEnv + "=1", "-n", "30", "-warmup", "5", "-c", "2", "-json", "-cpuprofile-svc", prof}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &out, &errOut)
	}
	// The non-stream phase was profiled: a gzipped profile.
	if b, err := os.ReadFile(prof); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("CPU profile: %v, %d bytes\nstderr:\n%s", err, len(b), &errOut)
	}
	if !strings.Contains(errOut.String(), "non-stream c=2: taking a 1s CPU profile of svc") || !strings.Contains(out.String(), "svc's CPU profile of non-stream c=2") {
		t.Errorf("no word of the profile:\nstdout:\n%s\nstderr:\n%s", &out, &errOut)
	}
	_, js, _ := strings.Cut(out.String(), "\n{")
	var rep report
	if err := json.Unmarshal([]byte("{"+js), &rep); err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	if rep.PeakRSS <= 0 || len(rep.Scenarios) != 2 || !rep.GatewayStarted || rep.CPUProfile != prof {
		t.Fatalf("report: %+v", rep)
	}
	for _, sc := range rep.Scenarios {
		if sc.AllocsPerRequest <= 0 || sc.MaxRSS <= 0 || sc.Svc.Requests != 30 {
			t.Errorf("scenario %s: allocs/req %v, max RSS %d, requests %d", sc.Mode, sc.AllocsPerRequest, sc.MaxRSS, sc.Svc.Requests)
		}
	}
}

// A svc without the pprof listener gets a warning, not a failed run; the
// in-process fake and no reverse proxy work as before.
func TestRunWithoutPprof(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	var out, errOut bytes.Buffer
	prof := filepath.Join(t.TempDir(), "svc.pprof")
	code := run(context.Background(), []string{"-svc-bin", os.Args[0], "-svc-env", fakeSvcEnv + "=1", "-svc-env", "SVCBENCH_FAKE_SVC_PPROF=off",
		"-n", "20", "-warmup", "0", "-c", "1", "-modes", "stream", "-fake-inprocess", "-baseline=false", "-relay=false", "-cpuprofile-svc", prof}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &out, &errOut)
	}
	if !strings.Contains(errOut.String(), "svc does not answer on SVC_PPROF_ADDR") {
		t.Errorf("no warning:\n%s", &errOut)
	}
	if _, err := os.Stat(prof); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("profile file: got %v, want none", err)
	}
	for _, want := range []string{"svcbench's process (-fake-inprocess)", "stream c=1", "failed requests: 0"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table has no %q:\n%s", want, &out)
		}
	}
	if strings.Contains(out.String(), "reverse-proxy") || strings.Contains(out.String(), "tcp-relay") {
		t.Errorf("-baseline=false -relay=false, yet:\n%s", &out)
	}
}

func TestStartGatewayReportsEarlyExit(t *testing.T) {
	_, err := startGateway(context.Background(), gatewaySpec{bin: "/bin/false", upstream: "http://127.0.0.1:1/v1", log: &bytes.Buffer{}})
	if err == nil || !strings.Contains(err.Error(), "svc exited") {
		t.Errorf("got %v, want an error saying svc exited", err)
	}
}

// A reference that fails to start stops those started before it: here the
// relay, on a CPU list taskset refuses, after the fake upstream.
func TestStartReferencesStopsOnError(t *testing.T) {
	o := &options{fakeAddr: "127.0.0.1:0", chunks: 1, relay: true, svcCPUs: "not-a-cpu-list"}
	rep := &report{}
	stop, err := startReferences(context.Background(), o, rep, io.Discard)
	if err == nil {
		stop()
		t.Fatal("the relay started on a CPU list taskset cannot read")
	}
	if rep.Upstream == "" {
		t.Fatalf("the fake upstream was not started first: %v", err)
	}
	resp, err := http.Get(rep.Upstream + "/models")
	if err == nil {
		resp.Body.Close()
		t.Errorf("the fake upstream at %s still answers after the relay failed to start", rep.Upstream)
	}
}
