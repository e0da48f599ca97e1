package wire

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

const testAdminKey = "wire-test-admin-key-0123456789"

// healthAnswer is the part of GET /api/health/comprehensive these tests read.
type healthAnswer struct {
	Status  string   `json:"status"`
	Reasons []string `json:"reasons"`
	Process struct {
		Instance   string   `json:"instance"`
		Components []string `json:"components"`
	} `json:"process"`
	Components []beatRow                    `json:"components"`
	Stores     map[string]struct{ OK bool } `json:"stores"`
	Providers  []providerRow                `json:"providers"`
	Bridge     struct {
		Status  string   `json:"status"`
		Backlog *float64 `json:"backlog"`
	} `json:"bridge"`
}

type beatRow struct {
	Component, Instance, Status string
	Self                        bool
}

type providerRow struct {
	Name    string
	Enabled bool
}

// running builds and runs a process from settings, stopped when t ends.
func running(t *testing.T, settings config.Map) *Process {
	t.Helper()
	m := config.Map{"SVC_DATA_DIR": t.TempDir(), "SVC_HOST": "127.0.0.1", "PROXY_PORT": "0", "MANAGEMENT_PORT": "0", "BRIDGE_PORT": "0", "COMPLIANCE_PORT": "0", "POLICY_PORT": "0",
		"ADMIN_API_KEY": testAdminKey, "SEMANTIC_CACHE_ENABLED": "false", "SVC_HEARTBEAT_INTERVAL": "1s"}
	for k, v := range settings {
		m[k] = v
	}
	cfg, err := config.FromSource(m, Components())
	if err != nil {
		t.Fatal(err)
	}
	p, err := Build(t.Context(), cfg, Options{Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	storetest.Background(t, p.Run)
	return p
}

// comprehensive asks p's management API for the comprehensive health until
// ready says the answer is complete (the other components' first beats may
// not be in yet), for at most 10 s; it returns the last answer.
func comprehensive(t *testing.T, p *Process, ready func(h healthAnswer) bool) healthAnswer {
	t.Helper()
	var h healthAnswer
	for deadline := time.Now().Add(10 * time.Second); ; {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, "http://"+p.Addr(config.Management).String()+"/api/health/comprehensive", nil)
		req.Header.Set("Authorization", "Bearer "+testAdminKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		h = healthAnswer{}
		if err := json.Unmarshal(b, &h); err != nil {
			t.Fatalf("answer %d %q: %v", resp.StatusCode, b, err)
		}
		if ready(h) || time.Now().After(deadline) {
			return h
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// has reports whether the answer has component of instance with status.
func (h healthAnswer) has(component, instance, status string) bool {
	return slices.ContainsFunc(h.Components, func(c beatRow) bool {
		return c.Component == component && c.Instance == instance && c.Status == status
	})
}

func TestComprehensiveHealthOneProcess(t *testing.T) {
	p := running(t, config.Map{"OPENAI_API_KEY": "sk-wire-test-0123456789"})
	var self string
	h := comprehensive(t, p, func(h healthAnswer) bool {
		self = h.Process.Instance
		return h.has(config.Proxy, self, "ok") && h.has(config.Management, self, "ok") && h.has(config.Bridge, self, "ok")
	})
	if h.Status != "ok" || !h.Stores["kv"].OK || !h.Stores["sql"].OK {
		t.Errorf("status %q %v, stores %v; want ok", h.Status, h.Reasons, h.Stores)
	}
	if !slices.Equal(h.Process.Components, []string{config.Proxy, config.Management, config.Compliance, config.Policy, config.Bridge}) {
		t.Errorf("process components %v, want [proxy api-server compliance policy-perfect bridge]", h.Process.Components)
	}
	if h.Bridge.Status != "ok" || h.Bridge.Backlog == nil {
		t.Errorf("bridge %+v, want ok (its beat carries lag and backlog)", h.Bridge)
	}
	if !h.has(config.Proxy, self, "ok") || !h.has(config.Management, self, "ok") {
		t.Errorf("components %+v, want proxy and api-server of %s, ok", h.Components, self)
	}
	i := slices.IndexFunc(h.Providers, func(p providerRow) bool { return p.Name == "openai" })
	if i < 0 || !h.Providers[i].Enabled {
		t.Errorf("providers %+v, want openai enabled (its key is set)", h.Providers)
	}
	if slices.ContainsFunc(h.Providers, func(p providerRow) bool { return p.Name == "anthropic" }) {
		t.Errorf("providers %+v: anthropic has no key and no calls, want it left out", h.Providers)
	}
}

// A management process sees a separate proxy process's component through
// its heartbeats in Redis, and that it stopped when it has.
func TestComprehensiveHealthAcrossProcesses(t *testing.T) {
	pg := storetest.PostgresURL(t)
	redisURL := os.Getenv(storetest.RedisURLEnv)
	if redisURL == "" {
		t.Skip("set " + storetest.RedisURLEnv + "=redis://127.0.0.1:6379/0 to run the multi-process test")
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	prefix := "svcwire:" + hex.EncodeToString(b) + ":"
	t.Cleanup(func() { deletePrefix(t, redisURL, prefix) })
	shared := config.Map{"DATABASE_URL": pg, "REDIS_URL": redisURL, "SVC_REDIS_PREFIX": prefix,
		"SVC_MASTER_KEY": "4f1c0e8a9b7d6c5e3a2f1b0c9d8e7f6a5b4c3d2e1f0a9b8c7d6e5f4a3b2c1d0e"}
	mgmtSettings := config.Map{"SERVICE_TYPE": config.Management}
	proxySettings := config.Map{"SERVICE_TYPE": config.Proxy}
	for k, v := range shared {
		mgmtSettings[k], proxySettings[k] = v, v
	}
	m := running(t, mgmtSettings)

	// The proxy process runs in a subtest so it stops before the last check.
	var proxyInstance string
	t.Run("proxy running", func(t *testing.T) {
		px := running(t, proxySettings)
		proxyInstance = px.sys.beats.v.Process().Instance
		h := comprehensive(t, m, func(h healthAnswer) bool { return h.has(config.Proxy, proxyInstance, "ok") })
		if !h.has(config.Proxy, proxyInstance, "ok") || h.Status != "ok" {
			t.Fatalf("status %q, components %+v; want the proxy %s ok", h.Status, h.Components, proxyInstance)
		}
		if !slices.Equal(h.Process.Components, []string{config.Management}) {
			t.Errorf("process components %v, want [api-server]", h.Process.Components)
		}
	})
	h := comprehensive(t, m, func(h healthAnswer) bool { return h.has(config.Proxy, proxyInstance, "stopped") })
	if !h.has(config.Proxy, proxyInstance, "stopped") || h.Status != "ok" {
		t.Errorf("after the proxy stopped: status %q, components %+v; want it stopped, status ok", h.Status, h.Components)
	}
}

func deletePrefix(t *testing.T, url, prefix string) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Error(err)
		return
	}
	c := redis.NewClient(opts)
	defer c.Close()
	ctx := context.Background()
	iter := c.Scan(ctx, 0, prefix+"*", 1000).Iterator()
	for iter.Next(ctx) {
		c.Del(ctx, iter.Val())
	}
}
