// Command svcbench measures the latency svc adds to a request and the
// throughput it keeps, against the fake OpenAI upstream of
// internal/providertest, in one run: for each scenario (streaming or not, at
// each concurrency) it sends the same requests first directly to the fake,
// then through a TCP relay (bytes copied both ways, unread: the floor of any
// proxy hop on this machine), then through a bare reverse proxy
// (net/http/httputil's ReverseProxy with the default transport, the reference
// point; its server runs full duplex, without which a few proxied streams in a
// thousand are cut, golang/go#40747), then through svc, and reports the
// difference from direct at the same percentile, with svc's allocations per
// request and its memory.
//
// Every party runs in its own process, as in production: the client in
// svcbench's, the fake upstream, the relay and the bare reverse proxy in child processes
// of svcbench (its own binary, re-executed), and svc in another. So a direct
// request crosses one process boundary, as svc's hop to a real provider does,
// and "added" is only what the gateway hop adds. -fake-inprocess runs the fake
// in svcbench's process instead (cheaper direct requests, which inflates
// "added" by a cross-process round trip); -baseline=false skips the reverse
// proxy, -relay=false the relay. The reverse proxy's default transport keeps 2 idle connections per
// host, so under concurrency it keeps opening new ones to the fake, as an
// untuned proxy would; -baseline-idle sets a pool size like svc's (512).
//
// By default it builds ./cmd/svc, and runs `svc serve` on free loopback ports
// with its data in a temporary directory:
//
//	go run ./cmd/svcbench                    # the full run, about 2 minutes
//	go run ./cmd/svcbench -n 2000 -c 1,16    # a quick one
//	go run ./cmd/svcbench -gateway http://127.0.0.1:7775 -vkey sk-svc-… -fake-addr 127.0.0.1:9999
//	go run ./cmd/svcbench -cpuprofile-svc svc.pprof   # and a CPU profile of svc under load
//
// With -gateway it measures an svc that is already running instead; that svc
// should use the fake as its OpenAI upstream (start svcbench with -fake-addr
// and point OPENAI_API_BASE at http://<fake-addr>/v1 with OPENAI_API_KEY=sk-bench).
//
// -cpuprofile-svc starts svc with SVC_PPROF_ADDR on a free loopback port and
// takes a CPU profile of svc (at most 20s) during the measured svc phase of
// the non-stream scenario at the highest concurrency (c=64 by default; the
// stream one when non-stream is not run). If svc does not answer there it
// warns and goes on without a profile.
//
// -variants compares svc under several settings in one run (variants.go):
// each variant a fresh svc, in -rounds rounds whose order rotates, each svc
// phase right after its own direct phase; it reports each variant's medians
// and its ratios to audit-off (SVC_AUDIT_ENABLED=false). audit-on is the
// embedded default (spool, in-process bridge draining into SQLite);
// audit-redis (with -redis and -postgres) runs proxy and management in one
// process and the bridge in another, on Redis and a fresh PostgreSQL schema
// (audit-redis-nodrain: the same without the bridge process, so nothing
// drains while the load runs), both compared with audit-redis-off, that
// setup with audit off;
// alerts-hang is audit-on with SVC_SLACK_WEBHOOK_URL at a local receiver that
// never answers and SVC_ALERT_SLOW_MS=1, compared with audit-on:
//
//	go run ./cmd/svcbench -variants all -rounds 5 -n 10000 \
//	    -redis redis://127.0.0.1:6379/0 -postgres postgres://…
//
// `svcbench mcp` measures what the tool gateway adds to an MCP tools/call,
// direct to a fake MCP server and through svc, in interleaved rounds
// (mcp.go).
//
// `svcbench logs` fills a fresh PostgreSQL schema with generated audit
// entries (1,000,000 over 30 days by default, logsgen.go) through the
// bridge's write path and times the log and analytics reads of a
// SERVICE_TYPE=api-server svc over HTTP (logs.go, logsquery.go).
//
// svcbench exits 1 if any request failed, after reporting how many and the
// first error. It reads /proc, so svc's memory figures need Linux.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/svc-gateway/svc/internal/providertest"
)

func main() {
	if code, ok := childMain(); ok {
		os.Exit(code)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// The two request modes.
const (
	modeNonStream = "non-stream"
	modeStream    = "stream"
)

// options are the command's flags.
type options struct {
	concurrency []int
	modes       []string
	n           int
	warmup      int
	duration    time.Duration
	rate        float64 // -rate: requests per second of an open load; 0 a closed loop
	chunks      int
	chunkDelay  time.Duration
	model       string
	timeout     time.Duration
	svcBin      string
	svcEnv      []string
	svcCPUs     string // -svc-cpus
	bridgeCPUs  string // -bridge-cpus
	keep        bool
	gateway     string
	vkey        string
	svcPID      int
	fakeAddr    string
	fakeInProc  bool
	baseline    bool
	relay       bool
	baseIdle    int    // -baseline-idle
	cpuprofile  string // -cpuprofile-svc
	json        bool
	// -variants: the settings of svc to compare (variants.go), in rounds.
	variants    []variant
	rounds      int
	redisURL    string // -redis, for audit-redis
	postgresURL string // -postgres, for audit-redis
	promptBytes int    // -prompt-bytes: the user message padded to about this size (0: the small prompt)
}

// flagText are the flags read as text, which check turns into options.
type flagText struct {
	conc, modes, variants *string
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("svcbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	text := defineFlags(fs, o)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if err := o.check(*text.conc, *text.modes, *text.variants); err != nil {
		return nil, err
	}
	return o, nil
}

// defineFlags defines the command's flags on fs: most set o's fields, the
// lists are returned as text for check.
func defineFlags(fs *flag.FlagSet, o *options) flagText {
	var text flagText
	text.conc = fs.String("c", "1,64", "comma-separated concurrency levels")
	text.modes = fs.String("modes", modeNonStream+","+modeStream, "comma-separated request modes: "+modeNonStream+", "+modeStream)
	fs.IntVar(&o.n, "n", 40000, "requests per measured phase (the default run takes about two minutes on 2 cores)")
	fs.IntVar(&o.warmup, "warmup", -1, "requests per warm-up phase (default n/10, at least 100)")
	fs.DurationVar(&o.duration, "duration", 0, "run each measured phase this long instead of -n requests")
	fs.Float64Var(&o.rate, "rate", 0, "open load: send requests at this many per second (at most -c in flight, each timed from when it was due) instead of each worker sending its next when its last is answered")
	fs.IntVar(&o.chunks, "chunks", providertest.DefaultChunks, "content chunks per streamed answer of the fake")
	fs.DurationVar(&o.chunkDelay, "chunk-delay", 0, "pause between the fake's stream chunks")
	fs.StringVar(&o.model, "model", "gpt-4o-mini", "model to ask for")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "limit for one request")
	fs.StringVar(&o.svcBin, "svc-bin", "", "prebuilt svc binary (default: go build ./cmd/svc)")
	fs.StringVar(&o.svcCPUs, "svc-cpus", "", "run svc (and its bridge) and the reference hops on these CPUs only (a taskset list, e.g. 1); run svcbench itself with taskset on the others")
	fs.StringVar(&o.bridgeCPUs, "bridge-cpus", "", "with -variants, run the bridge process of the Redis variants on these CPUs (a taskset list; default -svc-cpus): the bridge on other machines' cores")
	envFlag(fs, &o.svcEnv, "extra KEY=VALUE for svc's environment (repeatable), e.g. SVC_LOG_LEVEL=warn")
	fs.BoolVar(&o.keep, "keep", false, "keep svc's temporary directory (data and svc.log)")
	fs.StringVar(&o.gateway, "gateway", "", "measure this running svc (base URL of its proxy) instead of starting one")
	fs.StringVar(&o.vkey, "vkey", "", "virtual key for -gateway")
	fs.IntVar(&o.svcPID, "svc-pid", 0, "process ID of the -gateway svc, for its memory figures")
	fs.StringVar(&o.fakeAddr, "fake-addr", "127.0.0.1:0", "listen address of the fake upstream")
	fs.BoolVar(&o.fakeInProc, "fake-inprocess", false, "run the fake upstream in svcbench's process rather than its own")
	fs.BoolVar(&o.baseline, "baseline", true, "measure a bare httputil.ReverseProxy (its own process) as a reference point")
	fs.BoolVar(&o.relay, "relay", true, "measure a TCP relay (its own process, bytes copied unread): the floor of any proxy hop")
	fs.IntVar(&o.baseIdle, "baseline-idle", 0, "idle upstream connections per host the reverse proxy keeps (0: the default transport's 2, which makes it reconnect under concurrency)")
	fs.StringVar(&o.cpuprofile, "cpuprofile-svc", "", "write a CPU profile of svc during the non-stream phase at the highest concurrency to this file")
	fs.BoolVar(&o.json, "json", false, "print the results as JSON too")
	text.variants = fs.String("variants", "", "compare svc under these settings, each a fresh svc, in rounds: "+strings.Join(variantNames, ", ")+
		"; \"all\" is every one the other flags allow (audit-redis needs -redis and -postgres)")
	fs.IntVar(&o.rounds, "rounds", 3, "rounds of -variants")
	fs.StringVar(&o.redisURL, "redis", "", "Redis URL for the audit-redis variant (its keys under a prefix of their own)")
	fs.StringVar(&o.postgresURL, "postgres", "", "PostgreSQL URL for the audit-redis variant (a schema of its own, dropped after)")
	fs.IntVar(&o.promptBytes, "prompt-bytes", 0, "pad the user message to about this many bytes of ordinary prose (0: the small prompt; at most 1 MiB)")
	return text
}

// check validates the parsed flags and completes o: the concurrency levels
// and modes from their lists (conc, modes), the variants, the warm-up's
// default and the gateway's base URL.
func (o *options) check(conc, modes, variants string) error {
	if err := o.parseLists(conc, modes); err != nil {
		return err
	}
	switch {
	case o.n < 1 && o.duration <= 0:
		return errors.New("-n must be at least 1 (or set -duration)")
	case !(o.rate == 0 || (o.rate >= 0.001 && o.rate <= 1e6)): // NaN fails both
		return errors.New("-rate must be 0 (a closed loop) or between 0.001 and 1000000")
	case o.bridgeCPUs != "" && variants == "":
		return errors.New("-bridge-cpus applies to -variants only (their Redis variants' bridge process)")
	case o.chunks < 1:
		return errors.New("-chunks must be at least 1")
	case (o.gateway == "") != (o.vkey == ""):
		return errors.New("-gateway and -vkey go together")
	case o.svcPID != 0 && o.gateway == "":
		return errors.New("-svc-pid is for -gateway")
	case o.baseIdle < 0:
		return errors.New("-baseline-idle must not be negative")
	case o.cpuprofile != "" && o.gateway != "":
		return errors.New("-cpuprofile-svc needs the svc svcbench starts, not -gateway")
	}
	if variants != "" {
		if err := o.parseVariants(variants); err != nil {
			return err
		}
	}
	if o.warmup < 0 {
		o.warmup = max(o.n/10, 100)
	}
	o.gateway = strings.TrimSuffix(strings.TrimSuffix(o.gateway, "/"), "/v1")
	return nil
}

// parseLists reads -c's concurrency levels and -modes' request modes.
func (o *options) parseLists(conc, modes string) error {
	for _, f := range strings.Split(conc, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 {
			return fmt.Errorf("-c: bad concurrency %q", f)
		}
		o.concurrency = append(o.concurrency, c)
	}
	for _, m := range strings.Split(modes, ",") {
		switch m = strings.TrimSpace(m); m {
		case modeNonStream, modeStream:
			o.modes = append(o.modes, m)
		default:
			return fmt.Errorf("-modes: unknown mode %q (want %s or %s)", m, modeNonStream, modeStream)
		}
	}
	return nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && args[0] == "translate" {
		return runTranslate(stdout)
	}
	if len(args) > 0 && args[0] == "stages" {
		return runStages(stdout)
	}
	if len(args) > 0 && args[0] == "compliance" {
		return runCompliance(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "logs" {
		return runLogs(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "mcp" {
		return runMCP(ctx, args[1:], stdout, stderr)
	}
	o, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "svcbench:", err)
		}
		return 2
	}
	if o.variants != nil {
		return runWithVariants(ctx, o, stdout, stderr)
	}
	rep, err := bench(ctx, o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "svcbench:", err)
		return 1
	}
	return emit(stdout, stderr, o.json, rep, func(w io.Writer) error { return writeTable(w, rep) }, rep.Failures)
}

// emit prints a report as a table (and as JSON with -json) and returns the
// run's exit code: 1 when it could not print or requests failed.
func emit(stdout, stderr io.Writer, asJSON bool, rep any, table func(io.Writer) error, failures int) int {
	if err := table(stdout); err != nil {
		fmt.Fprintln(stderr, "svcbench:", err)
		return 1
	}
	if asJSON {
		fmt.Fprintln(stdout)
		if err := writeJSON(stdout, rep); err != nil {
			fmt.Fprintln(stderr, "svcbench:", err)
			return 1
		}
	}
	if failures > 0 {
		return 1
	}
	return 0
}

// parseVariants reads -variants and checks the flags that go with it.
func (o *options) parseVariants(list string) error {
	if list == "all" {
		names := []string{variantAuditOff, variantAuditOn}
		if o.redisURL != "" && o.postgresURL != "" {
			names = append(names, variantRedisOff, variantAuditRedis, variantNoDrain)
		}
		list = strings.Join(append(names, variantAlertsHang), ",")
	}
	var err error
	if o.variants, err = parseVariants(list, o.redisURL, o.postgresURL); err != nil {
		return err
	}
	switch {
	case o.rounds < 1:
		return errors.New("-rounds must be at least 1")
	case o.gateway != "" || o.cpuprofile != "" || o.fakeInProc:
		return errors.New("-variants starts its own svc and fake: not with -gateway, -cpuprofile-svc or -fake-inprocess")
	}
	return nil
}

// runWithVariants is a -variants run; its exit code.
func runWithVariants(ctx context.Context, o *options, stdout, stderr io.Writer) int {
	rep, err := benchVariants(ctx, o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "svcbench:", err)
		return 1
	}
	return emit(stdout, stderr, o.json, rep, func(w io.Writer) error { return writeVariantsTable(w, rep) }, rep.Failures)
}

// bench starts what it needs and runs every scenario.
func bench(ctx context.Context, o *options, progress io.Writer) (*report, error) {
	rep := newReport(o)
	// Fail on an unwritable profile file before the long part; leave no
	// file behind when no profile was taken.
	profFile, err := createProfile(o.cpuprofile)
	if err != nil {
		return nil, err
	}
	if profFile != nil {
		defer closeProfileFile(profFile, o.cpuprofile, rep, progress)
	}
	stopReferences, err := startReferences(ctx, o, rep, progress)
	if err != nil {
		return nil, err
	}
	defer stopReferences()
	gw, stopGateway, err := measuredGateway(ctx, o, rep, profFile != nil, progress)
	if err != nil {
		return nil, err
	}
	defer stopGateway()
	rep.Gateway = gw.proxyURL

	b := newBenchRun(o, rep, gw, profFile, progress)
	defer b.client.CloseIdleConnections()
	for _, mode := range o.modes {
		body := requestBodySized(o.model, mode == modeStream, o.promptBytes)
		for _, c := range o.concurrency {
			b.runScenario(ctx, scenarioLoad{mode: mode, body: body, c: c})
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	if gw.pid != 0 {
		if hwm, err := procStatus(gw.pid, "VmHWM"); err == nil {
			rep.PeakRSS = hwm
		}
	}
	return rep, nil
}

// newReport is the report of a run with o, before anything was measured.
func newReport(o *options) *report {
	rep := &report{
		Warmup:        o.warmup,
		Chunks:        o.chunks,
		ChunkDelay:    o.chunkDelay.String(),
		FakeInProcess: o.fakeInProc,
	}
	rep.Rate = o.rate
	if o.duration > 0 {
		rep.Duration = o.duration.String()
	} else {
		rep.Requests = o.n
	}
	return rep
}

// createProfile creates -cpuprofile-svc's file; nil without the flag.
func createProfile(path string) (*os.File, error) {
	if path == "" {
		return nil, nil
	}
	return os.Create(path)
}

// closeProfileFile closes the profile file at path, warning if a profile
// written to it may be incomplete, and removes it when no profile was taken.
func closeProfileFile(f *os.File, path string, rep *report, progress io.Writer) {
	if cerr := f.Close(); cerr != nil && rep.CPUProfile != "" {
		fmt.Fprintln(progress, "svcbench: warning: writing the CPU profile:", cerr)
	}
	if rep.CPUProfile == "" {
		_ = os.Remove(path)
	}
}

// startReferences starts the fake upstream and the reference hops o asks
// for (the relay, the bare reverse proxy), with their URLs in rep; stop
// stops them in the reverse order. On an error it stops what it started.
func startReferences(ctx context.Context, o *options, rep *report, progress io.Writer) (stop func(), err error) {
	var stops []func()
	stopAll := func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	defer func() {
		if err != nil {
			stopAll()
		}
	}()
	if o.fakeInProc {
		fake, err := providertest.StartOpenAI(o.fakeAddr,
			providertest.WithRecording(0),
			providertest.WithAPIKey(upstreamKey),
			providertest.WithChunks(o.chunks),
			providertest.WithChunkDelay(o.chunkDelay),
		)
		if err != nil {
			return nil, fmt.Errorf("starting the fake upstream: %w", err)
		}
		stops = append(stops, fake.Close)
		rep.Upstream = fake.URL()
	} else {
		fake, err := startChild(ctx, "fake upstream", fakeChildEnv(o.fakeAddr, o.chunks, o.chunkDelay))
		if err != nil {
			return nil, err
		}
		stops = append(stops, func() { stopChild(fake, progress) })
		rep.Upstream = fake.url
	}
	if o.relay {
		relay, err := startChildOn(ctx, "tcp relay", relayChildEnv(rep.Upstream), o.svcCPUs)
		if err != nil {
			return nil, err
		}
		stops = append(stops, func() { stopChild(relay, progress) })
		rep.Relay = relay.url
	}
	if o.baseline {
		proxy, err := startChildOn(ctx, "reverse proxy", baselineChildEnv(strings.TrimSuffix(rep.Upstream, "/v1"), o.baseIdle), o.svcCPUs)
		if err != nil {
			return nil, err
		}
		stops = append(stops, func() { stopChild(proxy, progress) })
		rep.ReverseProxy, rep.ReverseProxyIdle = proxy.url, o.baseIdle
	}
	return stopAll, nil
}

// measuredGateway is the svc to measure: -gateway's, or one it starts on
// rep.Upstream (with its pprof listener if pprof, dropped with a warning
// when svc does not answer there), and the function that stops it.
func measuredGateway(ctx context.Context, o *options, rep *report, pprof bool, progress io.Writer) (_ *gateway, stop func(), err error) {
	if o.gateway != "" {
		return &gateway{proxyURL: o.gateway, vkey: o.vkey, pid: o.svcPID}, func() {}, nil
	}
	gw, err := startGateway(ctx, gatewaySpec{bin: o.svcBin, upstream: rep.Upstream, extraEnv: o.svcEnv, pprof: pprof, keepDir: o.keep, log: progress, cpus: o.svcCPUs})
	if err != nil {
		return nil, nil, err
	}
	rep.GatewayStarted = true
	if o.keep {
		fmt.Fprintln(progress, "svcbench: svc's directory:", gw.dir)
	}
	if gw.pprofAddr != "" {
		if err := probePprof(ctx, gw.pprofAddr); err != nil {
			fmt.Fprintf(progress, "svcbench: warning: svc does not answer on SVC_PPROF_ADDR=%s (%v); no CPU profile\n", gw.pprofAddr, err)
			gw.pprofAddr = ""
		}
	}
	return gw, func() { gw.stop(o.keep) }, nil
}

// benchRun is what the scenarios of a run share: its options and report,
// the svc measured, the client and the paths it sends requests on.
type benchRun struct {
	o        *options
	rep      *report
	gw       *gateway
	progress io.Writer
	client   *http.Client
	// The scenario whose svc phase is profiled into profFile; profMode is
	// "" when none is.
	profMode string
	profC    int
	profFile *os.File

	direct, viaRelay, viaProxy, viaSvc target
}

// scenarioLoad is one scenario's requests: their mode and body, and how many
// are in flight.
type scenarioLoad struct {
	mode string
	body []byte
	c    int
}

func (l scenarioLoad) stream() bool { return l.mode == modeStream }

func newBenchRun(o *options, rep *report, gw *gateway, profFile *os.File, progress io.Writer) *benchRun {
	b := &benchRun{o: o, rep: rep, gw: gw, progress: progress, profFile: profFile}
	if gw.pprofAddr != "" {
		b.profMode, b.profC = modeStream, slices.Max(o.concurrency)
		if slices.Contains(o.modes, modeNonStream) {
			b.profMode = modeNonStream
		}
	}
	maxC := max(1, slices.Max(o.concurrency))
	b.client = newClient(maxC, o.timeout)
	b.direct = target{name: "direct", url: rep.Upstream + "/chat/completions", auth: "Bearer " + upstreamKey}
	b.viaRelay = target{name: "tcp-relay", url: rep.Relay + "/v1/chat/completions", auth: "Bearer " + upstreamKey}
	b.viaProxy = target{name: "reverse-proxy", url: rep.ReverseProxy + "/v1/chat/completions", auth: "Bearer " + upstreamKey}
	b.viaSvc = target{name: "svc", url: gw.proxyURL + "/v1/chat/completions", auth: "Bearer " + gw.vkey}
	return b
}

// runScenario measures one scenario on every path, direct first and svc
// last, adds it and its failures to the report and says how it went.
func (b *benchRun) runScenario(ctx context.Context, l scenarioLoad) {
	sc := scenarioResult{Mode: l.mode, Concurrency: l.c, AllocsPerRequest: -1}
	b.warmUp(ctx, l, b.direct)
	d := b.phase(ctx, l, b.direct, b.o.n, b.o.duration)
	sc.Direct = stats(d)
	measured := []phaseResult{d}
	if b.rep.Relay != "" {
		var r phaseResult
		r, sc.Relay = b.reference(ctx, l, b.viaRelay, sc.Direct)
		measured = append(measured, r)
	}
	if b.rep.ReverseProxy != "" {
		var r phaseResult
		r, sc.Baseline = b.reference(ctx, l, b.viaProxy, sc.Direct)
		measured = append(measured, r)
	}
	v := b.measureSvc(ctx, l, &sc, d.elapsed)
	compare(&sc)
	b.rep.Scenarios = append(b.rep.Scenarios, sc)
	measured = append(measured, v)
	failed := addFailures(b.rep, measured)
	printScenario(b.progress, sc, failed)
}

// phase measures n requests (or d long) on t.
func (b *benchRun) phase(ctx context.Context, l scenarioLoad, t target, n int, d time.Duration) phaseResult {
	return b.named(ctx, t.name, l, t, n, d)
}

// named is phase with what to call it in a warning.
func (b *benchRun) named(ctx context.Context, what string, l scenarioLoad, t target, n int, d time.Duration) phaseResult {
	return measuredPhase(ctx, b.client, b.progress, what, phaseSpec{target: t, body: l.body, stream: l.stream(), concurrency: l.c, n: n, duration: d, rate: b.o.rate})
}

// warmUp sends -warmup requests on t, unmeasured; how long they took.
func (b *benchRun) warmUp(ctx context.Context, l scenarioLoad, t target) (took time.Duration) {
	if b.o.warmup > 0 {
		start := time.Now()
		b.named(ctx, "warm-up "+t.name, l, t, b.o.warmup, 0)
		took = time.Since(start)
	}
	return took
}

// reference warms up and measures a reference path, compared with the
// direct phase's stats.
func (b *benchRun) reference(ctx context.Context, l scenarioLoad, t target, direct phaseStats) (phaseResult, *baselineResult) {
	b.warmUp(ctx, l, t)
	r := b.phase(ctx, l, t, b.o.n, b.o.duration)
	res := &baselineResult{phaseStats: stats(r)}
	res.AddedP50, res.AddedP99, res.RPSRatio = added(direct, res.phaseStats)
	return r, res
}

// measureSvc warms svc up, then measures it into sc with its allocations,
// its largest RSS and, in the profiled scenario, a CPU profile (as long as
// the phase is expected to take; tookDirect is the direct phase's time).
func (b *benchRun) measureSvc(ctx context.Context, l scenarioLoad, sc *scenarioResult, tookDirect time.Duration) phaseResult {
	// Warm up outside the allocation, memory and profile window.
	warm := b.warmUp(ctx, l, b.viaSvc)
	before, errBefore := mallocs(ctx, b.client, b.gw.proxyURL+"/metrics")
	rss := sampleRSS(b.gw.pid, 50*time.Millisecond)
	var waitProfile func() error
	if l.mode == b.profMode && l.c == b.profC {
		waitProfile = b.startProfile(ctx, l, warm, tookDirect)
	}
	v := b.phase(ctx, l, b.viaSvc, b.o.n, b.o.duration)
	sc.MaxRSS = rss.done()
	after, errAfter := mallocs(ctx, b.client, b.gw.proxyURL+"/metrics")
	sc.Svc = stats(v)
	if errBefore == nil && errAfter == nil && v.requests > 0 {
		sc.AllocsPerRequest = (after - before) / float64(v.requests)
	}
	if waitProfile != nil {
		if err := waitProfile(); err != nil {
			fmt.Fprintln(b.progress, "svcbench: warning: no CPU profile of svc:", err)
		} else {
			b.rep.CPUProfile = b.o.cpuprofile
			b.rep.CPUProfiled = fmt.Sprintf("%s c=%d", l.mode, l.c)
		}
	}
	return v
}

// startProfile starts a CPU profile of svc as long as its phase is expected
// to take: -duration, else the phase's requests at the warm-up's pace (warm),
// else the direct phase's time; wait waits for it to be written.
func (b *benchRun) startProfile(ctx context.Context, l scenarioLoad, warm, tookDirect time.Duration) (wait func() error) {
	expected := b.o.duration
	if expected <= 0 && warm > 0 {
		expected = warm * time.Duration(b.o.n) / time.Duration(b.o.warmup)
	} else if expected <= 0 {
		expected = tookDirect
	}
	secs := profileSeconds(expected)
	fmt.Fprintf(b.progress, "svcbench: %s c=%d: taking a %ds CPU profile of svc into %s\n", l.mode, l.c, secs, b.o.cpuprofile)
	return fetchProfile(ctx, b.gw.pprofAddr, secs, b.profFile)
}

// addFailures adds the failures of a scenario's phases, and the run's first
// error if none was kept yet, to rep; how many failed in those phases.
func addFailures(rep *report, measured []phaseResult) (failed int) {
	for _, r := range measured {
		failed += r.failures
		rep.Failures += r.failures
		if rep.FirstFailure == "" && r.firstError != nil {
			rep.FirstFailure = r.firstError.Error()
		}
	}
	return failed
}

// printScenario is a scenario's progress line: p50 and throughput on each
// path, and how many requests failed.
func printScenario(progress io.Writer, sc scenarioResult, failed int) {
	viaB := ""
	if sc.Relay != nil {
		viaB = fmt.Sprintf(", tcp-relay p50 %s (%.0f rps)", fmtMS(sc.Relay.P50), sc.Relay.RPS)
	}
	if sc.Baseline != nil {
		viaB += fmt.Sprintf(", reverse-proxy p50 %s (%.0f rps)", fmtMS(sc.Baseline.P50), sc.Baseline.RPS)
	}
	fmt.Fprintf(progress, "svcbench: %s c=%d: direct p50 %s (%.0f rps)%s, via svc p50 %s (%.0f rps), %d failed\n",
		sc.Mode, sc.Concurrency, fmtMS(sc.Direct.P50), sc.Direct.RPS, viaB, fmtMS(sc.Svc.P50), sc.Svc.RPS, failed)
}

// stopChild stops a helper, warning if it did not end cleanly.
func stopChild(c *child, progress io.Writer) {
	if err := c.stop(); err != nil {
		fmt.Fprintln(progress, "svcbench: warning:", err)
	}
}

// requestBody is a small, realistic chat request.
func requestBody(model string, stream bool) []byte {
	m, _ := json.Marshal(model)
	b := `{"model":` + string(m) + `,"messages":[` +
		`{"role":"system","content":"You are a concise assistant for an engineering team. Answer in at most three sentences."},` +
		`{"role":"user","content":"What does an AI gateway add between our services and the model providers, and what does it cost in latency?"}` +
		`],"temperature":0.2,"max_tokens":256`
	if stream {
		b += `,"stream":true,"stream_options":{"include_usage":true}`
	}
	return []byte(b + "}")
}

// envFlag adds the repeatable -svc-env KEY=VALUE flag, appending to env.
func envFlag(fs *flag.FlagSet, env *[]string, usage string) {
	fs.Func("svc-env", usage, func(s string) error {
		if !strings.Contains(s, "=") {
			return errors.New("want KEY=VALUE")
		}
		*env = append(*env, s)
		return nil
	})
}
