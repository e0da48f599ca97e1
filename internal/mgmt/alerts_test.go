package mgmt_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/alerts"
	"github.com/svc-gateway/svc/internal/mgmt"
	"github.com/svc-gateway/svc/internal/store/memkv"
)

const alertsAdminKey = "admin-key-for-alert-tests"

// alertsServer serves the management API with n as its Alerts (nil: none).
func alertsServer(t *testing.T, n mgmt.Alerter) *httptest.Server {
	t.Helper()
	api := mgmt.New(mgmt.Deps{AdminKey: alertsAdminKey, Alerts: n, Now: func() time.Time { return testNow }})
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return srv
}

// notifier returns an enabled Notifier on memkv with no platform; running
// says whether it dispatches (else its queue only fills).
func notifier(t *testing.T, queue int, running bool) *alerts.Notifier {
	t.Helper()
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	n, err := alerts.New(alerts.Options{Enabled: true, Store: kv, QueueSize: queue, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if running {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = n.Run(ctx); close(done) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	return n
}

// call sends an admin request and decodes the JSON answer.
func call(t *testing.T, srv *httptest.Server, method, path, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+alertsAdminKey)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: answer is not JSON: %v: %s", method, path, err, b)
	}
	return resp.StatusCode, out
}

// errCode returns an error answer's code.
func errCode(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	code, _ := e["code"].(string)
	return code
}

func TestAlertsRoutesRefuseBadInput(t *testing.T) {
	srv := alertsServer(t, notifier(t, 16, false))
	for _, tc := range []struct {
		name, method, path, body string
		param                    string
	}{
		{"no title", "POST", "/api/alerts", `{"message":"m"}`, "title"},
		{"empty title", "POST", "/api/alerts", `{"title":"  "}`, "title"},
		{"title too long", "POST", "/api/alerts", `{"title":"` + strings.Repeat("é", 201) + `"}`, "title"},
		{"title not a string", "POST", "/api/alerts", `{"title":5}`, "title"},
		{"message too long", "POST", "/api/alerts", `{"title":"t","message":"` + strings.Repeat("m", 4001) + `"}`, "message"},
		{"bad severity", "POST", "/api/alerts", `{"title":"t","severity":"urgent"}`, "severity"},
		{"severity not a string", "POST", "/api/alerts", `{"title":"t","severity":1}`, "severity"},
		{"unknown field", "POST", "/api/alerts", `{"title":"t","channel":"#ops"}`, "channel"},
		{"limit 0", "GET", "/api/alerts?limit=0", "", "limit"},
		{"limit 201", "GET", "/api/alerts?limit=201", "", "limit"},
		{"limit not a number", "GET", "/api/alerts?limit=ten", "", "limit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := call(t, srv, tc.method, tc.path, tc.body)
			if param := errParam(body); status != http.StatusBadRequest || param != tc.param {
				t.Errorf("got %d %v, want 400 naming %s", status, body, tc.param)
			}
		})
	}
	if status, body := call(t, srv, "POST", "/api/alerts", `not json`); status != http.StatusBadRequest {
		t.Errorf("a body that is not JSON: got %d %v, want 400", status, body)
	}
}

func TestAlertsRaiseAndList(t *testing.T) {
	srv := alertsServer(t, notifier(t, 16, true))
	status, body := call(t, srv, "POST", "/api/alerts", `{"title":"Deploy window","message":"Maintenance at 18:00","severity":"info"}`)
	if status != http.StatusAccepted || body["success"] != true {
		t.Fatalf("POST: got %d %v, want 202 success", status, body)
	}
	a, _ := body["alert"].(map[string]any)
	if a["type"] != "Custom" || a["severity"] != "info" || a["title"] != "Deploy window" || a["message"] != "Maintenance at 18:00" || a["id"] == "" {
		t.Errorf("alert = %v, want the Custom info alert with an id", a)
	}
	status, body = call(t, srv, "POST", "/api/alerts", `{"title":"Second"}`)
	if b, _ := body["alert"].(map[string]any); status != http.StatusAccepted || b["severity"] != "warning" {
		t.Fatalf("POST without severity: got %d %v, want 202 with severity warning", status, body)
	}

	deadline := time.Now().Add(10 * time.Second)
	for {
		status, body = call(t, srv, "GET", "/api/alerts?limit=1", "")
		list, _ := body["alerts"].([]any)
		if status != http.StatusOK || body["success"] != true {
			t.Fatalf("GET: got %d %v", status, body)
		}
		if len(list) == 1 {
			if first, _ := list[0].(map[string]any); first["title"] != "Second" {
				t.Errorf("GET ?limit=1 = %v, want the newest alert (Second)", list)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the raised alerts never appeared in GET /api/alerts: %v", body)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, body = call(t, srv, "GET", "/api/alerts", ""); len(body["alerts"].([]any)) != 2 {
		t.Errorf("GET (default limit) = %v, want both alerts", body["alerts"])
	}
}

func TestAlertsUnavailable(t *testing.T) {
	t.Run("queue full", func(t *testing.T) {
		srv := alertsServer(t, notifier(t, 1, false))
		if status, _ := call(t, srv, "POST", "/api/alerts", `{"title":"one"}`); status != http.StatusAccepted {
			t.Fatalf("first POST: got %d, want 202", status)
		}
		status, body := call(t, srv, "POST", "/api/alerts", `{"title":"two"}`)
		if code := errCode(body); status != http.StatusServiceUnavailable || code != "alerts_queue_full" {
			t.Errorf("POST to a full queue: got %d %v, want 503 alerts_queue_full", status, body)
		}
	})
	disabled, err := alerts.New(alerts.Options{Enabled: false})
	if err != nil {
		t.Fatal(err)
	}
	var typedNil *alerts.Notifier
	for name, n := range map[string]mgmt.Alerter{"nil": nil, "disabled": disabled, "typed nil": typedNil} {
		t.Run(name, func(t *testing.T) {
			srv := alertsServer(t, n)
			for _, m := range []struct{ method, body string }{{"POST", `{"title":"t"}`}, {"GET", ""}} {
				status, body := call(t, srv, m.method, "/api/alerts", m.body)
				if code := errCode(body); status != http.StatusServiceUnavailable || code != "alerts_disabled" {
					t.Errorf("%s /api/alerts: got %d %v, want 503 alerts_disabled", m.method, status, body)
				}
			}
		})
	}
	// The routes are behind the admin key.
	srv := alertsServer(t, notifier(t, 1, false))
	resp, err := http.Post(srv.URL+"/api/alerts", "application/json", strings.NewReader(`{"title":"t"}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST without the admin key: got %d, want 401", resp.StatusCode)
	}
}
