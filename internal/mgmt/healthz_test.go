package mgmt_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/health"
	"github.com/svc-gateway/svc/internal/heartbeat"
	"github.com/svc-gateway/svc/internal/mgmt"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

const healthAdminKey = "healthz-admin-key-0123456789abcdef"

// healthAnswer is the part of the answer the tests read.
type healthAnswer struct {
	Status  string   `json:"status"`
	Reasons []string `json:"reasons"`
	Process *struct {
		Instance   string   `json:"instance"`
		UptimeS    float64  `json:"uptime_s"`
		Components []string `json:"components"`
	} `json:"process"`
	Components []struct {
		Component string         `json:"component"`
		Instance  string         `json:"instance"`
		Self      bool           `json:"self"`
		Status    string         `json:"status"`
		AgeS      float64        `json:"age_s"`
		Details   map[string]any `json:"details"`
	} `json:"components"`
	Stores map[string]struct {
		OK    bool     `json:"ok"`
		RTTMS *float64 `json:"rtt_ms"`
		Error string   `json:"error"`
	} `json:"stores"`
	Bridge struct {
		Status     string   `json:"status"`
		Instance   string   `json:"instance"`
		LagSeconds *float64 `json:"lag_seconds"`
		Backlog    *int64   `json:"backlog"`
		LastWrite  any      `json:"last_write"`
	} `json:"bridge"`
	Providers []struct {
		Name      string  `json:"name"`
		Enabled   bool    `json:"enabled"`
		Requests  int64   `json:"requests"`
		Errors    int64   `json:"errors"`
		ErrorRate float64 `json:"error_rate"`
		P95MS     int64   `json:"p95_ms"`
		Models    []any   `json:"models"`
	} `json:"providers"`
}

// healthEnv is a management API over real stores with a heartbeat
// publisher whose components have beaten.
type healthEnv struct {
	kv   heartbeat.Log
	self *heartbeat.Publisher
	deps mgmt.Deps
	now  time.Time
}

// pinger is a store's Ping (memkv, rediskv, sqlstore).
type pinger interface {
	Ping(ctx context.Context) error
}

func newHealthEnv(t *testing.T, kv interface {
	heartbeat.Log
	health.Store
	pinger
}, db pinger) *healthEnv {
	t.Helper()
	// Beats are read back by the store's own clock: the tests' clock starts now.
	now := time.Now().UTC()
	self := heartbeat.New(kv, heartbeat.Options{Instance: "self-1", Version: "v9", Now: func() time.Time { return now }})
	for _, c := range []string{"proxy", "api-server"} {
		if err := self.Component(c, nil).Beat(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	e := &healthEnv{kv: kv, self: self, now: now}
	e.deps = mgmt.Deps{AdminKey: healthAdminKey, Heartbeats: self,
		Probes: map[string]app.Probe{"kv": kv.Ping, "sql": db.Ping},
		Health: health.New(kv, slog.New(slog.DiscardHandler)),
		Now:    func() time.Time { return e.now.Add(2 * time.Second) }}
	return e
}

func memStores(t *testing.T) (*memkv.KV, *sqlstore.DB) {
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	return kv, storetest.OpenSQL(t, "sqlite://"+filepath.Join(t.TempDir(), "svc.db"))
}

// get asks for the comprehensive health with key and decodes the answer.
func (e *healthEnv) get(t *testing.T, key string) (int, healthAnswer) {
	t.Helper()
	srv := httptest.NewServer(mgmt.New(e.deps).Handler())
	defer srv.Close()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/api/health/comprehensive", nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out healthAnswer
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("decode: %v", err)
	}
	return resp.StatusCode, out
}

// beat publishes one beat of component on another instance, at.
func (e *healthEnv) beat(t *testing.T, instance, component string, at time.Time, details map[string]any) {
	t.Helper()
	p := heartbeat.New(e.kv, heartbeat.Options{Instance: instance, Now: func() time.Time { return at }})
	if err := p.Component(component, func() map[string]any { return details }).Beat(t.Context()); err != nil {
		t.Fatal(err)
	}
}

func TestComprehensiveHealthOK(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  func(t *testing.T) *healthEnv
	}{
		{"memkv+SQLite", func(t *testing.T) *healthEnv {
			kv, db := memStores(t)
			return newHealthEnv(t, kv, db)
		}},
		{"Redis+Postgres", func(t *testing.T) *healthEnv {
			kv := storetest.RedisKV(t)
			return newHealthEnv(t, kv, storetest.OpenSQL(t, storetest.PostgresURL(t)))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.env(t)
			e.beat(t, "other-2", "proxy", e.now, nil)
			status, got := e.get(t, healthAdminKey)
			if status != http.StatusOK || got.Status != "ok" || len(got.Reasons) != 0 {
				t.Fatalf("answer %d, status %q, reasons %v; want 200 ok", status, got.Status, got.Reasons)
			}
			for _, name := range []string{"kv", "sql"} {
				if s := got.Stores[name]; !s.OK || s.RTTMS == nil || *s.RTTMS < 0 || s.Error != "" {
					t.Errorf("stores.%s = %+v, want ok with a round trip", name, s)
				}
			}
			if got.Process == nil || got.Process.Instance != "self-1" || got.Process.UptimeS != 2 ||
				!cmp.Equal(got.Process.Components, []string{"proxy", "api-server"}) {
				t.Errorf("process = %+v, want self-1, up 2 s, [proxy api-server]", got.Process)
			}
			var comps []string
			for _, c := range got.Components {
				comps = append(comps, c.Component+"@"+c.Instance+":"+c.Status)
				if c.Self != (c.Instance == "self-1") {
					t.Errorf("%s@%s: self %v", c.Component, c.Instance, c.Self)
				}
			}
			want := []string{"api-server@self-1:ok", "proxy@other-2:ok", "proxy@self-1:ok"}
			if !cmp.Equal(comps, want) {
				t.Errorf("components %v, want %v", comps, want)
			}
			if got.Bridge.Status != "absent" || got.Bridge.LagSeconds != nil || got.Bridge.Backlog != nil {
				t.Errorf("bridge = %+v, want absent, no figures", got.Bridge)
			}
			if got.Providers == nil {
				t.Errorf("providers is null, want a list")
			}
		})
	}
}

func TestComprehensiveHealthNeedsTheAdminKey(t *testing.T) {
	kv, db := memStores(t)
	e := newHealthEnv(t, kv, db)
	if status, _ := e.get(t, "wrong-key-0123456789abcdef0123456789"); status != http.StatusUnauthorized {
		t.Errorf("wrong key: %d, want 401", status)
	}
}

// failingKV is a KV store whose ping fails; its other blocks are memkv's.
type failingKV struct {
	*memkv.KV
	err error
}

func (f failingKV) Ping(ctx context.Context) error {
	if f.err == nil {
		<-ctx.Done() // hangs until the caller gives up
		return ctx.Err()
	}
	return f.err
}

func TestComprehensiveHealthDown(t *testing.T) {
	for _, tc := range []struct {
		name      string
		err       error
		wantError string
	}{
		{"ping fails", errors.New("connection refused"), "connection refused"},
		{"ping hangs", nil, "no answer within 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem, db := memStores(t)
			e := newHealthEnv(t, failingKV{mem, tc.err}, db)
			status, got := e.get(t, healthAdminKey)
			if status != http.StatusServiceUnavailable || got.Status != "down" {
				t.Fatalf("answer %d %q, want 503 down", status, got.Status)
			}
			if kv := got.Stores["kv"]; kv.OK || kv.Error != tc.wantError {
				t.Errorf("stores.kv = %+v, want not ok, error %q", kv, tc.wantError)
			}
			if !got.Stores["sql"].OK {
				t.Errorf("stores.sql = %+v, want ok", got.Stores["sql"])
			}
			if len(got.Reasons) != 1 || !strings.HasPrefix(got.Reasons[0], "kv: ") {
				t.Errorf("reasons %q, want the kv's failure", got.Reasons)
			}
		})
	}
	t.Run("no probes", func(t *testing.T) {
		mem, db := memStores(t)
		e := newHealthEnv(t, mem, db)
		delete(e.deps.Probes, "sql")
		if status, got := e.get(t, healthAdminKey); status != http.StatusServiceUnavailable || got.Stores["sql"].Error != "not configured" {
			t.Errorf("answer %d, sql %+v; want 503, not configured", status, got.Stores["sql"])
		}
	})
}

func TestComprehensiveHealthProviders(t *testing.T) {
	kv, db := memStores(t)
	e := newHealthEnv(t, kv, db)
	tr := e.deps.Health
	for i := range 30 {
		tr.Observe("openai", "gpt-4o", 80*time.Millisecond, i < 20) // 20 of 30 fail
	}
	for range 5 {
		tr.Observe("anthropic", "claude-sonnet-4", 300*time.Millisecond, true) // all fail, too few to judge
	}
	tr.Observe("stale-provider", "m", time.Millisecond, false)
	tr.Flush(t.Context())
	tr.Refresh(t.Context())
	e.deps.Providers = func(context.Context) map[string]bool {
		return map[string]bool{"openai": true, "anthropic": true, "cohere": true, "groq": false}
	}
	status, got := e.get(t, healthAdminKey)
	if status != http.StatusOK || got.Status != "degraded" {
		t.Fatalf("answer %d %q, want 200 degraded", status, got.Status)
	}
	if !slices.Contains(got.Reasons, "provider openai: error rate 0.67 over 30 requests") || len(got.Reasons) != 1 {
		t.Errorf("reasons %q, want only openai's error rate", got.Reasons)
	}
	type row struct {
		Name             string
		Enabled          bool
		Requests, Errors int64
		ErrorRate        float64
		P95MS            int64
		Models           int
	}
	var rows []row
	for _, p := range got.Providers {
		rows = append(rows, row{p.Name, p.Enabled, p.Requests, p.Errors, p.ErrorRate, p.P95MS, len(p.Models)})
	}
	want := []row{
		{"anthropic", true, 5, 5, 1, 500, 1},
		{"cohere", true, 0, 0, 0, 0, 0},
		{"openai", true, 30, 20, 20.0 / 30, 100, 1},
		{"stale-provider", false, 1, 0, 0, 25, 1},
	}
	if d := cmp.Diff(want, rows); d != "" {
		t.Errorf("providers (-want +got):\n%s", d)
	}
}

func TestComprehensiveHealthBridge(t *testing.T) {
	t.Run("present", func(t *testing.T) {
		kv, db := memStores(t)
		e := newHealthEnv(t, kv, db)
		e.beat(t, "bridge-old", "bridge", e.now.Add(-time.Second), map[string]any{"lag_seconds": 9.0, "backlog": 90})
		e.beat(t, "bridge-1", "bridge", e.now, map[string]any{"lag_seconds": 2.5, "backlog": 7, "last_write": "2026-11-24T07:00:00Z"})
		_, got := e.get(t, healthAdminKey)
		b := got.Bridge
		if b.Status != "ok" || b.Instance != "bridge-1" || b.LagSeconds == nil || *b.LagSeconds != 2.5 ||
			b.Backlog == nil || *b.Backlog != 7 || b.LastWrite != "2026-11-24T07:00:00Z" {
			t.Errorf("bridge = %+v, want bridge-1's figures", b)
		}
		if got.Status != "ok" {
			t.Errorf("status %q (%v), want ok", got.Status, got.Reasons)
		}
	})
	for _, tc := range []struct {
		backlog    int64
		wantStatus string
	}{{0, "ok"}, {12, "degraded"}} {
		t.Run(fmt.Sprintf("absent, backlog %d", tc.backlog), func(t *testing.T) {
			kv, db := memStores(t)
			e := newHealthEnv(t, kv, db)
			e.deps.Backlog = func(context.Context) (int64, error) { return tc.backlog, nil }
			_, got := e.get(t, healthAdminKey)
			if got.Bridge.Status != "absent" || got.Bridge.Backlog == nil || *got.Bridge.Backlog != tc.backlog {
				t.Errorf("bridge = %+v, want absent with backlog %d", got.Bridge, tc.backlog)
			}
			if got.Status != tc.wantStatus {
				t.Errorf("status %q (%v), want %s", got.Status, got.Reasons, tc.wantStatus)
			}
		})
	}
}

func TestComprehensiveHealthStaleComponent(t *testing.T) {
	kv, db := memStores(t)
	e := newHealthEnv(t, kv, db)
	// The clock of the answer is 2 s after now: a beat 14 s before now is
	// 16 s old, over three 5 s intervals; one 12 s before is not.
	e.beat(t, "gone-3", "proxy", e.now.Add(-14*time.Second), nil)
	e.beat(t, "slow-4", "proxy", e.now.Add(-12*time.Second), nil)
	_, got := e.get(t, healthAdminKey)
	if got.Status != "degraded" || len(got.Reasons) != 1 || got.Reasons[0] != "proxy on gone-3: no heartbeat for 16s" {
		t.Errorf("status %q, reasons %q; want degraded by gone-3 only", got.Status, got.Reasons)
	}
	statuses := map[string]string{}
	for _, c := range got.Components {
		statuses[c.Instance+"/"+c.Component] = c.Status
	}
	if statuses["gone-3/proxy"] != "stale" || statuses["slow-4/proxy"] != "ok" {
		t.Errorf("statuses %v, want gone-3 stale, slow-4 ok", statuses)
	}
}

// Deps without heartbeats still answer with the stores and providers.
func TestComprehensiveHealthWithoutHeartbeats(t *testing.T) {
	kv, db := memStores(t)
	e := newHealthEnv(t, kv, db)
	e.deps.Heartbeats = nil
	status, got := e.get(t, healthAdminKey)
	if status != http.StatusOK || got.Status != "ok" || got.Process != nil || len(got.Components) != 0 || got.Bridge.Status != "absent" {
		t.Errorf("answer %d %+v, want ok with no process nor components", status, got)
	}
}
