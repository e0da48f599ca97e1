package usage_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/mcpgw/usage"
)

// now is the clock of the tests.
var now = time.Date(2026, 3, 10, 15, 30, 0, 0, time.UTC)

// fakeSource records the queries it is asked and answers canned values.
type fakeSource struct {
	q      audit.Query
	before string
	bucket time.Duration
	calls  int
	groups []audit.Group
	page   audit.Page
	err    error
}

func (f *fakeSource) Page(_ context.Context, q audit.Query, before string) (audit.Page, error) {
	f.q, f.before, f.calls = q, before, f.calls+1
	return f.page, f.err
}

func (f *fakeSource) Groups(_ context.Context, q audit.Query, bucket time.Duration) ([]audit.Group, error) {
	f.q, f.bucket, f.calls = q, bucket, f.calls+1
	return f.groups, f.err
}

var (
	admin  = &identity.Principal{Kind: identity.Admin, ID: "admin"}
	keyK1  = &identity.Principal{Kind: identity.VirtualKey, ID: "k1", MaskedKey: "sk-svc-k1…"}
	userU1 = &identity.Principal{Kind: identity.User, ID: "u1"}
)

// get serves target through h as p (nil: no principal) and returns the
// status and body.
func get(t *testing.T, h http.Handler, p *identity.Principal, target string) (int, []byte) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	if p != nil {
		r = r.WithContext(identity.With(r.Context(), p))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Code, w.Body.Bytes()
}

// apiError is the OpenAI-shaped error body.
type apiError struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Param   *string `json:"param"`
		Code    *string `json:"code"`
	} `json:"error"`
}

// wantError checks an error answer: its status, type and param.
func wantError(t *testing.T, status int, body []byte, wantStatus int, wantType, wantParam string) {
	t.Helper()
	var e apiError
	if err := json.Unmarshal(body, &e); err != nil || e.Error.Message == "" {
		t.Fatalf("body %s is not an OpenAI-shaped error (%v)", body, err)
	}
	param := ""
	if e.Error.Param != nil {
		param = *e.Error.Param
	}
	if status != wantStatus || e.Error.Type != wantType || param != wantParam {
		t.Errorf("got %d %s param %q (%s), want %d %s param %q", status, e.Error.Type, param, e.Error.Message,
			wantStatus, wantType, wantParam)
	}
}

func newAPI(src usage.Source) *usage.API {
	return usage.New(src, usage.Options{Now: func() time.Time { return now }})
}

// TestQueryFromParameters checks the audit query the parameters make, for
// both routes: tool calls only, server and tool as provider and model,
// outcome, the window, and that the model API's own filters are not taken.
func TestQueryFromParameters(t *testing.T) {
	for _, route := range []string{"/api/mcp/logs", "/api/mcp/usage"} {
		src := &fakeSource{}
		a := newAPI(src)
		h := map[string]http.Handler{"/api/mcp/logs": a.LogsHandler(), "/api/mcp/usage": a.UsageHandler()}[route]
		status, body := get(t, h, admin, route+"?server_id=github&tool=create_issue&outcome=error&key_id=k9&user_id=virtual_key:k9"+
			"&provider=openai&model=gpt-4o&conversation_id=c&status=502&from=2026-03-01T00:00:00Z&to=2026-03-02T00:00:00Z")
		if status != http.StatusOK || src.calls != 1 {
			t.Fatalf("%s: %d %s (%d calls)", route, status, body, src.calls)
		}
		got := src.q
		got.Limit, got.Offset = 0, 0
		want := audit.Query{ProviderPrefix: "mcp:", Provider: "mcp:github", Model: "create_issue", Outcome: "error",
			Status: 502, KeyID: "k9", UserID: "virtual_key:k9",
			Since: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), Until: time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: query (-want +got):\n%s", route, diff)
		}
	}
}

// TestScope checks who sees what: the admin everything (and any key it
// names), a virtual key its own key's calls only, a user its own calls
// only; another's is 403, no principal 401, and the source is not asked.
func TestScope(t *testing.T) {
	for _, tt := range []struct {
		name      string
		p         *identity.Principal
		params    string
		wantKey   string
		wantUser  string
		wantError int
		wantParam string
	}{
		{"admin, all", admin, "", "", "", 0, ""},
		{"admin, one key", admin, "key_id=k2", "k2", "", 0, ""},
		{"key, own", keyK1, "", "k1", "", 0, ""},
		{"key, own named", keyK1, "key_id=k1", "k1", "", 0, ""},
		{"key, another", keyK1, "key_id=k2", "", "", http.StatusForbidden, "key_id"},
		{"user, own", userU1, "", "", "u1", 0, ""},
		{"user, own named", userU1, "user_id=u1", "", "u1", 0, ""},
		{"user, another", userU1, "user_id=user:u2", "", "", http.StatusForbidden, "user_id"},
		{"user, a key", userU1, "key_id=k1", "", "", http.StatusForbidden, "key_id"},
		{"nobody", nil, "", "", "", http.StatusUnauthorized, ""},
		{"anonymous", &identity.Principal{Kind: identity.Anonymous}, "", "", "", http.StatusUnauthorized, ""},
	} {
		for _, route := range []string{"logs", "usage"} {
			src := &fakeSource{}
			a := newAPI(src)
			h := a.LogsHandler()
			if route == "usage" {
				h = a.UsageHandler()
			}
			status, body := get(t, h, tt.p, "/api/mcp/"+route+"?"+tt.params)
			if tt.wantError != 0 {
				typ := map[int]string{http.StatusForbidden: "permission_error", http.StatusUnauthorized: "authentication_error"}[tt.wantError]
				wantError(t, status, body, tt.wantError, typ, tt.wantParam)
				if src.calls != 0 {
					t.Errorf("%s %s: the source was read", tt.name, route)
				}
				continue
			}
			if status != http.StatusOK || src.q.KeyID != tt.wantKey || src.q.UserID != tt.wantUser {
				t.Errorf("%s %s: %d, key %q user %q; want 200, key %q user %q (%s)", tt.name, route, status,
					src.q.KeyID, src.q.UserID, tt.wantKey, tt.wantUser, body)
			}
		}
	}
}

// TestBadParameters checks that every malformed or out-of-range value is
// a 400 naming its parameter, before the source is read.
func TestBadParameters(t *testing.T) {
	long := strings.Repeat("a", 65)
	for _, tt := range []struct{ route, params, param string }{
		{"logs", "server_id=", "server_id"},
		{"logs", "server_id=" + long, "server_id"},
		{"logs", "server_id=a%00b", "server_id"},
		{"logs", "tool=" + strings.Repeat("t", 201), "tool"},
		{"logs", "tool=%ff", "tool"},
		{"logs", "tool=a%0Ab", "tool"},
		{"logs", "key_id=" + strings.Repeat("k", 257), "key_id"},
		{"logs", "outcome=ok", "outcome"},
		{"logs", "outcome=", "outcome"},
		{"logs", "outcome=success&status=error", "outcome"},
		{"logs", "limit=1001", "limit"},
		{"logs", "limit=0", "limit"},
		{"logs", "offset=-1", "offset"},
		{"logs", "days=366", "days"},
		{"logs", "from=yesterday", "from"},
		{"logs", "from=2026-03-02T00:00:00Z&to=2026-03-01T00:00:00Z", "to"},
		{"logs", "before=", "before"},
		{"logs", "status=700", "status"},
		{"usage", "period=week", "period"},
		{"usage", "period=", "period"},
		{"usage", "period=hour&days=32", "period"},
		{"usage", "period=hour&from=2026-01-01T00:00:00Z", "period"},
		{"usage", "server_id=" + long, "server_id"},
		{"usage", "days=0", "days"},
	} {
		src := &fakeSource{}
		a := newAPI(src)
		h := a.LogsHandler()
		if tt.route == "usage" {
			h = a.UsageHandler()
		}
		status, body := get(t, h, admin, "/api/mcp/"+tt.route+"?"+tt.params)
		wantError(t, status, body, http.StatusBadRequest, "invalid_request_error", tt.param)
		if src.calls != 0 {
			t.Errorf("%s?%s: the source was read", tt.route, tt.params)
		}
	}
}

// TestSourceErrors checks that a source's error keeps its status, and
// that an unexpected one is a 500 whose cause is not shown.
func TestSourceErrors(t *testing.T) {
	for _, tt := range []struct {
		err    error
		status int
	}{
		{apierr.Wrap(apierr.Unavailable, "hot_tier_unavailable", "could not read the hot log tier", errors.New("dial tcp")), 503},
		{apierr.BadParam("before", "before names no entry"), 400},
		{errors.New("pq: secret connection detail"), 500},
	} {
		a := newAPI(&fakeSource{err: tt.err})
		for _, h := range []http.Handler{a.LogsHandler(), a.UsageHandler()} {
			status, body := get(t, h, admin, "/api/mcp/logs")
			if status != tt.status || strings.Contains(string(body), "secret") {
				t.Errorf("%v: got %d %s, want %d without the cause", tt.err, status, body, tt.status)
			}
		}
	}
}
