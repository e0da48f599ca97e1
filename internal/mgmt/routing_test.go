package mgmt_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/mgmt"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

var testNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

type routingEnv struct {
	srv  *httptest.Server
	live *route.Live
	db   *route.SQLConfigStore
	kv   *memkv.KV
}

// newRoutingEnv serves the routing API; setup, when given, completes its
// deps (Live and Now are set).
func newRoutingEnv(t *testing.T, setup ...func(*mgmt.RoutingDeps, *memkv.KV)) *routingEnv {
	t.Helper()
	sdb, err := sqlstore.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { sdb.Close() })
	db := route.NewSQLConfigStore(sdb)
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	live := route.NewLive(db, kv, nil)
	d := mgmt.RoutingDeps{Live: live, Now: func() time.Time { return testNow }}
	for _, f := range setup {
		f(&d, kv)
	}
	mux := http.NewServeMux()
	mgmt.NewRoutingAPI(d).Register(mux)
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return &routingEnv{srv: srv, live: live, db: db, kv: kv}
}

// do sends body (JSON text, or "" for none) and decodes the answer into a
// generic value.
func (e *routingEnv) do(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	var rd *strings.Reader
	if body != "" {
		rd = strings.NewReader(body)
	} else {
		rd = strings.NewReader("")
	}
	req, err := http.NewRequestWithContext(t.Context(), method, e.srv.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s %s: decode answer: %v", method, path, err)
	}
	return resp.StatusCode, out
}

// errParam is the error.param of an error answer.
func errParam(out map[string]any) string {
	e, _ := out["error"].(map[string]any)
	p, _ := e["param"].(string)
	return p
}

func TestRoutingChains(t *testing.T) {
	e := newRoutingEnv(t)
	chain := `{"name":"fast","targets":[{"provider":"openai","model":"gpt-4o","weight":2},{"provider":"groq","model":"llama","weight":1},{"provider":"mistral","model":"m"}],"backoff_ms":200}`
	code, out := e.do(t, "POST", "/api/routing/fallback-chains", chain)
	if code != http.StatusCreated {
		t.Fatalf("create chain: got %d %v, want 201", code, out)
	}
	want := route.Chain{Name: "fast", Targets: []route.Target{
		{Provider: "openai", Model: "gpt-4o", Weight: 2}, {Provider: "groq", Model: "llama", Weight: 1}, {Provider: "mistral", Model: "m"},
	}, RetryOn: []int{429, 500, 502, 503, 504}, MaxRetries: 2, BackoffMS: 200}
	got, _ := e.live.Current().Chain("fast")
	if got == nil {
		t.Fatal("chain not live after POST")
	}
	if diff := cmp.Diff(want, *got); diff != "" {
		t.Errorf("stored chain with defaults (-want +got):\n%s", diff)
	}
	stored, _, err := e.db.LoadRouting(t.Context())
	if err != nil || len(stored.Chains) != 1 {
		t.Fatalf("stored config: %+v, %v; want one chain", stored, err)
	}

	// Replace by name, with explicit max_retries 0 and retry_on.
	code, out = e.do(t, "POST", "/api/routing/fallback-chains", `{"name":"fast","targets":[{"provider":"groq","model":"llama"}],"retry_on":[429],"max_retries":0}`)
	if code != http.StatusOK {
		t.Fatalf("replace chain: got %d %v, want 200", code, out)
	}
	code, out = e.do(t, "GET", "/api/routing/fallback-chains", "")
	if code != http.StatusOK {
		t.Fatalf("list chains: got %d", code)
	}
	data, _ := out["data"].([]any)
	if len(data) != 1 {
		t.Fatalf("list chains: got %v, want one chain", out)
	}
	c0 := data[0].(map[string]any)
	if c0["max_retries"] != float64(0) || len(c0["targets"].([]any)) != 1 || len(c0["retry_on"].([]any)) != 1 {
		t.Errorf("replaced chain: got %v, want 1 target, retry_on [429], max_retries 0", c0)
	}

	if code, _ := e.do(t, "DELETE", "/api/routing/fallback-chains/fast", ""); code != http.StatusOK {
		t.Errorf("delete chain: got %d, want 200", code)
	}
	if code, _ := e.do(t, "DELETE", "/api/routing/fallback-chains/fast", ""); code != http.StatusNotFound {
		t.Errorf("delete absent chain: got %d, want 404", code)
	}
	if _, out := e.do(t, "GET", "/api/routing/fallback-chains", ""); len(out["data"].([]any)) != 0 {
		t.Errorf("list after delete: got %v, want an empty list", out)
	}
}

func TestRoutingBadRequests(t *testing.T) {
	e := newRoutingEnv(t)
	cases := []struct {
		method, path, body, param string
	}{
		{"POST", "/api/routing/fallback-chains", `{"name":"Bad Name","targets":[{"provider":"a","model":"b"}]}`, "name"},
		{"POST", "/api/routing/fallback-chains", `{"name":"x","targets":[]}`, "targets"},
		{"POST", "/api/routing/fallback-chains", `{"name":"x","targets":[{"provider":"a","model":"b"}],"retry_on":[200]}`, "retry_on"},
		{"POST", "/api/routing/fallback-chains", `{"name":"x","targets":[{"provider":"a","model":"b"}],"retry_on":[429,400]}`, "retry_on"},
		{"POST", "/api/routing/fallback-chains", `{"name":"x","targets":[{"provider":"a","model":"b"}],"retry_on":[404]}`, "retry_on"},
		{"POST", "/api/routing/fallback-chains", `{"name":"x","targets":[{"provider":"a","model":"b"}],"max_retries":11}`, "max_retries"},
		{"POST", "/api/routing/fallback-chains", `{"name":"x","targets":[{"provider":"a","model":"b"}],"backoff_ms":70000}`, "backoff_ms"},
		{"POST", "/api/routing/fallback-chains", `{"name":"x","targets":[{"provider":"a","model":"b","weight":-1}]}`, "targets[0].weight"},
		{"POST", "/api/routing/fallback-chains", `{"name":"x","targets":[{"provider":"a","model":"b"}],"extra":1}`, ""},
		{"PUT", "/api/routing/strategy", `{"strategy":"fastest"}`, "strategy"},
		{"PUT", "/api/routing/strategy", `{}`, "strategy"},
		{"PUT", "/api/routing/strategy", `{"strategy":"cost","weights":{"cost":-1}}`, "weights.cost"},
		{"PUT", "/api/routing/default-provider", `{"provider":"a/b"}`, "default_provider"},
		{"POST", "/api/routing/model-mapping", `{"alias":"x","target":"nomodel"}`, "target"},
		{"POST", "/api/routing/model-mapping", `{"alias":"x","provider":"openai"}`, "provider"},
		{"POST", "/api/routing/model-mapping", `{"alias":"x","target":"a/b","provider":"a","model":"b"}`, "target"},
		{"POST", "/api/routing/model-mapping", `{"alias":"","target":"a/b"}`, "alias"},
		{"POST", "/api/routing/force-provider", `{"provider":"groq"}`, "duration_seconds"},
		{"POST", "/api/routing/force-provider", `{"provider":"groq","duration_seconds":-1}`, "duration_seconds"},
		{"POST", "/api/routing/force-provider", `{"provider":"","duration_seconds":60}`, "provider"},
		{"POST", "/api/routing/budgets", `{"provider":"openai"}`, "daily_budget_usd"},
		{"POST", "/api/routing/budgets", `{"provider":"openai","daily_budget_usd":-2}`, "daily_budget_usd"},
		{"POST", "/api/routing/budgets", `{"provider":"","daily_budget_usd":2}`, "provider"},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path+" "+c.body, func(t *testing.T) {
			code, out := e.do(t, c.method, c.path, c.body)
			if code != http.StatusBadRequest {
				t.Fatalf("got %d %v, want 400", code, out)
			}
			if c.param != "" && errParam(out) != c.param {
				t.Errorf("error param: got %q, want %q (%v)", errParam(out), c.param, out)
			}
		})
	}
	if v := e.live.Version(); v != 0 {
		t.Errorf("refused requests saved version %d, want none", v)
	}
}

func TestRoutingSettingsAndStatus(t *testing.T) {
	// The management API runs in its own process: it learns the last
	// failure through the store, and plans with its own resolver.
	reg := provider.NewRegistry("openai", &provider.Provider{Name: "openai"},
		&provider.Provider{Name: "anthropic", Enabled: true}, &provider.Provider{Name: "groq", Enabled: true})
	e := newRoutingEnv(t, func(d *mgmt.RoutingDeps, kv *memkv.KV) {
		d.Failures = route.NewFailures(kv, nil)
		d.Resolver = route.NewResolver(reg).WithSources(route.Sources{Config: d.Live.Current})
	})
	proxy := route.NewFailures(e.kv, nil)
	proxy.Note(route.Failure{Provider: "openai", Model: "gpt-4o", Chain: "main", Status: 529, Message: "openai failed (HTTP 529)", At: testNow.Add(-time.Minute)})
	if err := proxy.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		method, path, body string
		want               int
	}{
		{"PUT", "/api/routing/strategy", `{"strategy":"latency","weights":{"success_rate":0.5,"latency":0.3,"cost":0.1,"quality":0.1}}`, 200},
		{"PUT", "/api/routing/default-provider", `{"provider":"Anthropic"}`, 200},
		{"POST", "/api/routing/model-mapping", `{"alias":"smart","provider":"anthropic","model":"claude-sonnet-4"}`, 201},
		{"POST", "/api/routing/model-mapping", `{"alias":"cheap","target":"groq/llama"}`, 201},
		{"POST", "/api/routing/force-provider", `{"provider":"groq","duration_seconds":600}`, 200},
		{"POST", "/api/routing/budgets", `{"provider":"openai","daily_budget_usd":25.5}`, 200},
		{"POST", "/api/routing/budgets", `{"provider":"anthropic","daily_budget_usd":10}`, 200},
		{"POST", "/api/routing/budgets", `{"provider":"anthropic","daily_budget_usd":12}`, 200},
		{"POST", "/api/routing/fallback-chains", `{"name":"fast","targets":[{"provider":"groq","model":"llama"}]}`, 201},
	}
	for _, s := range steps {
		if code, out := e.do(t, s.method, s.path, s.body); code != s.want {
			t.Fatalf("%s %s: got %d %v, want %d", s.method, s.path, code, out, s.want)
		}
	}
	c := e.live.Current()
	want := route.Config{
		Chains:          []route.Chain{{Name: "fast", Targets: []route.Target{{Provider: "groq", Model: "llama"}}, RetryOn: route.DefaultRetryOn, MaxRetries: 0}},
		Strategy:        route.Strategy{Name: "latency", Weights: route.Weights{SuccessRate: 0.5, Latency: 0.3, Cost: 0.1, Quality: 0.1}},
		DefaultProvider: "anthropic",
		ModelMap:        map[string]string{"smart": "anthropic/claude-sonnet-4", "cheap": "groq/llama"},
		Forced:          &route.Forced{Provider: "groq", Until: testNow.Add(10 * time.Minute)},
		Budgets:         []route.ProviderBudget{{Provider: "openai", DailyBudgetUSD: 25.5}, {Provider: "anthropic", DailyBudgetUSD: 12}},
	}
	if diff := cmp.Diff(want, *c); diff != "" {
		t.Errorf("live config (-want +got):\n%s", diff)
	}

	code, out := e.do(t, "GET", "/api/routing/budgets", "")
	if code != 200 {
		t.Fatalf("list budgets: got %d", code)
	}
	b, _ := json.Marshal(out["data"])
	if got, wantJSON := string(b), `[{"daily_budget_usd":12,"provider":"anthropic"},{"daily_budget_usd":25.5,"provider":"openai"}]`; got != wantJSON {
		t.Errorf("budgets: got %s, want %s", got, wantJSON)
	}

	code, out = e.do(t, "GET", "/api/routing/status", "")
	if code != 200 {
		t.Fatalf("status: got %d", code)
	}
	if out["active_provider"] != "groq" || out["default_provider"] != "anthropic" {
		t.Errorf("status: active %v default %v, want groq, anthropic", out["active_provider"], out["default_provider"])
	}
	forced, _ := out["forced"].(map[string]any)
	if forced["provider"] != "groq" || forced["until"] != "2026-05-01T12:10:00Z" {
		t.Errorf("status forced: got %v, want groq until 2026-05-01T12:10:00Z", out["forced"])
	}
	if s, _ := out["strategy"].(map[string]any); s["strategy"] != "latency" {
		t.Errorf("status strategy: got %v, want latency", out["strategy"])
	}
	if lf, _ := out["last_failure"].(map[string]any); lf["status"] != float64(529) || lf["provider"] != "openai" || lf["chain"] != "main" {
		t.Errorf("status last_failure: got %v, want the 529 from openai in chain main, written by another process", out["last_failure"])
	}
	if out["fallback_chain"] != nil {
		t.Errorf("status fallback_chain while forced: got %v, want null (the forced provider serves alone)", out["fallback_chain"])
	}
	if len(out["chains"].([]any)) != 1 || out["version"] != float64(len(steps)) {
		t.Errorf("status chains %v version %v, want 1 chain, version %d", out["chains"], out["version"], len(steps))
	}

	// Clearing: force 0, budget 0.
	if code, out := e.do(t, "POST", "/api/routing/force-provider", `{"provider":"groq","duration_seconds":0}`); code != 200 || out["forced"] != nil {
		t.Errorf("clear forced: got %d %v, want 200 forced null", code, out)
	}
	if code, _ := e.do(t, "POST", "/api/routing/budgets", `{"provider":"openai","daily_budget_usd":0}`); code != 200 {
		t.Errorf("remove budget: got %d, want 200", code)
	}
	_, out = e.do(t, "GET", "/api/routing/status", "")
	if out["forced"] != nil || out["active_provider"] != "anthropic" || len(out["budgets"].([]any)) != 1 {
		t.Errorf("status after clearing: got %v, want no forced provider, active anthropic, one budget", out)
	}
	b, _ = json.Marshal(out["fallback_chain"])
	if got, wantJSON := string(b), `{"name":"intelligent","providers":["anthropic","groq"]}`; got != wantJSON {
		t.Errorf("status fallback_chain: got %s, want %s", got, wantJSON)
	}
}

func TestRoutingStatusEmpty(t *testing.T) {
	e := newRoutingEnv(t)
	code, out := e.do(t, "GET", "/api/routing/status", "")
	if code != 200 {
		t.Fatalf("status: got %d", code)
	}
	b, _ := json.Marshal(out)
	want := `{"active_provider":"","budgets":[],"chains":[],"default_provider":"","fallback_chain":null,"forced":null,"last_failure":null,"model_map":{},"strategy":{"strategy":"priority","weights":{"cost":0,"latency":0,"quality":0,"success_rate":0}},"version":0}`
	if string(b) != want {
		t.Errorf("empty status:\n got %s\nwant %s", b, want)
	}
}

type brokenFailures struct{}

func (brokenFailures) Last(context.Context) (*route.Failure, error) {
	return nil, errors.New("store down")
}

// TestRoutingStatusStoreDown checks that a last failure the store cannot
// give is a 503, not a null that reads as "no failure".
func TestRoutingStatusStoreDown(t *testing.T) {
	e := newRoutingEnv(t, func(d *mgmt.RoutingDeps, _ *memkv.KV) { d.Failures = brokenFailures{} })
	if code, out := e.do(t, "GET", "/api/routing/status", ""); code != http.StatusServiceUnavailable {
		t.Errorf("status with the store down: got %d %v, want 503", code, out)
	}
}
