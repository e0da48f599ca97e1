package e2e

import (
	"context"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/providertest"
)

func TestProviderKeyOverridesEnv(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)
	key, _ := g.newKey(nil)
	c := g.client(key)
	call := func() string {
		t.Helper()
		if _, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hi")); err != nil {
			t.Fatal(err)
		}
		return lastChat(t, fake).Header.Get("Authorization")
	}
	if got := call(); got != "Bearer "+upstreamKey {
		t.Fatalf("before: %q, want the env key", got)
	}
	stored := "sk-proj-stored0123456789abcdefSECRET"
	var rec map[string]any
	if code := g.admin("POST", "/api/enterprise/keys", map[string]any{"provider": "openai", "api_key": stored}, &rec); code != 201 {
		t.Fatalf("store key: %d %v", code, rec)
	}
	if got := call(); got != "Bearer "+stored {
		t.Errorf("after storing: %q, want the stored key from the next request on", got)
	}
	var list struct{ Data []map[string]any }
	g.admin("GET", "/api/enterprise/keys", nil, &list)
	if len(list.Data) != 1 || list.Data[0]["provider"] != "openai" || list.Data[0]["source"] != "stored" {
		t.Errorf("list = %v", list.Data)
	}
	masked, _ := list.Data[0]["masked_key"].(string)
	if strings.Contains(masked, "SECRET") || len(masked) > len("sk-proj-")+5 {
		t.Errorf("masked_key %q reveals too much", masked)
	}
	if code := g.admin("DELETE", "/api/enterprise/keys/openai", nil, nil); code != 200 {
		t.Fatalf("delete: %d", code)
	}
	if got := call(); got != "Bearer "+upstreamKey {
		t.Errorf("after delete: %q, want the env key again", got)
	}
	if code := g.admin("DELETE", "/api/enterprise/keys/openai", nil, nil); code != 404 {
		t.Errorf("second delete: %d, want 404", code)
	}
	for _, bad := range []map[string]any{{"provider": "openai"}, {"provider": "Bad Name!", "api_key": "x"}, {"provider": "openai", "api_key": "k", "extra": 1}} {
		if code := g.admin("POST", "/api/enterprise/keys", bad, nil); code != 400 {
			t.Errorf("POST %v: %d, want 400", bad, code)
		}
	}
	// The clear keys never reach the disk or the log.
	g.stop()
	assertNotOnDisk(t, g.dataDir, stored)
	if strings.Contains(g.logs.String(), stored) || strings.Contains(g.logs.String(), upstreamKey) {
		t.Error("a provider key reached the log")
	}
}

// assertNotOnDisk fails if secret appears in any file under dir.
func assertNotOnDisk(t *testing.T, dir, secret string) {
	t.Helper()
	filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), secret) {
			t.Errorf("%s holds the key in clear", path)
		}
		return nil
	})
}

func TestVirtualKeyLifecycle(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)

	// The dashboard's names are aliases of the spec's.
	var created map[string]any
	code := g.admin("POST", "/api/auth/virtual-keys", map[string]any{
		"name": "dash", "model_allowlist": []string{"gpt-4o-mini"}, "monthly_spend_cap": 5, "rpm_limit": 60, "tpm_limit": 1000, "policy_set": "strict",
	}, &created)
	if code != 201 {
		t.Fatalf("create: %d %v", code, created)
	}
	secret := created["key"].(string)
	if !strings.HasPrefix(secret, "sk-svc-") || len(secret) != len("sk-svc-")+48 {
		t.Errorf("key %q, want sk-svc- and 48 hex", secret)
	}
	if created["alias"] != "dash" || created["max_budget_usd"] != 5.0 || created["budget_period"] != "monthly" ||
		created["rpm_limit"] != 60.0 || created["policy_set"] != "strict" || created["created_at"] == nil || created["id"] == nil {
		t.Errorf("created = %v", created)
	}
	id := created["id"].(string)

	var list struct{ Data []map[string]any }
	g.admin("GET", "/api/enterprise/vkeys", nil, &list)
	if len(list.Data) != 1 || list.Data[0]["key"] != nil || list.Data[0]["hash"] != nil || list.Data[0]["status"] != "active" {
		t.Errorf("list = %v, want one key without secret", list.Data)
	}
	if strings.Contains(mustGet(t, g.mgmt+"/api/enterprise/vkeys"), secret[8:]) {
		t.Error("the list reveals the secret")
	}

	c := g.client(secret)
	for i := 0; i < 3; i++ {
		if _, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hello there")); err != nil {
			t.Fatal(err)
		}
	}
	entries := g.logEntries("", 3)
	var spent float64
	for _, e := range entries {
		spent += e["cost"].(float64)
	}
	var budget map[string]any
	if code := g.admin("GET", "/api/enterprise/vkeys/"+id+"/budget", nil, &budget); code != 200 {
		t.Fatalf("budget: %d", code)
	}
	if math.Abs(budget["spend_usd"].(float64)-spent) > 1e-12 || spent <= 0 || budget["remaining_usd"] == nil {
		t.Errorf("budget = %v, want spend %v", budget, spent)
	}

	// DELETE by secret revokes; traffic then answers 401.
	if code := g.admin("DELETE", "/api/enterprise/vkeys/"+secret, nil, nil); code != 200 {
		t.Fatalf("delete: %d", code)
	}
	if _, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hi")); statusOf(err) != 401 {
		t.Errorf("revoked key: %v, want 401", err)
	}
	g.admin("GET", "/api/enterprise/vkeys", nil, &list)
	if list.Data[0]["status"] != "revoked" {
		t.Errorf("status after revoke = %v", list.Data[0]["status"])
	}
	if code := g.admin("POST", "/api/enterprise/vkeys/vk_nope/revoke", nil, nil); code != 404 {
		t.Errorf("revoke unknown: %d, want 404", code)
	}
	if code := g.admin("GET", "/api/enterprise/vkeys/vk_nope/budget", nil, nil); code != 404 {
		t.Errorf("budget unknown: %d, want 404", code)
	}
	for _, bad := range []map[string]any{
		{"budget_period": "hourly"}, {"max_budget_usd": -1}, {"rpm_limit": -5}, {"alias": 5}, {"colour": "red"},
		{"max_budget_usd": 1, "monthly_spend_cap": 2}, {"model_restrictions": []string{""}},
		// A cap of 0 is not "no cap"; below a micro-dollar cannot be metered.
		{"max_budget_usd": 0}, {"monthly_spend_cap": 0}, {"max_budget_usd": 0.0000001}, {"max_budget_usd": 1e12},
		{"rpm_limit": 1e12}, {"tpm_limit": 9223372036854775807},
	} {
		if code := g.admin("POST", "/api/enterprise/vkeys", bad, nil); code != 400 {
			t.Errorf("create %v: %d, want 400", bad, code)
		}
	}
}

func mustGet(t *testing.T, url string) string {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

func TestAdminAuth(t *testing.T) {
	g := start(t, nil, nil)
	for _, tok := range []string{"", "wrong", adminKey + "x", strings.ToUpper(adminKey)} {
		req, _ := http.NewRequest("GET", g.mgmt+"/api/enterprise/vkeys", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("token %q: %d, want 401", tok, resp.StatusCode)
		}
	}
	// A virtual key is not an admin key.
	key, _ := g.newKey(nil)
	req, _ := http.NewRequest("GET", g.mgmt+"/api/enterprise/vkeys", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, _ := http.DefaultClient.Do(req)
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("virtual key on management: %d, want 401", resp.StatusCode)
	}
	for _, path := range []string{"/health", "/ready"} {
		resp, err := http.Get(g.mgmt + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %d", path, resp.StatusCode)
		}
	}
}

func TestLogQueries(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)
	key, _ := g.newKey(nil)
	c := g.client(key)
	for _, m := range []string{"gpt-4o-mini", "gpt-4o-mini", "gpt-4o"} {
		if _, err := c.Chat.Completions.New(context.Background(), chatParams(m, "hi")); err != nil {
			t.Fatal(err)
		}
	}
	g.logEntries("", 3)
	var page struct {
		Success      bool
		Total, Limit int
		Offset       int
		Data         []map[string]any
	}
	g.admin("GET", "/api/vas/logs?model=gpt-4o-mini&limit=1&offset=1", nil, &page)
	if !page.Success || page.Total != 2 || page.Limit != 1 || page.Offset != 1 || len(page.Data) != 1 || page.Data[0]["model"] != "gpt-4o-mini" {
		t.Errorf("filtered page = %+v", page)
	}
	g.admin("GET", "/api/vas/logs?provider=groq", nil, &page)
	if page.Total != 0 || len(page.Data) != 0 {
		t.Errorf("provider filter = %+v", page)
	}
	for _, q := range []string{"limit=1001", "limit=0", "limit=x", "days=0", "days=366", "offset=-1"} {
		if code := g.admin("GET", "/api/vas/logs?"+q, nil, nil); code != 400 {
			t.Errorf("%s: %d, want 400", q, code)
		}
	}
	var sum map[string]any
	if code := g.admin("GET", "/api/vas/metrics", nil, &sum); code != 200 {
		t.Fatalf("metrics: %d", code)
	}
	if sum["total_requests"] != 3.0 || sum["success_rate"] != 100.0 || sum["total_tokens"].(float64) == 0 {
		t.Errorf("summary = %v", sum)
	}
	// Prometheus metrics on the proxy.
	resp, err := http.Get(g.proxy + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(b)
	for _, want := range []string{
		`svc_requests_total{model="gpt-4o-mini",provider="openai",status="200"} 2`,
		`svc_request_latency_seconds_bucket{provider="openai"`,
		`svc_tokens_total{direction="prompt",provider="openai"}`,
		`svc_tokens_total{direction="completion",provider="openai"}`,
		`svc_cost_usd_total{provider="openai"}`,
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	fake.Set(providertest.WithStatus(500))
	c.Chat.Completions.New(context.Background(), chatParams("gpt-4o", "hi"))
	resp, _ = http.Get(g.proxy + "/metrics")
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), `svc_provider_errors_total{provider="openai",status_code="500"} 1`) {
		t.Error("/metrics lacks the provider error")
	}
}

func TestProviderPerf(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)
	key, _ := g.newKey(nil)
	c := g.client(key)
	for i := 0; i < 4; i++ {
		if _, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hi")); err != nil {
			t.Fatal(err)
		}
	}
	fake.Set(providertest.WithStatus(503))
	c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hi"))
	var perf struct {
		Data []struct {
			Provider, Model  string
			Requests, Errors int64
			ErrorRate        float64 `json:"error_rate"`
			P95MS            int64   `json:"p95_ms"`
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		g.admin("GET", "/api/providers/perf", nil, &perf)
		if len(perf.Data) == 1 && perf.Data[0].Requests == 5 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if len(perf.Data) != 1 || perf.Data[0].Provider != "openai" || perf.Data[0].Requests != 5 || perf.Data[0].Errors != 1 || perf.Data[0].P95MS == 0 {
		t.Fatalf("perf = %+v, want 5 requests and 1 provider failure for openai/gpt-4o-mini", perf.Data)
	}
}
