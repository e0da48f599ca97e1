package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/compliance/detect"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/policy"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

const (
	adminKey = "admin-secret"
	userKey  = "sk-svc-user"
)

func testAuth() auth.Authenticator {
	return auth.Chain{auth.AdminKey(adminKey), auth.AuthenticatorFunc(func(_ context.Context, c auth.Credentials) (*identity.Principal, error) {
		if c.Bearer == userKey {
			return &identity.Principal{Kind: identity.VirtualKey, ID: "key1", TeamID: "acme"}, nil
		}
		return nil, auth.ErrNotMine
	})}
}

// compile is a stand-in compiler: SSN policies block SSNs.
func compile(content string) policy.Checks {
	c := policy.Checks{Action: policy.ActionFlag, AppliesTo: policy.ScopeBoth}
	if strings.Contains(content, "SSN") {
		c.Detectors, c.Action = []detect.Type{detect.SSN}, policy.ActionBlock
	}
	return c
}

type fixture struct {
	srv   *httptest.Server
	api   *API
	store *policy.SQLStore
	ready error
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixtureOn(t, storetest.OpenSQL(t, "sqlite://"+t.TempDir()+"/svc.db"))
}

func newFixtureOn(t *testing.T, db *sqlstore.DB) *fixture {
	t.Helper()
	f := &fixture{store: policy.NewSQLStore(db, func() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) })}
	f.api = New(Deps{Auth: testAuth(), Store: f.store, Compile: compile,
		Probes: map[string]app.Probe{"db": func(context.Context) error { return f.ready }}})
	f.srv = httptest.NewServer(f.api.Handler())
	t.Cleanup(f.srv.Close)
	return f
}

// answer is a decoded response.
type answer struct {
	status int
	body   map[string]any
	raw    string
}

func (a answer) str(path ...string) string {
	var v any = a.body
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	s, _ := v.(string)
	return s
}

func (f *fixture) do(t *testing.T, key, method, path, body string) answer {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, f.srv.URL+path, rd)
	if err != nil {
		t.Fatalf("NewRequest: %v", err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, raw: string(b)}
	_ = json.Unmarshal(b, &a.body)
	return a
}

func TestAdminOnly(t *testing.T) {
	f := newFixture(t)
	routes := []struct{ method, path string }{
		{"GET", "/api/policies"}, {"POST", "/api/policies"}, {"GET", "/api/policies/pol_x"},
		{"PUT", "/api/policies/pol_x"}, {"DELETE", "/api/policies/pol_x"},
		{"GET", "/api/presets"}, {"POST", "/api/presets"}, {"GET", "/api/presets/pre_x"},
		{"PUT", "/api/presets/pre_x"}, {"DELETE", "/api/presets/pre_x"},
		{"GET", "/api/policy/assignments"}, {"POST", "/api/policy/assignments"}, {"DELETE", "/api/policy/assignments"},
		{"GET", "/api/stats"}, {"GET", "/nowhere"},
	}
	for _, r := range routes {
		for _, key := range []string{"", "wrong", userKey} {
			t.Run(r.method+" "+r.path+" key="+key, func(t *testing.T) {
				a := f.do(t, key, r.method, r.path, "{}")
				if a.status != http.StatusUnauthorized || a.str("error", "code") != "invalid_admin_key" {
					t.Errorf("got %d %s, want 401 invalid_admin_key", a.status, a.raw)
				}
			})
		}
	}
	if a := f.do(t, adminKey, "GET", "/nowhere", ""); a.status != http.StatusNotFound {
		t.Errorf("GET /nowhere as admin: got %d, want 404", a.status)
	}
	for _, p := range []string{"/health", "/ready"} {
		if a := f.do(t, "", "GET", p, ""); a.status != http.StatusOK {
			t.Errorf("GET %s without a key: got %d, want 200", p, a.status)
		}
	}
	f.ready = errors.New("db down")
	if a := f.do(t, "", "GET", "/ready", ""); a.status != http.StatusServiceUnavailable {
		t.Errorf("GET /ready with the database down: got %d, want 503", a.status)
	}
}

// step is one request of a scenario; {name} in path or body is replaced
// by the id captured earlier as name.
type step struct {
	name    string
	method  string
	path    string
	body    string
	status  int
	param   string   // error.param on 4xx
	capture string   // save the answer's id under this name
	list    []string // a list answer's ids, in order (placeholders)
	check   func(t *testing.T, a answer)
}

var placeholder = regexp.MustCompile(`\{[a-z0-9]+\}`)

func run(t *testing.T, f *fixture, steps []step) {
	t.Helper()
	ids := map[string]string{}
	sub := func(s string) string {
		return placeholder.ReplaceAllStringFunc(s, func(m string) string {
			if v, ok := ids[strings.Trim(m, "{}")]; ok {
				return v
			}
			return m
		})
	}
	for _, s := range steps {
		a := f.do(t, adminKey, s.method, sub(s.path), sub(s.body))
		if a.status != s.status {
			t.Fatalf("%s: %s %s: got %d %s, want %d", s.name, s.method, s.path, a.status, a.raw, s.status)
		}
		if got := a.str("error", "param"); got != s.param {
			t.Errorf("%s: error.param %q, want %q (%s)", s.name, got, s.param, a.raw)
		}
		if s.status >= 400 && (a.str("error", "message") == "" || a.str("error", "type") == "") {
			t.Errorf("%s: error body %s lacks message or type", s.name, a.raw)
		}
		if s.capture != "" {
			ids[s.capture] = a.str("id")
		}
		if s.list != nil {
			want := make([]string, len(s.list))
			for i, n := range s.list {
				want[i] = sub(n)
			}
			data, _ := a.body["data"].([]any)
			got := make([]string, len(data))
			for i, d := range data {
				m, _ := d.(map[string]any)
				got[i], _ = m["id"].(string)
			}
			if diff := cmp.Diff(want, got); diff != "" || a.body["total"] != float64(len(want)) {
				t.Errorf("%s: list ids (-want +got):\n%s (total %v)", s.name, diff, a.body["total"])
			}
		}
		if s.check != nil {
			s.check(t, a)
		}
	}
}

const ssnPolicy = `{"name":"No SSN","policy_type":"compliance","content":"Block any prompt with a US SSN.",
	"priority":90,"severity":"critical","regulatory_framework":"HIPAA",
	"metadata":{"source_ips":["10.0.0.0/8","192.168.1.7"],"departments":["legal"],"owner":"ciso"}}`

// TestPolicyRoutes runs on SQLite and (with SVC_TEST_DATABASE_URL)
// PostgreSQL.
func TestPolicyRoutes(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) { testPolicyRoutes(t, newFixtureOn(t, db)) })
}

func testPolicyRoutes(t *testing.T, f *fixture) {
	run(t, f, []step{
		{name: "create", method: "POST", path: "/api/policies", body: ssnPolicy, status: 201, capture: "p1",
			check: func(t *testing.T, a answer) {
				want := map[string]any{"name": "No SSN", "policy_type": "compliance", "priority": 90.0, "severity": "critical",
					"is_active": true, "applicable_providers": []any{"all"}, "applicable_models": []any{"all"},
					"metadata":    map[string]any{"source_ips": []any{"10.0.0.0/8", "192.168.1.7"}, "departments": []any{"legal"}, "owner": "ciso"},
					"description": "", "regulatory_framework": "HIPAA",
					"checks": map[string]any{"detectors": []any{string(detect.SSN)}, "action": "block", "applies_to": "both",
						"keywords": nil, "topics": nil, "min_score": 0.0}}
				got := map[string]any{}
				for k := range want {
					got[k] = a.body[k]
				}
				if diff := cmp.Diff(want, got); diff != "" {
					t.Errorf("created policy (-want +got):\n%s", diff)
				}
				if !strings.HasPrefix(a.str("id"), "pol_") {
					t.Errorf("id %q, want pol_…", a.str("id"))
				}
			}},
		{name: "create a suggestion as it came (type, confidence)", method: "POST", path: "/api/policies", status: 201, capture: "p2",
			body: `{"id":"sug_1","name":"Low","type":"security","content":"Flag secrets.","priority":5,"confidence":0.8,"regulatory_framework":""}`,
			check: func(t *testing.T, a answer) {
				if a.str("policy_type") != "security" || a.str("severity") != "medium" || a.str("id") == "sug_1" {
					t.Errorf("suggestion posted: got %s, want policy_type security, severity medium, a new id", a.raw)
				}
			}},
		{name: "defaults", method: "POST", path: "/api/policies", status: 201, capture: "p3",
			body: `{"name":"Mid","policy_type":"brand","content":"Be polite."}`,
			check: func(t *testing.T, a answer) {
				if a.body["priority"] != 50.0 || a.body["is_active"] != true {
					t.Errorf("defaults: got %s, want priority 50, active", a.raw)
				}
			}},
		{name: "missing name", method: "POST", path: "/api/policies", body: `{"policy_type":"brand","content":"c"}`, status: 400, param: "name"},
		{name: "empty name", method: "POST", path: "/api/policies", body: `{"name":"","policy_type":"brand","content":"c"}`, status: 400, param: "name"},
		{name: "missing content", method: "POST", path: "/api/policies", body: `{"name":"n","policy_type":"brand"}`, status: 400, param: "content"},
		{name: "missing type", method: "POST", path: "/api/policies", body: `{"name":"n","content":"c"}`, status: 400, param: "policy_type"},
		{name: "bad type", method: "POST", path: "/api/policies", body: `{"name":"n","policy_type":"x","content":"c"}`, status: 400, param: "policy_type"},
		{name: "type and policy_type differ", method: "POST", path: "/api/policies", body: `{"name":"n","policy_type":"brand","type":"legal","content":"c"}`, status: 400, param: "type"},
		{name: "priority 101", method: "POST", path: "/api/policies", body: `{"name":"n","policy_type":"brand","content":"c","priority":101}`, status: 400, param: "priority"},
		{name: "priority -1", method: "POST", path: "/api/policies", body: `{"name":"n","policy_type":"brand","content":"c","priority":-1}`, status: 400, param: "priority"},
		{name: "priority not an integer", method: "POST", path: "/api/policies", body: `{"name":"n","policy_type":"brand","content":"c","priority":5.5}`, status: 400, param: "priority"},
		{name: "priority huge", method: "POST", path: "/api/policies", body: `{"name":"n","policy_type":"brand","content":"c","priority":1e300}`, status: 400, param: "priority"},
		{name: "bad severity", method: "POST", path: "/api/policies", body: `{"name":"n","policy_type":"brand","content":"c","severity":"severe"}`, status: 400, param: "severity"},
		{name: "malformed CIDR", method: "POST", path: "/api/policies", body: `{"name":"n","policy_type":"brand","content":"c","metadata":{"source_ips":["10.0.0.0/40"]}}`, status: 400, param: "metadata.source_ips[0]"},
		{name: "source_ips not strings", method: "POST", path: "/api/policies", body: `{"name":"n","policy_type":"brand","content":"c","metadata":{"source_ips":[10]}}`, status: 400, param: "metadata.source_ips[0]"},
		{name: "unknown field", method: "POST", path: "/api/policies", body: `{"name":"n","policy_type":"brand","content":"c","priorty":5}`, status: 400, param: "priorty"},
		{name: "NUL in content", method: "POST", path: "/api/policies", body: `{"name":"n","policy_type":"brand","content":"a\u0000b"}`, status: 400, param: "content"},
		{name: "not JSON", method: "POST", path: "/api/policies", body: `{"name":`, status: 400},
		{name: "content too long", method: "POST", path: "/api/policies", body: `{"name":"n","policy_type":"brand","content":"` + strings.Repeat("c", policy.MaxContent+1) + `"}`, status: 400, param: "content"},
		{name: "body too large", method: "POST", path: "/api/policies", body: `{"name":"` + strings.Repeat("n", maxBody) + `"}`, status: 413},

		{name: "get", method: "GET", path: "/api/policies/{p1}", status: 200,
			check: func(t *testing.T, a answer) {
				if a.str("name") != "No SSN" || a.body["checks"] == nil {
					t.Errorf("get: got %s, want the policy with its checks", a.raw)
				}
			}},
		{name: "get unknown", method: "GET", path: "/api/policies/pol_nope", status: 404},
		{name: "get NUL id", method: "GET", path: "/api/policies/pol_%00", status: 404},
		{name: "get invalid UTF-8 id", method: "GET", path: "/api/policies/pol_%ff", status: 404},
		{name: "deactivate", method: "PUT", path: "/api/policies/{p1}", body: `{"is_active":false}`, status: 200,
			check: func(t *testing.T, a answer) {
				if a.body["is_active"] != false || a.str("name") != "No SSN" || a.body["priority"] != 90.0 || a.str("regulatory_framework") != "HIPAA" {
					t.Errorf("after PUT is_active false: got %s, want only is_active changed", a.raw)
				}
			}},
		{name: "list active", method: "GET", path: "/api/policies", status: 200, list: []string{"{p3}", "{p2}"}},
		{name: "list all", method: "GET", path: "/api/policies?include_inactive=true", status: 200, list: []string{"{p1}", "{p3}", "{p2}"}},
		{name: "list bad flag", method: "GET", path: "/api/policies?include_inactive=maybe", status: 400, param: "include_inactive"},
		{name: "put bad priority", method: "PUT", path: "/api/policies/{p1}", body: `{"priority":500}`, status: 400, param: "priority"},
		{name: "put empty content", method: "PUT", path: "/api/policies/{p1}", body: `{"content":""}`, status: 400, param: "content"},
		{name: "put unknown", method: "PUT", path: "/api/policies/pol_nope", body: `{"priority":5}`, status: 404},
		{name: "put the answer back", method: "PUT", path: "/api/policies/{p2}", status: 200,
			body: `{"id":"{p2}","name":"Low2","policy_type":"security","content":"Flag secrets.","created_at":"x","checks":{},"updated_at":1}`,
			check: func(t *testing.T, a answer) {
				if a.str("name") != "Low2" {
					t.Errorf("round trip: got %s, want name Low2", a.raw)
				}
			}},
		{name: "delete", method: "DELETE", path: "/api/policies/{p3}", status: 200,
			check: func(t *testing.T, a answer) {
				if a.body["deleted"] != true {
					t.Errorf("delete: got %s, want deleted true", a.raw)
				}
			}},
		{name: "delete again", method: "DELETE", path: "/api/policies/{p3}", status: 404},
		{name: "get deleted", method: "GET", path: "/api/policies/{p3}", status: 404},
	})
}
