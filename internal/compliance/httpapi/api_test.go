package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/compliance/detect"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

const (
	adminKey = "admin-secret"
	userKey  = "sk-svc-user"
)

// reDetector is a test detector: every match of re is a finding of typ.
type reDetector struct {
	typ detect.Type
	re  *regexp.Regexp
}

func (d reDetector) Name() string { return string(d.typ) }

func (d reDetector) Detect(text string, dst []detect.Finding) []detect.Finding {
	for _, m := range d.re.FindAllStringIndex(text, -1) {
		dst = append(dst, detect.Finding{Type: d.typ, Start: m[0], End: m[1], Score: 0.9, Rule: "test"})
	}
	return dst
}

func testAuth() auth.Authenticator {
	return auth.Chain{auth.AdminKey(adminKey), auth.AuthenticatorFunc(func(_ context.Context, c auth.Credentials) (*identity.Principal, error) {
		if c.Bearer == userKey {
			return &identity.Principal{Kind: identity.VirtualKey, ID: "key1", TeamID: "acme"}, nil
		}
		return nil, auth.ErrNotMine
	})}
}

func newTestAPI(t *testing.T) (*httptest.Server, *compliance.Records) {
	t.Helper()
	db := storetest.OpenSQL(t, "sqlite://"+t.TempDir()+"/svc.db")
	recs := compliance.NewRecords(db, compliance.RecordsOptions{})
	eng := compliance.New(
		reDetector{detect.SSN, regexp.MustCompile(`\d{3}-\d{2}-\d{4}`)},
		reDetector{detect.Email, regexp.MustCompile(`[a-z]+@[a-z]+\.[a-z]+`)},
	)
	api := New(Deps{Auth: testAuth(), Engine: eng, Records: recs,
		Features: func(string, []detect.Finding) []byte { return []byte("f") }})
	srv := httptest.NewServer(api.Handler())
	t.Cleanup(srv.Close)
	return srv, recs
}

func call(t *testing.T, srv *httptest.Server, method, path, key string, body []byte) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(b) > 0 {
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s %s: body %q is not JSON: %v", method, path, b, err)
		}
	}
	return resp.StatusCode, out
}

func errField(body map[string]any, field string) string {
	e, _ := body["error"].(map[string]any)
	s, _ := e[field].(string)
	return s
}

func TestScanAnswer(t *testing.T) {
	srv, recs := newTestAPI(t)
	status, body := call(t, srv, "POST", "/v1/compliance/scan", userKey,
		[]byte(`{"content":"SSN 123-45-6789, mail bob@example.com","policy":"hipaa","user_id":"u1"}`))
	if status != 200 {
		t.Fatalf("status = %d, body %v", status, body)
	}
	if body["recommended_action"] != "Block" || body["risk_level"] != "critical" || body["has_violations"] != true {
		t.Errorf("action/level/violations = %v/%v/%v", body["recommended_action"], body["risk_level"], body["has_violations"])
	}
	if body["redacted_content"] != "SSN [SSN], mail [EMAIL]" {
		t.Errorf("redacted_content = %v", body["redacted_content"])
	}
	raw, _ := json.Marshal(body)
	if strings.Contains(string(raw), "123-45-6789") || strings.Contains(string(raw), "bob@example.com") {
		t.Errorf("the answer holds a clear value: %s", raw)
	}
	id, _ := body["scan_id"].(string)
	rec, err := recs.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("record of %q: %v", id, err)
	}
	if rec.OrgID != "team:acme" || rec.UserID != "u1" || rec.Caller != "virtual_key:key1" || string(rec.Features) != "f" {
		t.Errorf("record = %+v", rec)
	}
}

func TestAuthRules(t *testing.T) {
	srv, _ := newTestAPI(t)
	scan := []byte(`{"content":"hello"}`)
	tests := []struct {
		name, method, path, key string
		body                    []byte
		want                    int
	}{
		{"no key", "POST", "/v1/compliance/scan", "", scan, 401},
		{"wrong key", "POST", "/v1/compliance/scan", "nope", scan, 401},
		{"virtual key scans", "POST", "/v1/compliance/scan", userKey, scan, 200},
		{"admin scans", "POST", "/v1/compliance/scan", adminKey, scan, 200},
		{"virtual key redacts", "POST", "/v1/compliance/redact", userKey, scan, 200},
		{"baseline is admin only", "GET", "/v1/compliance/org/baseline/acme", userKey, nil, 403},
		{"admin reads a baseline", "GET", "/v1/compliance/org/baseline/acme", adminKey, nil, 200},
		{"unknown route", "GET", "/v1/compliance/nope", adminKey, nil, 404},
		{"unknown route needs a key too", "GET", "/v1/compliance/nope", "", nil, 401},
		{"health is public", "GET", "/health", "", nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, body := call(t, srv, tt.method, tt.path, tt.key, tt.body); got != tt.want {
				t.Errorf("status = %d, want %d (%v)", got, tt.want, body)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	srv, _ := newTestAPI(t)
	big := `{"content":"` + strings.Repeat("a", MaxContent+1) + `"}`
	tests := []struct {
		name, path string
		body       []byte
		want       int
		param      string
	}{
		{"missing content", "/v1/compliance/scan", []byte(`{"policy":"gdpr"}`), 400, "content"},
		{"content not a string", "/v1/compliance/scan", []byte(`{"content":42}`), 400, "content"},
		{"content null", "/v1/compliance/redact", []byte(`{"content":null}`), 400, "content"},
		{"not JSON", "/v1/compliance/scan", []byte(`content=hi`), 400, ""},
		{"invalid UTF-8", "/v1/compliance/scan", []byte("{\"content\":\"caf\xe9\"}"), 400, ""},
		{"content over 1 MiB", "/v1/compliance/scan", []byte(big), 413, ""},
		{"unknown policy", "/v1/compliance/scan", []byte(`{"content":"x","policy":"sox"}`), 400, "policy"},
		{"user_id too long", "/v1/compliance/scan", []byte(`{"content":"x","user_id":"` + strings.Repeat("u", 300) + `"}`), 400, "user_id"},
		{"org_id with a control character", "/v1/compliance/scan", []byte(`{"content":"x","org_id":"a\u0000b"}`), 400, "org_id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, body := call(t, srv, "POST", tt.path, adminKey, tt.body)
			if got != tt.want {
				t.Fatalf("status = %d, want %d (%v)", got, tt.want, body)
			}
			if tt.param != "" && errField(body, "param") != tt.param {
				t.Errorf("param = %q, want %q (%v)", errField(body, "param"), tt.param, body)
			}
			if errField(body, "message") == "" {
				t.Errorf("no error message: %v", body)
			}
		})
	}
	// The unknown policy's message lists the known ones.
	_, body := call(t, srv, "POST", "/v1/compliance/scan", adminKey, []byte(`{"content":"x","policy":"sox"}`))
	for _, name := range compliance.PolicyNames() {
		if !strings.Contains(errField(body, "message"), name) {
			t.Errorf("message %q does not list %s", errField(body, "message"), name)
		}
	}
	for _, q := range []string{"window_hours=0", "window_hours=abc", "days=31"} {
		if got, body := call(t, srv, "GET", "/v1/compliance/org/baseline/acme?"+q, adminKey, nil); got != 400 {
			t.Errorf("baseline ?%s: status %d, want 400 (%v)", q, got, body)
		}
	}
}
