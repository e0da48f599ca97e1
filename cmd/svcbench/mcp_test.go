package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeMCPSvcEnv makes the test binary act as a tiny svc with a tool
// gateway: see fakeMCPSvc. fakeMCPSvcBreak ("v1") makes its plain-JSON
// path answer with the wrong text.
const (
	fakeMCPSvcEnv   = "SVCBENCH_FAKE_MCP_SVC"
	fakeMCPSvcBreak = "SVCBENCH_FAKE_MCP_SVC_BREAK"
)

// fakeMCPSvc stands in for `svc serve` with the tool gateway, so the
// command can be tested without building svc: it reads svc's settings,
// answers /ready and /metrics, makes virtual keys on the management port,
// takes registrations (admin key) on the proxy port and relays
// /{server_id}/mcp (an SDK server whose tools call the registered server
// through one SDK client session) and /mcp/v1/{server_id}/tools/call to the
// registered server, for callers with its virtual key. It has no cache.
func fakeMCPSvc() int {
	if len(os.Args) < 2 || os.Args[1] != "serve" || os.Getenv("SVC_MCP_ALLOW_PRIVATE") != "true" {
		fmt.Fprintln(os.Stderr, "fake svc: want serve with SVC_MCP_ALLOW_PRIVATE=true, got", os.Args[1:])
		return 2
	}
	host, admin := os.Getenv("SVC_HOST"), os.Getenv("ADMIN_API_KEY")
	const vkey = "sk-svc-mcp-fake"
	var (
		mu       sync.Mutex
		servers  = map[string]*mcp.Server{}
		sessions = map[string]*mcp.ClientSession{}
	)
	keyed := func(key string, h http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") != "Bearer "+key {
				http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
				return
			}
			h(w, r)
		}
	}
	proxy := http.NewServeMux()
	proxy.HandleFunc("GET /ready", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{"status":"ready"}`)) })
	proxy.HandleFunc("GET /metrics", func(w http.ResponseWriter, _ *http.Request) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(w, "go_memstats_mallocs_total %d\n", ms.Mallocs)
	})
	proxy.HandleFunc("POST /api/mcp/servers", keyed(admin, func(w http.ResponseWriter, r *http.Request) {
		var reg map[string]string
		if json.NewDecoder(r.Body).Decode(&reg) != nil || reg["auth_type"] != "bearer" {
			http.Error(w, `{"error":{"message":"bad registration"}}`, http.StatusBadRequest)
			return
		}
		cs, err := connectMCP(context.Background(), http.DefaultClient, reg["base_url"], "Bearer "+reg["auth_token"])
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		tools, err := cs.ListTools(r.Context(), nil)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		srv := mcp.NewServer(&mcp.Implementation{Name: "fake-svc", Version: "1"}, nil)
		for _, t := range tools.Tools {
			srv.AddTool(t, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return cs.CallTool(ctx, &mcp.CallToolParams{Name: req.Params.Name, Arguments: req.Params.Arguments})
			})
		}
		mu.Lock()
		servers[reg["id"]], sessions[reg["id"]] = srv, cs
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]string{"id": reg["id"]})
	}))
	relay := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		mu.Lock()
		defer mu.Unlock()
		return servers[r.PathValue("id")]
	}, nil)
	proxy.HandleFunc("/{id}/mcp", keyed(vkey, relay.ServeHTTP))
	proxy.HandleFunc("POST /mcp/v1/{id}/tools/call", keyed(vkey, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cs := sessions[r.PathValue("id")]
		mu.Unlock()
		var in mcp.CallToolParamsRaw
		if cs == nil || json.NewDecoder(r.Body).Decode(&in) != nil {
			http.Error(w, `{"error":{"message":"no such server or bad body"}}`, http.StatusBadRequest)
			return
		}
		res, err := cs.CallTool(r.Context(), &mcp.CallToolParams{Name: in.Name, Arguments: in.Arguments})
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if os.Getenv(fakeMCPSvcBreak) == "v1" {
			res.Content = []mcp.Content{&mcp.TextContent{Text: "something else"}}
		}
		json.NewEncoder(w).Encode(res)
	}))

	mgmt := http.NewServeMux()
	mgmt.HandleFunc("GET /ready", func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(`{"status":"ready"}`)) })
	mgmt.HandleFunc("POST /api/enterprise/vkeys", keyed(admin, func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]string{"key": vkey})
	}))
	pp := http.NewServeMux()
	pp.HandleFunc("/debug/pprof/", pprof.Index)
	pp.HandleFunc("/debug/pprof/profile", pprof.Profile)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	all := []*http.Server{
		{Addr: host + ":" + os.Getenv("PROXY_PORT"), Handler: proxy},
		{Addr: host + ":" + os.Getenv("MANAGEMENT_PORT"), Handler: mgmt},
	}
	if addr := os.Getenv("SVC_PPROF_ADDR"); addr != "" {
		all = append(all, &http.Server{Addr: addr, Handler: pp})
	}
	errc := make(chan error, len(all))
	for _, s := range all {
		go func() { errc <- s.ListenAndServe() }()
	}
	select {
	case <-ctx.Done():
		for _, s := range all {
			s.Close()
		}
		return 0
	case err := <-errc:
		fmt.Fprintln(os.Stderr, "fake svc:", err)
		return 1
	}
}

// runMCPBench runs `svcbench mcp` briefly against the stand-in svc, with
// extra arguments; its exit code, stdout and stderr.
func runMCPBench(t *testing.T, extra ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	args := append([]string{"mcp", "-svc-bin", os.Args[0], "-svc-env", fakeMCPSvcEnv + "=1",
		"-n", "30", "-warmup", "4", "-rounds", "2", "-c", "1,3", "-json"}, extra...)
	code := run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// TestMCPBench runs the whole command: the fake MCP server in its own
// process, the TCP relay and the bare reverse proxy in theirs, svc (the
// stand-in) in another, registration, a virtual key, sessions, every path at
// two concurrencies, a CPU profile and the report. Every call's answer is
// checked by the command, and the fake's count shows the echo calls of every
// path reached it: the SDK sessions work through both references, the
// proxy's standalone SSE stream included.
func TestMCPBench(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	prof := filepath.Join(t.TempDir(), "svc.pprof")
	code, out, errOut := runMCPBench(t, "-cpuprofile-svc", prof, "-cpuprofile-c", "1")
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	_, js, _ := strings.Cut(out, "\n{")
	var rep mcpReport
	if err := json.Unmarshal([]byte("{"+js), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(rep.Scenarios) != 2 || rep.Scenarios[1].Concurrency != 3 || rep.Failures != 0 || rep.LoadStart == "" || rep.PeakRSS <= 0 ||
		rep.Relay == "" || rep.ReverseProxy == "" || rep.ReverseProxyIdle != 512 {
		t.Fatalf("report: %+v", rep)
	}
	// 5 echo paths × 2 concurrencies × (30 + 4 warm-up) calls.
	if got := rep.UpstreamCalls[mcpEchoTool]; got != 5*2*34 {
		t.Errorf("echo calls that reached the fake: %d, want %d", got, 5*2*34)
	}
	want := []string{"tcp-relay", "reverse-proxy", "svc", "svc-v1", "svc-cached"}
	if fmt.Sprint(rep.Paths) != fmt.Sprint(append([]string{"direct"}, want...)) {
		t.Errorf("paths %q", rep.Paths)
	}
	for _, sc := range rep.Scenarios {
		if sc.Direct.Requests != 30 || sc.Direct.P50 <= 0 || len(sc.Paths) != len(want) || sc.DirectCPUPerCall < 0 {
			t.Fatalf("c=%d: direct %+v, %d paths", sc.Concurrency, sc.Direct, len(sc.Paths))
		}
		proxy := sc.Paths[1]
		for i, name := range want {
			p := sc.Paths[i]
			if p.Path != name || p.Reference != (i < 2) || p.Requests != 30 || p.Failures != 0 || p.P50 <= 0 || p.CPUPerCall < 0 ||
				len(p.AddedP50Rounds) != 2 || p.AddedP50 != p.P50-sc.Direct.P50 || p.AddedP99 != p.P99-sc.Direct.P99 {
				t.Errorf("c=%d path %d: %+v", sc.Concurrency, i, p)
			}
			if p.Reference {
				if p.AllocsPerCall != -1 || p.BeyondProxyP50 != nil || p.BeyondProxyP50Rounds != nil {
					t.Errorf("c=%d reference %s: svc's allocations or a beyond-proxy figure: %+v", sc.Concurrency, name, p)
				}
				continue
			}
			if p.AllocsPerCall <= 0 || p.BeyondProxyP50 == nil || math.Abs(*p.BeyondProxyP50-(p.P50-proxy.P50)) > 1e-9 ||
				len(p.BeyondProxyP50Rounds) != 2 {
				t.Errorf("c=%d path %s: allocations or beyond proxy: %+v", sc.Concurrency, name, p)
			}
		}
	}
	if b, err := os.ReadFile(prof); err != nil || len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b || rep.CPUProfiled != "c=1" {
		t.Errorf("CPU profile: %v, %d bytes, of %q\nstderr:\n%s", err, len(b), rep.CPUProfiled, errOut)
	}
	for _, want := range []string{"svc-cached", "added p50 by round", "failed calls: 0", "load average", "beyond proxy",
		"  reverse-proxy ", "  tcp-relay ", "streams flushed as they come, 512 idle connections per host"} {
		if !strings.Contains(out, want) {
			t.Errorf("table has no %q:\n%s", want, out)
		}
	}
}

// A wrong answer is a failed call: the run exits 1 naming the path.
func TestMCPBenchWrongAnswer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	code, out, errOut := runMCPBench(t, "-svc-env", fakeMCPSvcBreak+"=v1", "-cached=false", "-baseline=false", "-relay=false", "-c", "1")
	if code != 1 || !strings.Contains(out, `FAILED calls: 34; first: svc-v1: answer "something else"`) {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	for _, left := range []string{"svc-cached", "reverse", "relay", "beyond"} {
		if strings.Contains(out, left) {
			t.Errorf("%q left out, yet:\n%s", left, out)
		}
	}
}

func TestParseMCPFlags(t *testing.T) {
	o, err := parseMCPFlags(nil, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(o.concurrency) != "[1 32]" || o.profileC != 32 || !o.v1 || !o.cached || o.rounds != 5 ||
		!o.baseline || !o.relay || o.baseIdle != 512 {
		t.Errorf("defaults: %+v", o)
	}
	for _, args := range [][]string{
		{"-c", "0"}, {"-c", "x"}, {"-c", "2000"}, {"-n", "0"}, {"-n", "20000000"}, {"-warmup", "-1"}, {"-rounds", "0"},
		{"-n", "3", "-rounds", "4"}, {"-timeout", "0"}, {"-cpuprofile-c", "1"}, {"-cpuprofile-svc", "p", "-cpuprofile-c", "7"},
		{"-svc-env", "novalue"}, {"extra"}, {"-baseline-idle", "-1"}, {"-baseline-idle", "70000"},
	} {
		if _, err := parseMCPFlags(args, &bytes.Buffer{}); err == nil {
			t.Errorf("parseMCPFlags(%q): got no error", args)
		}
	}
	if code := run(context.Background(), []string{"mcp", "-n", "0"}, &bytes.Buffer{}, &bytes.Buffer{}); code != 2 {
		t.Errorf("bad flags: exit %d, want 2", code)
	}
}

// setBeyondProxy gives each path through svc its added p50 minus the
// reverse proxy's, overall and by round, and nothing without that path.
func TestSetBeyondProxy(t *testing.T) {
	path := func(name string, ref bool, added float64, rounds ...float64) mcpPathResult {
		return mcpPathResult{Path: name, Reference: ref, phaseStats: phaseStats{P50: 1 + added}, AddedP50: added, AddedP50Rounds: rounds}
	}
	paths := []mcpPathResult{
		path(mcpRelayPath, true, 0.1, 0.1, 0.1),
		path(mcpProxyPath, true, 0.25, 0.2, 0.3),
		path("svc", false, 1.0, 0.9, 1.1),
		path("svc-cached", false, 0.125, 0.1, 0.15),
	}
	setBeyondProxy(paths)
	for i, want := range []struct {
		beyond string
		rounds string
	}{{"<nil>", "[]"}, {"<nil>", "[]"}, {"0.75", "[0.7 0.8]"}, {"-0.125", "[-0.1 -0.15]"}} {
		p := paths[i]
		got := "<nil>"
		if p.BeyondProxyP50 != nil {
			got = fmt.Sprint(*p.BeyondProxyP50)
		}
		rounds := fmt.Sprint(roundTo(p.BeyondProxyP50Rounds))
		if got != want.beyond || rounds != want.rounds {
			t.Errorf("%s: beyond %s by round %s, want %s %s", p.Path, got, rounds, want.beyond, want.rounds)
		}
	}

	noProxy := []mcpPathResult{path(mcpRelayPath, true, 0.1, 0.1), path("svc", false, 1, 1)}
	setBeyondProxy(noProxy)
	if noProxy[1].BeyondProxyP50 != nil || noProxy[1].BeyondProxyP50Rounds != nil {
		t.Errorf("without the reverse proxy: %+v", noProxy[1])
	}
	var buf bytes.Buffer
	if err := writeMCPTable(&buf, &mcpReport{Paths: []string{"direct", "svc"},
		Scenarios: []mcpScenario{{Concurrency: 1, Paths: noProxy}}}); err != nil || strings.Contains(buf.String(), "beyond") {
		t.Errorf("table without the reverse proxy (%v):\n%s", err, buf.String())
	}
}

// roundTo rounds to 1e-9, so float differences print as decimals.
func roundTo(v []float64) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = math.Round(x*1e9) / 1e9
	}
	return out
}
