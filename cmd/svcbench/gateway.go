package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// gateway is the svc under test: a subprocess svcbench started (or, in a
// split setup, two: proxy and management in one, the bridge in another),
// or one already running (pid 0 when unknown).
type gateway struct {
	proxyURL  string // http://127.0.0.1:<PROXY_PORT>
	mgmtURL   string // http://127.0.0.1:<MANAGEMENT_PORT>; "" with -gateway
	bridgeURL string // http://127.0.0.1:<BRIDGE_PORT>; "" with -gateway
	policyURL string // http://127.0.0.1:<POLICY_PORT>; "" with -gateway
	admin     string // ADMIN_API_KEY of a started svc
	vkey      string
	pid       int // the proxy's process (management's when there is no proxy)
	// pprofAddr is svc's SVC_PPROF_ADDR when it was asked for one.
	pprofAddr string

	procs []*svcProc // the processes started, the proxy's first
	dir   string
}

// svcProc is one `svc serve` process svcbench started.
type svcProc struct {
	cmd     *exec.Cmd
	exited  chan struct{} // closed when the process exits
	waitErr error
	logPath string
}

// gatewaySpec says how to start svc.
type gatewaySpec struct {
	bin      string   // prebuilt binary; "" builds ./cmd/svc
	upstream string   // the fake's base URL including /v1
	extraEnv []string // KEY=VALUE added last, so they win
	pprof    bool     // set SVC_PPROF_ADDR to a free loopback port
	keepDir  bool
	log      io.Writer // progress messages
	// serviceType is SERVICE_TYPE: "" runs every component in one process;
	// "api-server" runs management alone (no proxy waited for, no virtual
	// key made); anything else must include proxy and api-server.
	serviceType string
	// bridge starts a second process with the same settings and
	// SERVICE_TYPE=bridge (a split setup: extraEnv names Redis and
	// PostgreSQL), and waits for its /ready too.
	bridge bool
	// cpus, when set, runs svc's processes on those CPUs only (taskset's
	// list, e.g. "1"): -svc-cpus.
	cpus string
	// bridgeCPUs, when set, runs the bridge process (bridge) on those CPUs
	// instead of cpus: -bridge-cpus, the bridge on other machines' cores.
	bridgeCPUs string
}

// upstreamKey is the provider key svc sends to the fake, which checks it.
const upstreamKey = "sk-bench"

// portNames are the port settings svcbench gives a free port each, so
// nothing clashes with another svc on this machine; ports of components a
// build lacks are ignored.
var portNames = []string{"PROXY_PORT", "MANAGEMENT_PORT", "COMPLIANCE_PORT", "POLICY_PORT", "BRIDGE_PORT", "FRONTEND_PORT"}

// startGateway builds svc if needed, starts `svc serve` on free loopback
// ports with its data in a fresh directory, waits until /ready answers 200
// and creates a virtual key through the management API.
func startGateway(ctx context.Context, spec gatewaySpec) (_ *gateway, err error) {
	dir, err := os.MkdirTemp("", "svcbench-")
	if err != nil {
		return nil, err
	}
	g := &gateway{dir: dir}
	defer func() {
		if err != nil {
			g.stop(spec.keepDir)
		}
	}()

	bin := spec.bin
	if bin == "" {
		bin = filepath.Join(dir, "svc")
		fmt.Fprintln(spec.log, "svcbench: building ./cmd/svc …")
		if err := buildSvc(ctx, bin); err != nil {
			return g, err
		}
	}

	ports, err := freePorts(len(portNames) + 1) // the last for pprof
	if err != nil {
		return g, err
	}
	g.admin = randomHex(24)
	env := minimalEnv()
	for i, name := range portNames {
		env = append(env, name+"="+strconv.Itoa(ports[i]))
	}
	env = append(env,
		"SVC_HOST=127.0.0.1",
		"ADMIN_API_KEY="+g.admin,
		"OPENAI_API_KEY="+upstreamKey,
		"OPENAI_API_BASE="+spec.upstream,
		// The load repeats one request: with the cache on, every request
		// after the first would be a hit and the proxy path would not be
		// measured. The cache's own costs are Go benchmarks in
		// internal/cache (hits per tier, the miss path).
		"SEMANTIC_CACHE_ENABLED=false",
	)
	if spec.serviceType != "" {
		env = append(env, "SERVICE_TYPE="+spec.serviceType)
	}
	if spec.pprof {
		g.pprofAddr = "127.0.0.1:" + strconv.Itoa(ports[len(portNames)])
		env = append(env, "SVC_PPROF_ADDR="+g.pprofAddr)
	}
	for _, kv := range spec.extraEnv {
		if v, ok := strings.CutPrefix(kv, "SVC_PPROF_ADDR="); ok && spec.pprof {
			g.pprofAddr = v
		}
	}
	// procEnv is a process's environment: its data dir, then the caller's
	// settings, which win.
	procEnv := func(env []string, data string) []string {
		return append(append(slices.Clone(env), "SVC_DATA_DIR="+filepath.Join(dir, data)), spec.extraEnv...)
	}

	url := func(i int) string { return "http://127.0.0.1:" + strconv.Itoa(ports[i]) }
	g.proxyURL, g.mgmtURL, g.bridgeURL, g.policyURL = url(0), url(1), url(4), url(3)
	first, err := g.start(bin, procEnv(env, "data"), "svc.log", spec.cpus)
	if err != nil {
		return g, err
	}
	wait := []string{g.proxyURL, g.mgmtURL}
	if spec.serviceType == "api-server" {
		wait, g.proxyURL = wait[1:], ""
	}
	for _, u := range wait {
		if err := first.waitReady(ctx, u+"/ready", 60*time.Second); err != nil {
			return g, err
		}
	}
	if spec.bridge {
		// Its own data dir (its spool) and no pprof listener of its own.
		benv := slices.DeleteFunc(procEnv(env, "data-bridge"), func(kv string) bool { return strings.HasPrefix(kv, "SVC_PPROF_ADDR=") })
		cpus := cmp.Or(spec.bridgeCPUs, spec.cpus)
		b, err := g.start(bin, append(benv, "SERVICE_TYPE=bridge"), "svc-bridge.log", cpus)
		if err != nil {
			return g, err
		}
		if err := b.waitReady(ctx, g.bridgeURL+"/ready", 60*time.Second); err != nil {
			return g, err
		}
	}
	if g.proxyURL == "" {
		return g, nil
	}
	g.vkey, err = createVirtualKey(ctx, g.mgmtURL, g.admin)
	if err != nil {
		return g, fmt.Errorf("%w\n%s", err, first.logTail())
	}
	return g, nil
}

// start runs `bin serve` with env on cpus (taskset's list; "" any), its
// output in the gateway's directory, and adds it to g's processes (the
// first one started gives g its pid).
func (g *gateway) start(bin string, env []string, logName, cpus string) (*svcProc, error) {
	p := &svcProc{logPath: filepath.Join(g.dir, logName), exited: make(chan struct{})}
	logFile, err := os.Create(p.logPath)
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd := commandOn(cpus, bin, "serve")
	cmd.Env = env
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	p.cmd = cmd
	if g.pid == 0 {
		g.pid = cmd.Process.Pid
	}
	g.procs = append(g.procs, p)
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// buildSvc runs `go build -o bin ./cmd/svc` in the module's root.
func buildSvc(ctx context.Context, bin string) error {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return errors.New("not inside the svc module: run svcbench from the repository, or pass -svc-bin")
	}
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/svc")
	build.Dir = filepath.Dir(gomod)
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/svc: %w\n%s", err, out)
	}
	return nil
}

// minimalEnv is what svc inherits from this process: enough to run, but none
// of the caller's svc, database or Redis settings, so the benchmark always
// measures the embedded single-process setup.
func minimalEnv() []string {
	var env []string
	for _, name := range []string{"PATH", "HOME", "TMPDIR", "TZ", "GOMAXPROCS", "GOGC", "GOMEMLIMIT"} {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

func freePorts(n int) ([]int, error) {
	var ports []int
	var lns []net.Listener
	defer func() {
		for _, ln := range lns {
			ln.Close()
		}
	}()
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		lns = append(lns, ln)
		ports = append(ports, ln.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// waitReady polls url until it answers 200, the process exits or limit passes.
func (p *svcProc) waitReady(ctx context.Context, url string, limit time.Duration) error {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(limit)
	var last string
	for {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		resp, err := client.Do(req)
		if err == nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			last = fmt.Sprintf("status %d: %s", resp.StatusCode, bytes.TrimSpace(b))
		} else {
			last = err.Error()
		}
		select {
		case <-p.exited:
			return fmt.Errorf("svc exited before %s answered (%v):\n%s", url, p.waitErr, p.logTail())
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready after %v (last: %s):\n%s", url, limit, last, p.logTail())
		}
	}
}

// createVirtualKey creates the virtual key the benchmark calls svc with.
func createVirtualKey(ctx context.Context, mgmtURL, admin string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, mgmtURL+"/api/enterprise/vkeys", strings.NewReader(`{"alias":"bench"}`))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		return "", fmt.Errorf("creating a virtual key: %w", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode/100 != 2 {
		return "", fmt.Errorf("creating a virtual key: status %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	var created struct {
		Key string `json:"key"`
	}
	if err := json.Unmarshal(b, &created); err != nil || created.Key == "" {
		return "", fmt.Errorf("creating a virtual key: no key in the answer %s", b)
	}
	return created.Key, nil
}

// stop ends the subprocesses (SIGTERM, then SIGKILL after 10s), the last
// started first, and removes the directory unless keep is set.
func (g *gateway) stop(keep bool) {
	for i := len(g.procs) - 1; i >= 0; i-- {
		p := g.procs[i]
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	if g.dir != "" && !keep {
		_ = os.RemoveAll(g.dir)
	}
}

// logTail is the end of the process's output, for error messages.
func (p *svcProc) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return "svc output (" + p.logPath + "):\n  " + strings.Join(lines, "\n  ")
}

// mallocs reads go_memstats_mallocs_total, the number of heap allocations svc
// made since it started, from its Prometheus endpoint.
func mallocs(ctx context.Context, client *http.Client, metricsURL string) (float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, metricsURL, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, fmt.Errorf("GET %s: status %d", metricsURL, resp.StatusCode)
	}
	return metricValue(resp.Body, "go_memstats_mallocs_total")
}

// metricValue finds the unlabelled sample name in a Prometheus text exposition.
func metricValue(r io.Reader, name string) (float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), name)
		if !ok || !strings.HasPrefix(rest, " ") {
			continue
		}
		fields := strings.Fields(rest)
		return strconv.ParseFloat(fields[0], 64)
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s in the metrics", name)
}

// procStatus reads a "kB" field such as VmRSS or VmHWM of /proc/<pid>/status,
// in bytes.
func procStatus(pid int, field string) (int64, error) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return statusField(f, field)
}

func statusField(r io.Reader, field string) (int64, error) {
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), field+":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("%s: unexpected %q", field, rest)
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		return kb << 10, err
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no %s in the process status", field)
}

// rssSampler records the largest VmRSS of a process while it runs.
type rssSampler struct {
	stop chan struct{}
	wg   sync.WaitGroup
	max  int64
}

// sampleRSS samples pid's VmRSS every interval until the sampler is stopped;
// it samples nothing for pid 0.
func sampleRSS(pid int, interval time.Duration) *rssSampler {
	s := &rssSampler{stop: make(chan struct{})}
	if pid == 0 {
		return s
	}
	s.wg.Go(func() {
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			if rss, err := procStatus(pid, "VmRSS"); err == nil {
				s.max = max(s.max, rss)
			}
			select {
			case <-s.stop:
				return
			case <-t.C:
			}
		}
	})
	return s
}

// done stops sampling and returns the largest VmRSS seen, 0 if none.
func (s *rssSampler) done() int64 {
	close(s.stop)
	s.wg.Wait()
	return s.max
}

// userHZ is the unit of the times in /proc/<pid>/stat (USER_HZ, 100 on
// every Linux architecture svc builds for).
const userHZ = 100

// cpu is the CPU time (user and system, every thread) the gateway's
// processes have used so far, all of them and the first (the proxy's, in a
// split setup: without the bridge process), from /proc/<pid>/stat at 10 ms
// resolution; an error where /proc is not.
func (g *gateway) cpu() (all, proxy time.Duration, err error) {
	if len(g.procs) == 0 {
		return 0, 0, errors.New("no process of svc to read")
	}
	for i, p := range g.procs {
		d, err := pidCPU(p.cmd.Process.Pid)
		if err != nil {
			return 0, 0, err
		}
		if i == 0 {
			proxy = d
		}
		all += d
	}
	return all, proxy, nil
}

// pidCPU is the CPU time process pid has used so far (see gateway.cpu).
func pidCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	return statCPU(string(b))
}

// statCPU reads utime and stime (fields 14 and 15) of a /proc/<pid>/stat
// line; the command name in parentheses before them may hold spaces.
func statCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("/proc stat: no command name")
	}
	f := strings.Fields(stat[i+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name, want 13 or more", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("/proc stat: CPU time %q", s)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}
