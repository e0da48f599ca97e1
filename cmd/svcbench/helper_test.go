package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"syscall"
	"testing"
)

// fakeSvcEnv makes the test binary act as a tiny svc: see fakeSvc.
const fakeSvcEnv = "SVCBENCH_FAKE_SVC"

func TestMain(m *testing.M) {
	if os.Getenv(fakeSvcEnv) == "1" {
		os.Exit(fakeSvc())
	}
	os.Exit(m.Run())
}

// fakeSvc is a stand-in for `svc serve`, so startGateway can be tested without
// building the real one: it reads the same settings, answers /ready and
// /metrics, creates virtual keys on the management port, and forwards chat
// completions called with that key to OPENAI_API_BASE with OPENAI_API_KEY.
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

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	errc := make(chan error, 2)
	servers := []*http.Server{
		{Addr: host + ":" + os.Getenv("PROXY_PORT"), Handler: proxy},
		{Addr: host + ":" + os.Getenv("MANAGEMENT_PORT"), Handler: mgmt},
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
