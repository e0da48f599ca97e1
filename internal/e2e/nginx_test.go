package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/providertest"
)

// nginxConf is the reverse-proxy configuration this test runs.
const nginxConf = "../../deploy/nginx/svc.conf"

// plannedComponents are the spec's components this build does not provide
// yet; the test stands a small HTTP server in for each, answering with its
// name in X-Test-Component, so the routes to them can be checked.
var plannedComponents = []struct{ name, upstream string }{
	{"policy", "policy:7782"},
	{"frontend", "frontend:3600"},
}

// TestNginxConfig runs deploy/nginx/svc.conf in Debian's nginx in front of
// svc's components as separate processes (two proxies, a management
// process, a compliance process and a bridge on the test PostgreSQL and
// Redis, stand-ins for the components not built yet) and checks the spec's
// path table, on the public and the internal server block: every prefix
// reaches the component that serves it, the management, compliance, policy
// and bridge paths are not reachable on the public block, a scan passes
// through the internal block, the bridge drains what the proxies logged and
// reports it through the internal block, a stream arrives incrementally,
// and a 40 MB body passes.
func TestNginxConfig(t *testing.T) {
	bin, err := exec.LookPath("nginx")
	if err != nil {
		t.Skip("nginx is not on PATH: install Debian's nginx (apt-get install nginx) to test deploy/nginx/svc.conf; .ci/run does")
	}
	shared := sharedStores(t)
	const chunkDelay = 150 * time.Millisecond
	fake := providertest.NewOpenAI(t, providertest.WithChunks(6), providertest.WithChunkDelay(chunkDelay))
	mg := start(t, fake, with(shared, "SERVICE_TYPE", "api-server"))
	px1 := start(t, fake, with(shared, "SERVICE_TYPE", "proxy", "SEMANTIC_CACHE_ENABLED", "true"))
	px2 := start(t, fake, with(shared, "SERVICE_TYPE", "proxy", "SEMANTIC_CACHE_ENABLED", "true"))
	br := start(t, fake, with(shared, "SERVICE_TYPE", "bridge"))
	// start does not report the compliance API's address: it gets a port
	// chosen here.
	compliance := freePort(t)
	_, compliancePort, _ := net.SplitHostPort(compliance)
	start(t, fake, with(shared, "SERVICE_TYPE", "compliance", "COMPLIANCE_PORT", compliancePort))

	upstreams := map[string]string{
		// The proxies answer 401 without the admin key on the tool
		// gateway's admin routes (/api/mcp/servers) as management does.
		"proxy-1:7775":    hostPort(t, taggedReplica(t, "proxy", "1", px1.proxy)),
		"proxy-2:7775":    hostPort(t, taggedReplica(t, "proxy", "2", px2.proxy)),
		"api-server:7778": hostPort(t, mg.mgmt),
		// The bridge, like management, answers 401 without the admin key:
		// a relay names it in X-Test-Component.
		"bridge:3500": hostPort(t, tagged(t, "bridge", br.bridge)),
		// So does the compliance API (the admin key or a virtual key).
		"compliance:7777": hostPort(t, tagged(t, "compliance", "http://"+compliance)),
	}
	standIns := map[string]*standIn{}
	for _, c := range plannedComponents {
		standIns[c.name] = newStandIn(c.name)
		srv := httptest.NewServer(standIns[c.name])
		t.Cleanup(srv.Close)
		upstreams[c.upstream] = hostPort(t, srv.URL)
	}
	ng := startNginx(t, bin, upstreams)
	key, _ := mg.newKey(nil)

	t.Run("routes", func(t *testing.T) {
		// Paths on each prefix of the table, and which component must answer
		// them on the public and on the internal server ("nginx": refused
		// by nginx itself, reaching no component).
		routes := []struct{ path, public, internal string }{
			{"/v1/probe", "proxy", "proxy"},
			{"/native/v1/probe", "proxy", "proxy"},
			{"/ide/v1/probe", "proxy", "proxy"},
			{"/a2a/probe", "proxy", "proxy"},
			{"/api/mcp/servers", "proxy", "proxy"},
			{"/.well-known/agent.json", "proxy", "proxy"},

			{"/api/guardrails", "nginx", "management"},
			{"/api/guard/approvals", "nginx", "management"},
			{"/api/auth/virtual-keys", "nginx", "management"},
			{"/api/enterprise/vkeys", "nginx", "management"},
			{"/api/routing/status", "nginx", "management"},
			{"/api/mcp/tools", "proxy", "proxy"}, // the tool gateway lives on the proxy: docs/decisions.md
			{"/api/mcp/auth/tokens", "nginx", "proxy"},
			{"/crm/mcp/", "proxy", "proxy"},
			{"/crm/mcp", "proxy", "proxy"},
			{"/mcp/", "proxy", "proxy"},
			{"/mcp/v1/crm/tools/call", "proxy", "proxy"},
			{"/api/admin/mcp", "nginx", "management"},
			{"/api/metacache/stats", "nginx", "management"},
			{"/api/vas/logs", "nginx", "management"},
			{"/api/vas/metrics", "nginx", "management"}, // the bridge serves it too; docs/decisions.md
			{"/api/providers/perf", "nginx", "management"},
			{"/api/a2a/agents", "nginx", "management"},
			{"/api/analytics", "nginx", "management"},
			{"/api/audit/logs", "nginx", "management"},
			{"/api/health/comprehensive", "nginx", "management"},
			{"/api/alerts", "nginx", "management"},

			{"/api/compliance/intelligent/health", "nginx", "compliance"},
			{"/v1/compliance/scan", "nginx", "compliance"},

			{"/api/policy", "nginx", "policy"},
			{"/api/policies", "nginx", "policy"},
			{"/api/policies/generate-from-document", "nginx", "policy"},
			{"/api/presets/p1", "nginx", "policy"},
			{"/api/documents/job/j1/progress", "nginx", "policy"},

			{"/api/redis", "nginx", "bridge"},
			{"/api/hybrid", "nginx", "bridge"},
			{"/api/hybrid/status", "nginx", "bridge"},

			{"/api", "nginx", "frontend"},
			{"/api/unknown", "nginx", "frontend"},
			{"/", "frontend", "frontend"},
			{"/chat/c1", "frontend", "frontend"},
		}
		for _, r := range routes {
			for _, server := range []struct{ name, base, want string }{{"public", ng.public, r.public}, {"internal", ng.internal, r.internal}} {
				t.Run(server.name+r.path, func(t *testing.T) {
					if got, detail := answeredBy(t, server.base+r.path); got != server.want {
						t.Errorf("GET %s on the %s server: answered by %s, want %s (%s)", r.path, server.name, got, server.want, detail)
					}
				})
			}
		}
	})

	t.Run("a virtual key works on the public server, the admin key only on the internal one", func(t *testing.T) {
		if code, body := get(t, ng.public+"/v1/models", key); code != 200 || !strings.Contains(body, "gpt-4o-mini") {
			t.Errorf("GET /v1/models with a virtual key on the public server: %d %s, want 200 with the models", code, body)
		}
		if code, body := get(t, ng.internal+"/api/enterprise/vkeys", adminKey); code != 200 || !strings.Contains(body, `"data"`) {
			t.Errorf("GET /api/enterprise/vkeys with the admin key on the internal server: %d %s, want 200 with the keys", code, body)
		}
		if code, body := get(t, ng.public+"/api/enterprise/vkeys", adminKey); code != 404 {
			t.Errorf("GET /api/enterprise/vkeys with the admin key on the public server: %d %s, want 404", code, body)
		}
	})

	t.Run("a scan passes through the internal server, not the public one", func(t *testing.T) {
		scan := []byte(`{"content":"Card 4111 1111 1111 1111, SSN 123-45-6789","policy":"pci_dss"}`)
		for _, k := range []struct{ name, key string }{{"the admin key", adminKey}, {"a virtual key", key}} {
			resp, body := postTo(t, ng.internal+"/v1/compliance/scan", k.key, scan)
			var res struct {
				RecommendedAction string `json:"recommended_action"`
			}
			if resp.StatusCode != 200 || resp.Header.Get("X-Test-Component") != "compliance" || json.Unmarshal(body, &res) != nil || res.RecommendedAction != "Block" {
				t.Errorf("POST /v1/compliance/scan with %s on the internal server: %d (from %q) %.300s, want 200 from the compliance API, recommending Block", k.name, resp.StatusCode, resp.Header.Get("X-Test-Component"), body)
			}
			resp, body = postTo(t, ng.public+"/v1/compliance/scan", k.key, scan)
			if resp.StatusCode != 404 || resp.Header.Get("X-Test-Component") != "" || !strings.Contains(string(body), `"not_found"`) {
				t.Errorf("POST /v1/compliance/scan with %s on the public server: %d %.300s, want nginx's 404", k.name, resp.StatusCode, body)
			}
		}
		if code, body := get(t, ng.public+"/v1/compliance/", adminKey); code != 404 || !strings.Contains(body, `"not_found"`) {
			t.Errorf("GET /v1/compliance/ with the admin key on the public server: %d %s, want nginx's 404", code, body)
		}
		// The public Kubernetes ingress sends /v1/compliance to the proxy
		// (ingress-public.yaml): the proxy must not serve it.
		if resp, body := postTo(t, px1.proxy+"/v1/compliance/scan", key, scan); resp.StatusCode != 404 {
			t.Errorf("POST /v1/compliance/scan to a proxy: %d %.300s, want 404 (it is the compliance API's)", resp.StatusCode, body)
		}
	})

	t.Run("both proxy replicas serve", func(t *testing.T) {
		for range 6 {
			resp, body := postTo(t, ng.public+"/v1/chat/completions", key, []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`))
			if resp.StatusCode != 200 {
				t.Fatalf("chat through nginx: %d %s", resp.StatusCode, body)
			}
		}
		for i, px := range []*gateway{px1, px2} {
			if n := requestsServed(t, px); n == 0 {
				t.Errorf("proxy-%d served none of 6 requests: the upstream block does not balance over both replicas", i+1)
			}
		}
	})

	t.Run("a caller's MCP requests stay on one proxy", func(t *testing.T) {
		seen := map[string]bool{}
		for i := range 16 {
			caller := fmt.Sprintf("sk-caller-%d", i)
			first := ""
			for range 3 {
				req, _ := http.NewRequest("POST", ng.public+"/crm/mcp/", strings.NewReader(`{}`))
				req.Header.Set("Authorization", "Bearer "+caller)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				r := resp.Header.Get("X-Test-Replica")
				if first == "" {
					first = r
				}
				if r == "" || r != first {
					t.Fatalf("%s: answered by proxy %q after proxy %q: MCP sessions would break", caller, r, first)
				}
			}
			seen[first] = true
		}
		if len(seen) != 2 {
			t.Errorf("16 callers all went to proxy %v: the hash does not spread callers", seen)
		}
	})

	t.Run("the bridge drains the proxies' entries and reports through the internal server", func(t *testing.T) {
		// The requests above went through both proxies to the Redis stream;
		// the bridge writes them to PostgreSQL and acknowledges them.
		var hybrid struct {
			Hot    struct{ Backlog int64 }
			Bridge struct{ Written int64 }
		}
		drained := eventuallyFor(10*time.Second, func() bool {
			code, body := get(t, ng.internal+"/api/hybrid", adminKey)
			if code != 200 || json.Unmarshal([]byte(body), &hybrid) != nil {
				t.Fatalf("GET /api/hybrid with the admin key on the internal server: %d %s, want 200 with both tiers' status", code, body)
			}
			return hybrid.Bridge.Written >= 6 && hybrid.Hot.Backlog == 0
		})
		if !drained {
			t.Errorf("/api/hybrid: the bridge wrote %d entries with %d waiting, want the 6 chat requests' written and none waiting", hybrid.Bridge.Written, hybrid.Hot.Backlog)
		}
		var redis struct {
			Group     string
			Consumers []struct{ Name string }
		}
		code, body := get(t, ng.internal+"/api/redis", adminKey)
		if code != 200 || json.Unmarshal([]byte(body), &redis) != nil || redis.Group != "bridge" || len(redis.Consumers) != 1 {
			t.Errorf("GET /api/redis with the admin key on the internal server: %d %s, want 200 with the group bridge and its one consumer", code, body)
		}
		for _, path := range []string{"/api/redis", "/api/hybrid"} {
			if code, body := get(t, ng.public+path, adminKey); code != 404 || !strings.Contains(body, `"not_found"`) {
				t.Errorf("GET %s with the admin key on the public server: %d %s, want nginx's 404", path, code, body)
			}
		}
	})

	t.Run("a stream arrives incrementally", func(t *testing.T) {
		req := chatStream(key)
		first, end := streamTimes(t, req(ng.public+"/v1/chat/completions"))
		// The fake sends 6 chunks 150 ms apart: a buffered stream would
		// arrive all at once, at its end.
		if end-first < 3*chunkDelay {
			t.Errorf("through the proxy: first event at %v, stream ended at %v: the events arrived together (buffered), want the first ≥ %v before the end", first, end, 3*chunkDelay)
		}
		// svc's streams carry X-Accel-Buffering: no, which turns nginx's
		// buffering off by itself; a component's stream without it
		// (the stand-in's: 6 events 100 ms apart) tests svc.conf's own.
		get, _ := http.NewRequest("GET", ng.internal+"/api/policy/stream", nil)
		if first, end := streamTimes(t, get); end-first < 300*time.Millisecond {
			t.Errorf("without X-Accel-Buffering: first event at %v, stream ended at %v, want the first ≥ 300ms before the end (buffering, or compression that holds events back)", first, end)
		}
	})

	t.Run("a request body streams to the component", func(t *testing.T) {
		// The first part of an upload must reach the component before the
		// client sends the rest (proxy_request_buffering off).
		select {
		case <-standIns["policy"].firstByte: // an earlier request's
		default:
		}
		pr, pw := io.Pipe()
		req, _ := http.NewRequest("POST", ng.internal+"/api/policies/generate-from-document", pr)
		done := make(chan error, 1)
		go func() {
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		if _, err := pw.Write(bytes.Repeat([]byte("x"), 64<<10)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-standIns["policy"].firstByte:
		case <-time.After(2 * time.Second):
			t.Error("the first 64 KiB of an upload did not reach the policy library within 2s while the client held the rest: nginx buffers request bodies")
		}
		pw.Close()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})

	t.Run("a 40 MB body passes", func(t *testing.T) {
		const size = 40 << 20
		// A chat completion padded with JSON whitespace to 40 MB, asked once
		// small first: svc must read and parse all of it to find the cached
		// answer (the fake upstream takes at most 32 MB, so the padded
		// request must not reach it).
		question := []byte(`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"What is the capital of France?"}]`)
		small := append(bytes.Clone(question), '}')
		if !eventually(5*time.Second, func() bool {
			resp, answer := postTo(t, ng.public+"/v1/chat/completions", key, small)
			if resp.StatusCode != 200 {
				t.Fatalf("chat through nginx: %d %s", resp.StatusCode, answer)
			}
			return resp.Header.Get("X-Svc-Cache-Hit") == "true"
		}) {
			t.Fatal("the small question is not answered from the cache")
		}
		big := append(append(question, bytes.Repeat([]byte(" "), size)...), '}')
		resp, answer := postTo(t, ng.public+"/v1/chat/completions", key, big)
		if resp.StatusCode != 200 || resp.Header.Get("X-Svc-Cache-Hit") != "true" {
			t.Errorf("POST /v1/chat/completions of %d bytes through nginx: %d (cache hit %q) %.300s, want 200 from the cache", len(big), resp.StatusCode, resp.Header.Get("X-Svc-Cache-Hit"), answer)
		}
		// A document upload to the policy library, counted where it lands.
		resp, answer = postTo(t, ng.internal+"/api/policies/generate-from-document", "", bytes.Repeat([]byte("x"), size))
		if got := standIns["policy"].last.Load(); resp.StatusCode != 200 || got != size {
			t.Errorf("POST of %d bytes to the policy library through nginx: %d %.300s, the library received %d bytes", size, resp.StatusCode, answer, got)
		}
	})
	if t.Failed() {
		t.Logf("nginx error log:\n%s", ng.errors())
	}
}

// answeredBy GETs url without credentials and names who answered: a
// stand-in by its header, the proxy by its 404 for a route it does not
// have, management by its 401 (every management route needs the admin
// key), nginx by the 404 of svc.conf's refused paths.
func answeredBy(t *testing.T, url string) (who, detail string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	detail = fmt.Sprintf("%d %.200s", resp.StatusCode, b)
	if c := resp.Header.Get("X-Test-Component"); c != "" {
		return c, detail
	}
	var e struct {
		Error struct{ Message, Code string }
	}
	_ = json.Unmarshal(b, &e)
	switch {
	case resp.StatusCode == 404 && e.Error.Code == "route_not_found":
		return "proxy", detail
	case resp.StatusCode == 401 && e.Error.Message != "":
		return "management", detail
	case resp.StatusCode == 404 && e.Error.Code == "not_found":
		return "nginx", detail
	}
	return "unknown", detail
}

// standIn stands in for a component not built yet: it answers every
// request with the component's name in X-Test-Component, after reading the
// body (its size kept in last; firstByte told when the first byte came).
// GET …/stream answers server-sent events, 100 ms apart, without svc's
// X-Accel-Buffering header: only nginx's own settings keep them unbuffered.
type standIn struct {
	name      string
	last      atomic.Int64
	firstByte chan struct{}
}

func newStandIn(name string) *standIn {
	return &standIn{name: name, firstByte: make(chan struct{}, 1)}
}

func (s *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Test-Component", s.name)
	if strings.HasSuffix(r.URL.Path, "/stream") {
		w.Header().Set("Content-Type", "text/event-stream")
		for i := range 6 {
			fmt.Fprintf(w, "data: {\"content\":\"%d\"}\n\n", i)
			w.(http.Flusher).Flush()
			time.Sleep(100 * time.Millisecond)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
		return
	}
	var n int64
	buf := make([]byte, 32<<10)
	for {
		m, err := r.Body.Read(buf)
		if n == 0 && m > 0 {
			select {
			case s.firstByte <- struct{}{}:
			default:
			}
		}
		n += int64(m)
		if err != nil {
			break
		}
	}
	s.last.Store(n)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"component":%q,"path":%q,"bytes":%d}`, s.name, r.URL.Path, n)
}

// tagged relays every request to the component at base and names it in
// X-Test-Component on the answer, so answeredBy can tell components apart
// that answer alike (401 without the admin key). It returns the relay's
// address.
func tagged(t *testing.T, name, base string) string {
	t.Helper()
	return taggedReplica(t, name, "", base)
}

// taggedReplica is tagged, also naming the replica in X-Test-Replica.
func taggedReplica(t *testing.T, name, replica, base string) string {
	t.Helper()
	target, err := url.Parse(base)
	if err != nil || target.Host == "" {
		t.Fatalf("not a running component's address: %q", base)
	}
	relay := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) { r.SetURL(target); r.Out.Host = r.In.Host },
		ModifyResponse: func(resp *http.Response) error {
			resp.Header.Set("X-Test-Component", name)
			if replica != "" {
				resp.Header.Set("X-Test-Replica", replica)
			}
			return nil
		},
	}
	srv := httptest.NewServer(relay)
	t.Cleanup(srv.Close)
	return srv.URL
}

// nginxProcess is a running nginx with svc.conf.
type nginxProcess struct {
	public, internal string // http://127.0.0.1:port
	dir              string
}

func (n *nginxProcess) errors() string {
	b, _ := os.ReadFile(filepath.Join(n.dir, "error.log"))
	return string(b)
}

// startNginx renders svc.conf with upstreams (the file's host:port → the
// test's) and loopback listeners, and runs nginx in the foreground with its
// own prefix, temporary directories and logs under a test directory.
func startNginx(t *testing.T, bin string, upstreams map[string]string) *nginxProcess {
	t.Helper()
	b, err := os.ReadFile(nginxConf)
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	n := &nginxProcess{dir: t.TempDir()}
	pub, internal := freePort(t), freePort(t)
	n.public, n.internal = "http://"+pub, "http://"+internal
	replace := map[string]string{"listen 80;": "listen " + pub + ";", "listen 8081;": "listen " + internal + ";"}
	for from, to := range upstreams {
		replace["server "+from+";"] = "server " + to + ";"
	}
	for from, to := range replace {
		if !strings.Contains(conf, from) {
			t.Fatalf("%s has no %q any more: update the test's substitutions", nginxConf, from)
		}
		conf = strings.ReplaceAll(conf, from, to)
	}
	if err := os.WriteFile(filepath.Join(n.dir, "svc.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	user := ""
	if os.Geteuid() == 0 {
		// Workers would otherwise run as nobody, who cannot use the test's
		// directories.
		user = "user root;"
	}
	main := fmt.Sprintf(`daemon off;
%s
worker_processes 1;
pid %[2]s/nginx.pid;
error_log %[2]s/error.log info;
events { worker_connections 512; }
http {
    access_log %[2]s/access.log;
    client_body_temp_path %[2]s/client_body;
    proxy_temp_path %[2]s/proxy;
    fastcgi_temp_path %[2]s/fastcgi;
    uwsgi_temp_path %[2]s/uwsgi;
    scgi_temp_path %[2]s/scgi;
    include %[2]s/svc.conf;
}
`, user, n.dir)
	if err := os.WriteFile(filepath.Join(n.dir, "nginx.conf"), []byte(main), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"-p", n.dir, "-c", filepath.Join(n.dir, "nginx.conf"), "-e", filepath.Join(n.dir, "error.log")}
	if out, err := exec.Command(bin, append(args, "-t")...).CombinedOutput(); err != nil {
		t.Fatalf("nginx -t refuses the rendered %s: %v\n%s", nginxConf, err, out)
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	for _, addr := range []string{pub, internal} {
		deadline := time.Now().Add(5 * time.Second)
		for {
			c, err := net.Dial("tcp", addr)
			if err == nil {
				c.Close()
				break
			}
			select {
			case err := <-exited:
				t.Fatalf("nginx exited: %v\n%s\n%s", err, stderr.String(), n.errors())
			default:
			}
			if time.Now().After(deadline) {
				t.Fatalf("nginx does not listen on %s after 5s:\n%s", addr, n.errors())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return n
}

// freePort returns a loopback address no one listens on now.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

func hostPort(t *testing.T, base string) string {
	t.Helper()
	hp, ok := strings.CutPrefix(base, "http://")
	if !ok || hp == "" {
		t.Fatalf("not a running component's address: %q", base)
	}
	return hp
}

// get sends a GET with a bearer key and returns the status and body.
func get(t *testing.T, url, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// postTo sends a JSON POST with a bearer key and returns the response and its body.
func postTo(t *testing.T, url, key string, body []byte) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

// chatStream returns a builder of streamed chat completion requests with key.
func chatStream(key string) func(url string) *http.Request {
	return func(url string) *http.Request {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"count"}]}`))
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		return req
	}
}

// streamTimes sends req, reads the server-sent events of its answer and
// returns when its first content event and its end ([DONE]) arrived, from
// the request's start.
func streamTimes(t *testing.T, req *http.Request) (first, end time.Duration) {
	t.Helper()
	begin := time.Now()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("stream through nginx: %d %s", resp.StatusCode, b)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case first == 0 && strings.HasPrefix(line, "data: {") && strings.Contains(line, `"content"`):
			first = time.Since(begin)
		case line == "data: [DONE]":
			return first, time.Since(begin)
		}
	}
	t.Fatalf("the stream ended without [DONE]: %v", sc.Err())
	return 0, 0
}

// requestsServed sums a proxy's svc_requests_total.
func requestsServed(t *testing.T, g *gateway) float64 {
	t.Helper()
	_, body := get(t, g.proxy+"/metrics", "")
	var sum float64
	for _, line := range strings.Split(body, "\n") {
		if !strings.HasPrefix(line, "svc_requests_total{") {
			continue
		}
		if f, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64); err == nil {
			sum += f
		}
	}
	return sum
}
