package mgmt_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/analytics"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/mgmt"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

const analyticsAdminKey = "admin-key-for-the-analytics-test-0123456789"

// analyticsServer serves the management API, with rollups holding recs when
// withRollups.
func analyticsServer(t *testing.T, withRollups bool, recs []audit.Record) *httptest.Server {
	t.Helper()
	d := mgmt.Deps{AdminKey: analyticsAdminKey, Now: func() time.Time { return testNow }}
	if withRollups {
		db, err := sqlstore.Open(t.Context(), "sqlite://"+filepath.Join(t.TempDir(), "svc.db"))
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		t.Cleanup(func() { db.Close() })
		d.Analytics = analytics.NewRollups(db)
		if err := d.Analytics.Add(t.Context(), nil, recs); err != nil {
			t.Fatalf("Add: %v", err)
		}
	}
	srv := httptest.NewServer(mgmt.New(d).Handler())
	t.Cleanup(srv.Close)
	return srv
}

func getJSON(t *testing.T, srv *httptest.Server, path string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+analyticsAdminKey)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("GET %s: decode: %v", path, err)
	}
	return resp.StatusCode, body
}

func TestAnalyticsRoute(t *testing.T) {
	recs := []audit.Record{
		{RequestID: "a", Timestamp: testNow.Add(-time.Hour), Provider: "openai", Model: "gpt-4o", KeyID: "vk1",
			KeyMask: "sk-svc-ab…", Status: 200, Success: true, Tokens: 30, Cost: 0.5, LatencyMS: 800},
		{RequestID: "b", Timestamp: testNow.Add(-2 * time.Hour), Provider: "openai", Model: "gpt-4o", KeyID: "vk1",
			KeyMask: "sk-svc-ab…", Status: 502, Tokens: 0, LatencyMS: 100},
		{RequestID: "c", Timestamp: testNow.Add(-48 * time.Hour), Provider: "anthropic", Model: "claude", Status: 200, Success: true},
	}
	srv := analyticsServer(t, true, recs)
	status, body := getJSON(t, srv, "/api/analytics?period=24h")
	if status != http.StatusOK {
		t.Fatalf("GET period=24h: status %d, body %v", status, body)
	}
	totals, _ := body["totals"].(map[string]any)
	if totals["requests"] != 2.0 || totals["errors"] != 1.0 || totals["error_rate"] != 0.5 || body["period"] != "24h" {
		t.Errorf("totals = %v, period %v; want 2 requests, 1 error, rate 0.5, period 24h", totals, body["period"])
	}
	keys, _ := body["top_keys"].([]any)
	if len(keys) != 1 || keys[0].(map[string]any)["key"] != "sk-svc-ab…" || keys[0].(map[string]any)["key_id"] != "vk1" {
		t.Errorf("top_keys = %v, want vk1 with its masked key", keys)
	}
	if status, body := getJSON(t, srv, "/api/analytics?period=7d"); status != http.StatusOK ||
		body["totals"].(map[string]any)["requests"] != 3.0 {
		t.Errorf("GET period=7d: status %d, body %v; want 3 requests", status, body)
	}

	for _, tc := range []struct{ query, param string }{
		{"period=1y", "period"},
		{"from=2026-04-30T00:00:00Z", "to"},
		{"to=2026-04-30T00:00:00Z", "from"},
		{"from=2026-04-30T00:00:00Z&to=2026-04-29T00:00:00Z", "to"},
		{"from=2024-04-30T00:00:00Z&to=2026-04-29T00:00:00Z", "to"},
		{"from=garbage&to=2026-04-29T00:00:00Z", "from"},
		{"period=24h&from=2026-04-29T00:00:00Z&to=2026-04-30T00:00:00Z", "period"},
	} {
		status, body := getJSON(t, srv, "/api/analytics?"+tc.query)
		e, _ := body["error"].(map[string]any)
		if status != http.StatusBadRequest || e["param"] != tc.param {
			t.Errorf("GET ?%s: status %d, error %v; want 400 naming %q", tc.query, status, e, tc.param)
		}
	}
}

func TestAnalyticsRouteAbsentWithoutRollups(t *testing.T) {
	srv := analyticsServer(t, false, nil)
	if status, body := getJSON(t, srv, "/api/analytics?period=24h"); status != http.StatusNotFound {
		t.Errorf("GET /api/analytics without rollups: status %d (%v), want 404", status, body)
	}
}
