package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/http/pprof"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// fakeSvcEnv makes the test binary act as a tiny svc: see fakeSvc.
const fakeSvcEnv = "SVCBENCH_FAKE_SVC"

// testParentEnv makes the test binary start svcbench's helpers and wait: see
// testParent.
const testParentEnv = "SVCBENCH_TEST_PARENT"

// The test binary is svcbench's helpers too, as the command's binary is.
func TestMain(m *testing.M) {
	if code, ok := childMain(); ok {
		os.Exit(code)
	}
	switch {
	case os.Getenv(fakeSvcEnv) == "1":
		os.Exit(fakeSvc())
	case os.Getenv(fakeMCPSvcEnv) == "1":
		os.Exit(fakeMCPSvc())
	case os.Getenv(testParentEnv) == "1":
		os.Exit(testParent())
	}
	os.Exit(m.Run())
}

// testParent starts the fake upstream and a reverse proxy to it as svcbench
// does, prints their URLs and waits to be killed, so a test can check that
// they end with their parent.
func testParent() int {
	fake, err := startChild(context.Background(), "fake upstream", fakeChildEnv("127.0.0.1:0", 2, 0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	proxy, err := startChild(context.Background(), "reverse proxy", baselineChildEnv(strings.TrimSuffix(fake.url, "/v1"), 0))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(fake.url, proxy.url)
	time.Sleep(time.Hour)
	return 0
}

// fakeSvc is a stand-in for `svc serve`, so startGateway can be tested without
// building the real one: it reads the same settings, answers /ready and
// /metrics (and pprof on SVC_PPROF_ADDR unless SVCBENCH_FAKE_SVC_PPROF=off), creates virtual keys on the management port, and forwards chat
// completions called with that key to OPENAI_API_BASE with OPENAI_API_KEY.
// It runs the components SERVICE_TYPE names (proxy, api-server, bridge;
// all by default); its bridge answers /api/hybrid with the chat requests
// served as written (none with SVC_AUDIT_ENABLED=false), and with
// SVC_SLACK_WEBHOOK_URL set it posts one alert there after its first chat
// request, as svc would on a slow one.
func fakeSvc() int {
	if len(os.Args) < 2 || os.Args[1] != "serve" {
		fmt.Fprintln(os.Stderr, "fake svc: want serve, got", os.Args[1:])
		return 2
	}
	host := os.Getenv("SVC_HOST")
	admin := os.Getenv("ADMIN_API_KEY")
	upstream, err := url.Parse(os.Getenv("OPENAI_API_BASE"))
	if err != nil || upstream.Host == "" || os.Getenv("SVC_DATA_DIR") == "" {
		fmt.Fprintln(os.Stderr, "fake svc: bad settings")
		return 2
	}
	const vkey = "sk-svc-0123456789abcdef0123456789abcdef0123456789abcdef"
	ready := func(w http.ResponseWriter, r *http.Request) { w.Write([]byte(`{"status":"ready"}`)) }
	var chats atomic.Int64
	var alertOnce sync.Once

	proxy := http.NewServeMux()
	proxy.HandleFunc("GET /ready", ready)
	proxy.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		fmt.Fprintf(w, "# HELP go_memstats_mallocs_total Total number of heap objects allocated.\n# TYPE go_memstats_mallocs_total counter\ngo_memstats_mallocs_total %d\n", ms.Mallocs)
	})
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(upstream)
			pr.Out.URL.Path = upstream.Path + "/chat/completions"
			pr.Out.Header.Set("Authorization", "Bearer "+os.Getenv("OPENAI_API_KEY"))
		},
		FlushInterval: -1,
	}
	proxy.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+vkey {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		chats.Add(1)
		if hook := os.Getenv("SVC_SLACK_WEBHOOK_URL"); hook != "" {
			alertOnce.Do(func() {
				go func() {
					c := &http.Client{Timeout: 2 * time.Second}
					if resp, err := c.Post(hook, "application/json", strings.NewReader(`{"text":"slow"}`)); err == nil {
						resp.Body.Close()
					}
				}()
			})
		}
		// As the reverse-proxy child does, or a few streams are cut
		// (golang/go#40747).
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	})

	mgmt := http.NewServeMux()
	mgmt.HandleFunc("GET /ready", ready)
	mgmt.HandleFunc("POST /api/enterprise/vkeys", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+admin {
			http.Error(w, `{"error":{"message":"not admin"}}`, http.StatusUnauthorized)
			return
		}
		var in struct{ Alias string }
		if json.NewDecoder(r.Body).Decode(&in) != nil || in.Alias != "bench" {
			http.Error(w, `{"error":{"message":"want alias bench"}}`, http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]string{"id": "vk_1", "key": vkey, "alias": in.Alias})
	})

	bridge := http.NewServeMux()
	bridge.HandleFunc("GET /ready", ready)
	bridge.HandleFunc("GET /api/hybrid", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+admin {
			http.Error(w, `{"error":{"message":"not admin"}}`, http.StatusUnauthorized)
			return
		}
		written := chats.Load()
		if os.Getenv("SVC_AUDIT_ENABLED") == "false" {
			written = 0
		}
		fmt.Fprintf(w, `{"success":true,"hot":{"backlog":0},"bridge":{"written":%d}}`, written)
	})

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	var servers []*http.Server
	types := os.Getenv("SERVICE_TYPE")
	for _, c := range []struct {
		name, port string
		h          http.Handler
	}{{"proxy", "PROXY_PORT", proxy}, {"api-server", "MANAGEMENT_PORT", mgmt}, {"bridge", "BRIDGE_PORT", bridge}} {
		if types == "" || slices.Contains(strings.Split(types, ","), c.name) {
			servers = append(servers, &http.Server{Addr: host + ":" + os.Getenv(c.port), Handler: c.h})
		}
	}
	errc := make(chan error, len(servers)+1)
	if addr := os.Getenv("SVC_PPROF_ADDR"); addr != "" && os.Getenv("SVCBENCH_FAKE_SVC_PPROF") != "off" {
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		servers = append(servers, &http.Server{Addr: addr, Handler: mux})
	}
	for _, s := range servers {
		go func() { errc <- s.ListenAndServe() }()
	}
	select {
	case <-ctx.Done():
		for _, s := range servers {
			s.Close()
		}
		return 0
	case err := <-errc:
		fmt.Fprintln(os.Stderr, "fake svc:", err)
		return 1
	}
}
