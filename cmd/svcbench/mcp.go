package main

// `svcbench mcp` measures what the tool gateway adds to an MCP tools/call
// (issue 15): a fake MCP server made with the official Go SDK runs in its own
// process (a child of svcbench, as the fake OpenAI upstream is), svc runs in
// another with the server registered, and svcbench calls the server's tool
// directly and through svc in the same run, in interleaved rounds whose order
// rotates. Each worker holds one SDK client session per path for the whole
// run, so initialize is not measured, only tools/call.
//
// The paths:
//
//   - direct: the SDK client to the fake server's streamable-HTTP endpoint;
//   - tcp-relay: the same through a TCP relay (bytes copied both ways,
//     unread; its own process, the child the chat benchmark uses): the floor
//     of any hop on this machine, -relay=false leaves it out;
//   - reverse-proxy: the same through a bare httputil.ReverseProxy (its own
//     process, the chat benchmark's child) flushing every write at once, as a
//     proxy for SSE must (the SDK's answers and its standalone GET stream are
//     SSE), keeping -baseline-idle idle connections per host: the reference
//     for svc, -baseline=false leaves it out;
//   - svc: the SDK client to svc's `/{server_id}/mcp` endpoint, which relays
//     the call through its own upstream session;
//   - svc-v1: `POST /mcp/v1/{server_id}/tools/call` with {name, arguments} as
//     plain JSON (no MCP client on the caller's side), -v1=false leaves it out;
//   - svc-cached: a read-only tool called with the same arguments every
//     time, so svc answers from its tool-call cache and the server is not
//     called, -cached=false leaves it out.
//
// direct, the references, svc and svc-v1 call the tool "echo", which is not
// read-only and is called with arguments that differ on every call: svc's
// cache never serves it, and the fake checks each answer is the echo of its
// own arguments.
//
// On two shared cores a closed loop at concurrency 32 measures CPU cost times
// concurrency, so svc's added latency is shown beside the reverse proxy's,
// measured in the same rounds: "beyond proxy" is a path's added p50 minus the
// proxy's.
//
//	go run ./cmd/svcbench mcp                          # c=1 and c=32, about a minute
//	go run ./cmd/svcbench mcp -n 2000 -c 1 -rounds 3   # a quick one
//	go run ./cmd/svcbench mcp -cpuprofile-svc mcp.pprof -cpuprofile-c 1

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpOptions are the flags of `svcbench mcp`.
type mcpOptions struct {
	concurrency []int
	n           int // calls per path per concurrency, over all rounds
	warmup      int // calls per path per concurrency before the rounds
	rounds      int
	timeout     time.Duration
	svcBin      string
	svcEnv      []string
	keep        bool
	v1          bool
	cached      bool
	baseline    bool // the reverse-proxy path
	relay       bool // the tcp-relay path
	baseIdle    int  // the reverse proxy's idle upstream connections per host
	cpuprofile  string
	profileC    int // the concurrency profiled; 0: the highest
	json        bool
	svcCPUs     string // svc's and the references' CPUs (taskset list); "": no pinning
}

// maxMCPCalls bounds -n and -warmup: a phase keeps every latency.
const maxMCPCalls = 10_000_000

func parseMCPFlags(args []string, stderr io.Writer) (*mcpOptions, error) {
	fs := flag.NewFlagSet("svcbench mcp", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &mcpOptions{}
	conc := fs.String("c", "1,32", "comma-separated concurrency levels (workers, each with its own sessions)")
	fs.IntVar(&o.n, "n", 6000, "measured calls per path at each concurrency, spread over the rounds")
	fs.IntVar(&o.warmup, "warmup", 300, "calls per path at each concurrency before its rounds")
	fs.IntVar(&o.rounds, "rounds", 5, "interleaved rounds: each path once per round, the order rotating")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "limit for one call")
	fs.StringVar(&o.svcBin, "svc-bin", "", "prebuilt svc binary (default: go build ./cmd/svc)")
	envFlag(fs, &o.svcEnv, "extra KEY=VALUE for svc's environment (repeatable)")
	fs.BoolVar(&o.keep, "keep", false, "keep svc's temporary directory (data and svc.log)")
	fs.BoolVar(&o.v1, "v1", true, "measure POST /mcp/v1/{server_id}/tools/call (plain JSON) too")
	fs.BoolVar(&o.cached, "cached", true, "measure a read-only tool served from svc's tool-call cache too")
	fs.BoolVar(&o.baseline, "baseline", true, "measure a bare httputil.ReverseProxy (own process) in front of the fake too: the reference for svc")
	fs.BoolVar(&o.relay, "relay", true, "measure a TCP relay (own process, bytes copied unread) in front of the fake too: the floor of any hop")
	fs.IntVar(&o.baseIdle, "baseline-idle", 512, "idle upstream connections per host the reverse proxy keeps, like svc's pool (0: the default transport's 2, which makes it reconnect under concurrency)")
	fs.StringVar(&o.svcCPUs, "svc-cpus", "", "run svc and the reference hops on these CPUs only (a taskset list, e.g. 1); run svcbench itself with taskset on the others, so the client and the fake do not share svc's cores")
	fs.StringVar(&o.cpuprofile, "cpuprofile-svc", "", "write a CPU profile of svc during the rounds at -cpuprofile-c to this file")
	fs.IntVar(&o.profileC, "cpuprofile-c", 0, "the concurrency whose rounds are profiled (default: the highest)")
	fs.BoolVar(&o.json, "json", false, "print the results as JSON too")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	for _, f := range strings.Split(*conc, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 || c > 1024 {
			return nil, fmt.Errorf("-c: bad concurrency %q (1 to 1024)", f)
		}
		o.concurrency = append(o.concurrency, c)
	}
	switch {
	case o.n < 1 || o.n > maxMCPCalls:
		return nil, fmt.Errorf("-n must be 1 to %d", maxMCPCalls)
	case o.warmup < 0 || o.warmup > maxMCPCalls:
		return nil, fmt.Errorf("-warmup must be 0 to %d", maxMCPCalls)
	case o.rounds < 1 || o.rounds > o.n:
		return nil, errors.New("-rounds must be at least 1 and at most -n")
	case o.timeout <= 0:
		return nil, errors.New("-timeout must be positive")
	case o.baseIdle < 0 || o.baseIdle > 1<<16:
		return nil, errors.New("-baseline-idle must be 0 to 65536")
	case o.profileC != 0 && !slices.Contains(o.concurrency, o.profileC):
		return nil, fmt.Errorf("-cpuprofile-c %d is not one of -c", o.profileC)
	case o.profileC != 0 && o.cpuprofile == "":
		return nil, errors.New("-cpuprofile-c goes with -cpuprofile-svc")
	}
	if o.profileC == 0 {
		o.profileC = slices.Max(o.concurrency)
	}
	return o, nil
}

// runMCP is `svcbench mcp`; its exit code.
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseMCPFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "svcbench mcp:", err)
		}
		return 2
	}
	rep, err := benchMCP(ctx, o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "svcbench mcp:", err)
		return 1
	}
	return emit(stdout, stderr, o.json, rep, func(w io.Writer) error { return writeMCPTable(w, rep) }, rep.Failures)
}

// mcpPath is one way of calling the tool, with a caller per worker.
type mcpPath struct {
	name      string
	svc       bool // through svc: its allocations are counted
	reference bool // a reference hop (relay or bare proxy) in front of the fake
	// cpu is the CPU time used so far by the process serving the path: the
	// fake for direct, the reference's own, svc's.
	cpu     func() (time.Duration, error)
	callers []mcpCaller
}

// The reference paths' names.
const (
	mcpRelayPath = "tcp-relay"
	mcpProxyPath = "reverse-proxy"
)

// mcpEndpointPath is the fake MCP server's endpoint on its origin, and on
// the references' in front of it.
const mcpEndpointPath = "/mcp"

// mcpRef is a reference hop in front of the fake, in its own process.
type mcpRef struct {
	name string // its path's
	c    *child
}

// startMCPRefs starts the reference hops -relay and -baseline ask for, in
// front of the fake at origin, in the order their paths run. stop stops
// those started, whatever failed.
func startMCPRefs(ctx context.Context, o *mcpOptions, origin string, progress io.Writer) ([]mcpRef, func(), error) {
	var refs []mcpRef
	stop := func() {
		for _, r := range refs {
			stopChild(r.c, progress)
		}
	}
	start := func(name, what string, env []string) error {
		c, err := startChildOn(ctx, what, env, o.svcCPUs)
		if err != nil {
			return err // startChildOn stopped it
		}
		refs = append(refs, mcpRef{name: name, c: c})
		return nil
	}
	if o.relay {
		if err := start(mcpRelayPath, "tcp relay", relayChildEnv(origin)); err != nil {
			return nil, stop, err
		}
	}
	if o.baseline {
		if err := start(mcpProxyPath, "reverse proxy", baselineChildEnv(origin, o.baseIdle)); err != nil {
			return nil, stop, err
		}
	}
	return refs, stop, nil
}

// benchMCP starts the fake server and svc, registers the server, opens the
// sessions and runs every concurrency.
func benchMCP(ctx context.Context, o *mcpOptions, progress io.Writer) (_ *mcpReport, err error) {
	rep := &mcpReport{Started: time.Now().UTC().Format(time.RFC3339), LoadStart: loadAverage(),
		Calls: o.n, Rounds: o.rounds, Warmup: o.warmup}
	var profFile *os.File
	if o.cpuprofile != "" {
		if profFile, err = os.Create(o.cpuprofile); err != nil {
			return nil, err
		}
		defer closeProfile(profFile, o.cpuprofile, rep, progress)
	}

	up, err := startChild(ctx, "fake MCP server", mcpUpstreamChildEnv("127.0.0.1:0"))
	if err != nil {
		return nil, err
	}
	defer stopChild(up, progress)
	rep.Upstream = up.url
	origin := strings.TrimSuffix(up.url, mcpEndpointPath)
	refs, stopRefs, err := startMCPRefs(ctx, o, origin, progress)
	defer stopRefs()
	if err != nil {
		return nil, err
	}
	rep.setRefs(refs, o.baseIdle)

	env := append([]string{"SVC_MCP_ALLOW_PRIVATE=true", "MCP_GATEWAY_ENABLED=true"}, o.svcEnv...)
	gw, err := startGateway(ctx, gatewaySpec{bin: o.svcBin, upstream: origin + "/v1", extraEnv: env, cpus: o.svcCPUs,
		pprof: profFile != nil, keepDir: o.keep, log: progress})
	if err != nil {
		return nil, err
	}
	defer gw.stop(o.keep)
	if o.keep {
		fmt.Fprintln(progress, "svcbench mcp: svc's directory:", gw.dir)
	}
	if gw.pprofAddr != "" {
		if err := probePprof(ctx, gw.pprofAddr); err != nil {
			fmt.Fprintf(progress, "svcbench mcp: warning: svc does not answer on SVC_PPROF_ADDR=%s (%v); no CPU profile\n", gw.pprofAddr, err)
			gw.pprofAddr = ""
		}
	}
	if err := registerMCPServer(ctx, gw.proxyURL, gw.admin, up.url); err != nil {
		return nil, err
	}
	rep.Gateway = gw.proxyURL + "/" + mcpServerID + "/mcp"

	maxC := slices.Max(o.concurrency)
	paths, closeAll, err := openMCPPaths(ctx, o, maxC, up, refs, gw)
	defer closeAll()
	if err != nil {
		return nil, err
	}
	for _, p := range paths {
		rep.Paths = append(rep.Paths, p.name)
	}
	before, _ := upstreamCalls(ctx, origin)

	for _, c := range o.concurrency {
		m := &mcpMeasure{o: o, c: c, paths: paths, metrics: gw.proxyURL + "/metrics", progress: progress}
		if c == o.profileC && gw.pprofAddr != "" {
			m.profile = func(secs int) func() error {
				fmt.Fprintf(progress, "svcbench mcp: c=%d: taking a %ds CPU profile of svc into %s\n", c, secs, o.cpuprofile)
				return fetchProfile(ctx, gw.pprofAddr, secs, profFile)
			}
		}
		sc, err := m.run(ctx)
		if err != nil {
			return nil, err
		}
		if m.profiled {
			rep.CPUProfile, rep.CPUProfiled = o.cpuprofile, fmt.Sprintf("c=%d", c)
		}
		rep.add(sc)
		fmt.Fprintln(progress, "svcbench mcp:", sc.summary())
	}
	if after, err := upstreamCalls(ctx, origin); err == nil && before != nil {
		rep.UpstreamCalls = map[string]int64{}
		for tool, n := range after {
			rep.UpstreamCalls[tool] = n - before[tool]
		}
	}
	if hwm, err := procStatus(gw.pid, "VmHWM"); err == nil {
		rep.PeakRSS = hwm
	}
	rep.LoadEnd = loadAverage()
	return rep, nil
}

// closeProfile closes the profile file; it is removed when no profile was
// taken.
func closeProfile(f *os.File, name string, rep *mcpReport, progress io.Writer) {
	if err := f.Close(); err != nil && rep.CPUProfile != "" {
		fmt.Fprintln(progress, "svcbench mcp: warning: writing the CPU profile:", err)
	}
	if rep.CPUProfile == "" {
		_ = os.Remove(name)
	}
}

// openMCPPaths opens maxC sessions to the fake, maxC through each
// reference and maxC to svc (the cached path shares svc's: phases run one
// after another) and makes the callers, the paths in the order they run.
// The returned function closes every session, whatever else failed.
func openMCPPaths(ctx context.Context, o *mcpOptions, maxC int, up *child, refs []mcpRef, gw *gateway) ([]mcpPath, func(), error) {
	var sessions []*mcp.ClientSession
	closeAll := func() {
		for _, s := range sessions {
			_ = s.Close()
		}
	}
	fakeAuth := "Bearer " + upstreamKey
	direct := &mcpPath{name: "direct", cpu: pidCPUFunc(up.pid)}
	svcCPU := func() (time.Duration, error) { all, _, err := gw.cpu(); return all, err }
	viaSvc := &mcpPath{name: "svc", svc: true, cpu: svcCPU}
	viaV1 := &mcpPath{name: "svc-v1", svc: true, cpu: svcCPU}
	cached := &mcpPath{name: "svc-cached", svc: true, cpu: svcCPU}
	svcURL := gw.proxyURL + "/" + mcpServerID + "/mcp"
	// The paths whose workers each hold an SDK session to url.
	type sessionPath struct {
		p         *mcpPath
		url, auth string
	}
	open := []sessionPath{{direct, up.url, fakeAuth}}
	for _, r := range refs {
		open = append(open, sessionPath{&mcpPath{name: r.name, reference: true, cpu: pidCPUFunc(r.c.pid)}, r.c.url + mcpEndpointPath, fakeAuth})
	}
	open = append(open, sessionPath{viaSvc, svcURL, "Bearer " + gw.vkey})

	sdk := newSDKClient(maxC)
	v1 := newClient(maxC, o.timeout)
	for i := range maxC {
		prefix := "w" + strconv.Itoa(i)
		var svcSession *mcp.ClientSession
		for _, sp := range open {
			cs, err := connectMCP(ctx, sdk, sp.url, sp.auth)
			if err != nil {
				if sp.p.svc {
					return nil, closeAll, fmt.Errorf("a session to svc (%s): %w%s", sp.url, err, gw.logTail())
				}
				return nil, closeAll, fmt.Errorf("a %s session to the fake MCP server (%s): %w", sp.p.name, sp.url, err)
			}
			sessions = append(sessions, cs)
			sp.p.callers = append(sp.p.callers, &sdkCaller{cs: cs, tool: mcpEchoTool, prefix: prefix})
			if sp.p == viaSvc {
				svcSession = cs
			}
		}
		if i == 0 {
			if err := hasTools(ctx, svcSession, mcpEchoTool, mcpLookupTool); err != nil {
				return nil, closeAll, fmt.Errorf("svc's %s: %w", svcURL, err)
			}
		}
		cached.callers = append(cached.callers, &sdkCaller{cs: svcSession, tool: mcpLookupTool, prefix: prefix, fixed: true})
		viaV1.callers = append(viaV1.callers, &v1Caller{client: v1, auth: "Bearer " + gw.vkey, prefix: prefix,
			url: gw.proxyURL + "/mcp/v1/" + mcpServerID + "/tools/call"})
	}
	var paths []mcpPath
	for _, sp := range open {
		paths = append(paths, *sp.p)
	}
	if o.v1 {
		paths = append(paths, *viaV1)
	}
	if o.cached {
		paths = append(paths, *cached)
	}
	return paths, closeAll, nil
}

// pidCPUFunc reads the CPU time process pid has used so far.
func pidCPUFunc(pid int) func() (time.Duration, error) {
	return func() (time.Duration, error) { return pidCPU(pid) }
}

// logTail is the end of svc's log, for an error message; "" when none.
func (g *gateway) logTail() string {
	if len(g.procs) == 0 {
		return ""
	}
	return "\n" + g.procs[0].logTail()
}

// hasTools checks that the session lists the tools.
func hasTools(ctx context.Context, cs *mcp.ClientSession, names ...string) error {
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		return fmt.Errorf("tools/list: %w", err)
	}
	for _, n := range names {
		if !slices.ContainsFunc(res.Tools, func(t *mcp.Tool) bool { return t.Name == n }) {
			return fmt.Errorf("tools/list has no %q", n)
		}
	}
	return nil
}

// mcpMeasure runs one concurrency: warm-up, then the rounds.
type mcpMeasure struct {
	o        *mcpOptions
	c        int
	paths    []mcpPath
	metrics  string // svc's /metrics
	progress io.Writer
	// profile, when set, starts a CPU profile of svc of secs seconds and
	// returns its wait; profiled says it was taken.
	profile  func(secs int) func() error
	profiled bool
}

// mcpAcc is what one path's measured phases add up to.
type mcpAcc struct {
	res    phaseResult
	rounds []float64 // p50 of each round, ms
	// allocs are svc's heap allocations and cpu the CPU time of the
	// process serving the path (see mcpPath.cpu) over calls calls; ok is
	// false once a reading failed.
	allocs     float64
	allocCalls int
	allocOK    bool
	cpu        time.Duration
	cpuCalls   int
	cpuOK      bool
}

func (m *mcpMeasure) run(ctx context.Context) (*mcpScenario, error) {
	acc := make([]mcpAcc, len(m.paths))
	for i := range acc {
		acc[i].allocOK, acc[i].cpuOK = m.paths[i].svc, true
	}
	sc := &mcpScenario{Concurrency: m.c}
	note := func(r phaseResult) {
		sc.Failures += r.failures
		if sc.FirstFailure == "" && r.firstError != nil {
			sc.FirstFailure = r.firstError.Error()
		}
	}

	warmStart := time.Now()
	for _, p := range m.paths {
		note(runMCPPhase(ctx, p, m.c, m.o.warmup, m.o.timeout))
	}
	var wait func() error
	if m.profile != nil {
		// The rounds take about as long as the warm-up, scaled.
		expected := time.Since(warmStart) * time.Duration(m.o.n) / time.Duration(max(m.o.warmup, 1))
		wait = m.profile(profileSeconds(expected))
	}
	per := (m.o.n + m.o.rounds - 1) / m.o.rounds
	left := m.o.n
	for r := range m.o.rounds {
		n := min(per, left)
		left -= n
		for k := range m.paths {
			i := (k + r) % len(m.paths)
			note(m.phase(ctx, m.paths[i], &acc[i], n))
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
	}
	if wait != nil {
		if err := wait(); err != nil {
			fmt.Fprintln(m.progress, "svcbench mcp: warning: no CPU profile of svc:", err)
		} else {
			m.profiled = true
		}
	}
	sc.Direct, sc.DirectCPUPerCall = stats(acc[0].res), acc[0].cpuPerCall()
	for i := 1; i < len(m.paths); i++ {
		a := &acc[i]
		pr := mcpPathResult{Path: m.paths[i].name, Reference: m.paths[i].reference, phaseStats: stats(a.res),
			AllocsPerCall: -1, CPUPerCall: a.cpuPerCall()}
		pr.AddedP50, pr.AddedP99, pr.RPSRatio = added(sc.Direct, pr.phaseStats)
		for r := range a.rounds {
			pr.AddedP50Rounds = append(pr.AddedP50Rounds, a.rounds[r]-acc[0].rounds[r])
		}
		if a.allocOK && a.allocCalls > 0 {
			pr.AllocsPerCall = a.allocs / float64(a.allocCalls)
		}
		sc.Paths = append(sc.Paths, pr)
	}
	setBeyondProxy(sc.Paths)
	return sc, nil
}

// phase runs n calls of p, reading svc's allocations and the serving
// process's CPU time around them, and adds them to a.
func (m *mcpMeasure) phase(ctx context.Context, p mcpPath, a *mcpAcc, n int) phaseResult {
	var mallocs0 float64
	var cpu0 time.Duration
	var err error
	if a.allocOK {
		mallocs0, err = mallocs(ctx, http.DefaultClient, m.metrics)
		a.allocOK = err == nil
	}
	if a.cpuOK {
		cpu0, err = p.cpu()
		a.cpuOK = err == nil
	}
	res := runMCPPhase(ctx, p, m.c, n, m.o.timeout)
	if a.cpuOK {
		cpu1, err := p.cpu()
		a.cpuOK = err == nil
		a.cpu += cpu1 - cpu0
		a.cpuCalls += res.requests
	}
	if a.allocOK {
		mallocs1, err := mallocs(ctx, http.DefaultClient, m.metrics)
		a.allocOK = err == nil
		a.allocs += mallocs1 - mallocs0
		a.allocCalls += res.requests
	}
	a.rounds = append(a.rounds, ms(percentile(res.latency, 50)))
	a.res = mergePhases(a.res, res)
	return res
}

// cpuPerCall is the serving process's CPU time per call in µs, -1 when
// unknown.
func (a *mcpAcc) cpuPerCall() float64 {
	if !a.cpuOK || a.cpuCalls == 0 {
		return -1
	}
	return float64(a.cpu) / float64(time.Microsecond) / float64(a.cpuCalls)
}

// mergePhases is a and b as one phase: their calls, failures and time.
func mergePhases(a, b phaseResult) phaseResult {
	a.requests += b.requests
	a.failures += b.failures
	if a.firstError == nil {
		a.firstError = b.firstError
	}
	a.elapsed += b.elapsed
	a.latency = append(a.latency, b.latency...)
	slices.Sort(a.latency)
	return a
}

// loadAverage is the first three fields of /proc/loadavg; "" where there is
// none.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
