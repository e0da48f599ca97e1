package access_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/mcpgw/access"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
)

// servers is a registry with two servers; jira disallows delete_project.
type servers struct{}

func (servers) Server(_ context.Context, id string) (*mcpgw.Server, error) {
	switch id {
	case "github":
		return &mcpgw.Server{ID: id}, nil
	case "jira":
		return &mcpgw.Server{ID: id, DisallowedTools: []string{"delete_project"}}, nil
	}
	return nil, fmt.Errorf("server %q: %w", id, store.ErrNotFound)
}

// The callers of the tests, chosen by the X-Test-Caller header (none:
// unauthenticated).
var callers = map[string]*identity.Principal{
	"admin": {Kind: identity.Admin, ID: "admin"},
	"k1":    {Kind: identity.VirtualKey, ID: "k1"},
	"k2":    {Kind: identity.VirtualKey, ID: "k2"},
	"alice": {Kind: identity.User, ID: "alice"},
}

type api struct {
	t      *testing.T
	srv    *httptest.Server
	grants *access.Grants

	mu        sync.Mutex
	decisions []access.Request
}

func newAPI(t *testing.T) *api {
	st := sqliteStore(t)
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	a := &api{t: t, grants: access.Running(t, access.NewGrants(st, kv, time.Hour, nil))}
	svc := access.NewService(access.Config{Store: st, Grants: a.grants, Servers: servers{},
		OnDecision: func(_ context.Context, r access.Request) {
			a.mu.Lock()
			a.decisions = append(a.decisions, r)
			a.mu.Unlock()
		}})
	h := svc.Handler()
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p := callers[r.Header.Get("X-Test-Caller")]; p != nil {
			r = r.WithContext(identity.With(r.Context(), p))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// errorBody is the OpenAI-shaped error.
type errorBody struct {
	Error struct {
		Message string  `json:"message"`
		Type    string  `json:"type"`
		Code    *string `json:"code"`
		Param   *string `json:"param"`
	} `json:"error"`
}

// do sends body (a string, or nil for none) as caller and returns the
// status and the raw answer.
func (a *api) do(caller, method, path string, body any) (int, []byte) {
	a.t.Helper()
	s, _ := body.(string)
	req, err := http.NewRequestWithContext(a.t.Context(), method, a.srv.URL+path, strings.NewReader(s))
	if err != nil {
		a.t.Fatal(err)
	}
	req.Header.Set("X-Test-Caller", caller)
	resp, err := a.srv.Client().Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		a.t.Fatal(err)
	}
	return resp.StatusCode, b
}

// record sends a request that must succeed with status and decodes the
// record it answers.
func (a *api) record(status int, caller, method, path string, body any) access.Request {
	a.t.Helper()
	code, b := a.do(caller, method, path, body)
	if code != status {
		a.t.Fatalf("%s %s as %s: got %d %s, want %d", method, path, caller, code, b, status)
	}
	var r access.Request
	if err := json.Unmarshal(b, &r); err != nil {
		a.t.Fatalf("%s %s: %v in %s", method, path, err, b)
	}
	return r
}

// fails sends a request that must fail with status (and param, when not
// "") in the OpenAI error shape.
func (a *api) fails(status int, param, caller, method, path string, body any) {
	a.t.Helper()
	code, b := a.do(caller, method, path, body)
	var e errorBody
	if err := json.Unmarshal(b, &e); err != nil || e.Error.Message == "" || e.Error.Type == "" {
		a.t.Errorf("%s %s as %q: answer %s is not an OpenAI-shaped error (%v)", method, path, caller, b, err)
	}
	gotParam := ""
	if e.Error.Param != nil {
		gotParam = *e.Error.Param
	}
	if code != status || (param != "" && gotParam != param) {
		a.t.Errorf("%s %s as %q: got %d (param %q) %s, want %d (param %q)", method, path, caller, code, gotParam, b, status, param)
	}
}

func (a *api) list(caller, query string) []access.Request {
	a.t.Helper()
	code, b := a.do(caller, "GET", "/api/mcp/catalog/requests"+query, nil)
	if code != http.StatusOK {
		a.t.Fatalf("list %s as %s: %d %s", query, caller, code, b)
	}
	var l struct {
		Object string           `json:"object"`
		Data   []access.Request `json:"data"`
	}
	if err := json.Unmarshal(b, &l); err != nil || l.Object != "list" || l.Data == nil {
		a.t.Fatalf("list answer %s (%v)", b, err)
	}
	return l.Data
}

const requests = "/api/mcp/catalog/requests"

func TestHTTPCreate(t *testing.T) {
	a := newAPI(t)
	r := a.record(http.StatusCreated, "k1", "POST", requests,
		`{"server_id":"github","justification":"triage","tools_requested":["create_issue","list_issues"]}`)
	want := access.Request{ID: r.ID, ServerID: "github", UserID: "virtual_key:k1", Justification: "triage",
		ToolsRequested: []string{"create_issue", "list_issues"}, Status: access.StatusPending, CreatedAt: r.CreatedAt}
	if diff := cmp.Diff(want, r); diff != "" || r.ID == "" || r.CreatedAt.IsZero() {
		t.Errorf("created (-want +got):\n%s", diff)
	}
	// Its own requester named explicitly; an admin on behalf of a user.
	a.record(http.StatusCreated, "k1", "POST", requests, `{"server_id":"github","user_id":"virtual_key:k1","justification":"j","tools_requested":["a"]}`)
	if r := a.record(http.StatusCreated, "admin", "POST", requests, `{"server_id":"github","user_id":"bob","justification":"j","tools_requested":["a"]}`); r.UserID != "user:bob" {
		t.Errorf("admin's request for bob has user_id %q, want user:bob", r.UserID)
	}

	long := strings.Repeat("x", access.MaxJustification+1)
	many := `"t0"` + strings.Repeat(`,"t"`, access.MaxTools) // 101 names, with duplicates
	for _, c := range []struct {
		name, caller, body, param string
		status                    int
	}{
		{"not JSON", "k1", `{"server_id":`, "", 400},
		{"not an object", "k1", `["github"]`, "", 400},
		{"empty body", "k1", ``, "", 400},
		{"unknown field", "k1", `{"server_id":"github","justification":"j","tools_requested":["a"],"admin":true}`, "admin", 400},
		{"wrong type", "k1", `{"server_id":"github","justification":"j","tools_requested":"a"}`, "tools_requested", 400},
		{"no server", "k1", `{"justification":"j","tools_requested":["a"]}`, "server_id", 400},
		{"no justification", "k1", `{"server_id":"github","tools_requested":["a"]}`, "justification", 400},
		{"long justification", "k1", `{"server_id":"github","justification":"` + long + `","tools_requested":["a"]}`, "justification", 400},
		{"no tools", "k1", `{"server_id":"github","justification":"j","tools_requested":[]}`, "tools_requested", 400},
		{"too many tools", "k1", `{"server_id":"github","justification":"j","tools_requested":[` + many + `]}`, "tools_requested", 400},
		{"empty tool", "k1", `{"server_id":"github","justification":"j","tools_requested":["a",""]}`, "tools_requested[1]", 400},
		{"long tool", "k1", `{"server_id":"github","justification":"j","tools_requested":["` + strings.Repeat("t", 201) + `"]}`, "tools_requested[0]", 400},
		{"bad user_id", "k1", `{"server_id":"github","user_id":"team:x","justification":"j","tools_requested":["a"]}`, "user_id", 400},
		{"admin without user_id", "admin", `{"server_id":"github","justification":"j","tools_requested":["a"]}`, "user_id", 400},
		{"unknown server", "k1", `{"server_id":"nope","justification":"j","tools_requested":["a"]}`, "server_id", 404},
		{"disallowed tool", "k1", `{"server_id":"jira","justification":"j","tools_requested":["a","delete_project"]}`, "tools_requested[1]", 400},
		{"for another caller", "k1", `{"server_id":"github","user_id":"virtual_key:k2","justification":"j","tools_requested":["a"]}`, "", 403},
		{"unauthenticated", "", `{"server_id":"github","justification":"j","tools_requested":["a"]}`, "", 401},
		{"too large", "k1", `{"server_id":"github","justification":"` + strings.Repeat("x", 300<<10) + `","tools_requested":["a"]}`, "", 413},
	} {
		t.Run(c.name, func(t *testing.T) {
			a.t = t
			a.fails(c.status, c.param, c.caller, "POST", requests, c.body)
		})
	}
	a.t = t
	if n := len(a.list("admin", "?status=all")); n != 3 {
		t.Errorf("%d requests stored, want the 3 valid ones", n)
	}
}

func TestHTTPList(t *testing.T) {
	a := newAPI(t)
	k1a := a.record(201, "k1", "POST", requests, `{"server_id":"github","justification":"j","tools_requested":["a"]}`)
	k1b := a.record(201, "k1", "POST", requests, `{"server_id":"jira","justification":"j","tools_requested":["b"]}`)
	k2 := a.record(201, "k2", "POST", requests, `{"server_id":"github","justification":"j","tools_requested":["c"]}`)
	al := a.record(201, "alice", "POST", requests, `{"server_id":"github","justification":"j","tools_requested":["d"]}`)
	a.record(200, "admin", "POST", requests+"/"+k1a.ID+"/approve", nil)

	ids := func(rs []access.Request) []string {
		out := []string{}
		for _, r := range rs {
			out = append(out, r.ID)
		}
		return out
	}
	for _, c := range []struct {
		caller, query string
		want          []access.Request
	}{
		{"admin", "", []access.Request{al, k2, k1b}}, // pending by default, newest first
		{"admin", "?status=all", []access.Request{al, k2, k1b, k1a}},
		{"admin", "?status=approved", []access.Request{k1a}},
		{"admin", "?server_id=github&status=all", []access.Request{al, k2, k1a}},
		{"admin", "?user_id=virtual_key:k1&status=all", []access.Request{k1b, k1a}},
		{"admin", "?user_id=alice", []access.Request{al}},
		{"admin", "?limit=1", []access.Request{al}},
		{"k1", "", []access.Request{k1b}},
		{"k1", "?status=all", []access.Request{k1b, k1a}},
		{"k1", "?status=all&user_id=virtual_key:k1", []access.Request{k1b, k1a}},
		{"alice", "?status=all", []access.Request{al}},
	} {
		if diff := cmp.Diff(ids(c.want), ids(a.list(c.caller, c.query))); diff != "" {
			t.Errorf("list %q as %s (-want +got):\n%s", c.query, c.caller, diff)
		}
	}
	a.fails(403, "", "k1", "GET", requests+"?user_id=virtual_key:k2", nil)
	a.fails(400, "status", "admin", "GET", requests+"?status=granted", nil)
	for _, l := range []string{"0", "1001", "-1", "x"} {
		a.fails(400, "limit", "admin", "GET", requests+"?limit="+l, nil)
	}
	a.fails(400, "user_id", "admin", "GET", requests+"?user_id=team:x", nil)
	a.fails(401, "", "", "GET", requests, nil)

	// One request: its requester or the admin; anyone else, or an unknown
	// id, is 404.
	if got := a.record(200, "k1", "GET", requests+"/"+k1b.ID, nil); got.ID != k1b.ID {
		t.Errorf("get = %+v", got)
	}
	a.record(200, "admin", "GET", requests+"/"+k1b.ID, nil)
	a.fails(404, "", "k2", "GET", requests+"/"+k1b.ID, nil)
	a.fails(404, "", "admin", "GET", requests+"/mcpreq_nope", nil)
	a.fails(404, "", "admin", "GET", requests+"/%FF%FE", nil)
}

func TestHTTPDecisions(t *testing.T) {
	a := newAPI(t)
	create := func(tools string) access.Request {
		return a.record(201, "k1", "POST", requests, `{"server_id":"github","justification":"j","tools_requested":[`+tools+`]}`)
	}
	r := create(`"create_issue"`)
	path := requests + "/" + r.ID

	// Only the admin decides, whatever the id.
	for _, op := range []string{"approve", "deny", "revoke"} {
		for _, caller := range []string{"k1", "alice"} {
			a.fails(403, "", caller, "POST", path+"/"+op, `{}`)
			a.fails(403, "", caller, "POST", requests+"/mcpreq_nope/"+op, `{}`)
		}
		a.fails(401, "", "", "POST", path+"/"+op, nil)
		a.fails(404, "", "admin", "POST", requests+"/mcpreq_nope/"+op, nil)
	}
	if granted(t, a.grants, callers["k1"], "github", "create_issue") {
		t.Fatal("granted before approval")
	}

	a.fails(400, "note", "admin", "POST", path+"/approve", `{"note":"x"}`)
	a.fails(400, "", "admin", "POST", path+"/approve", `not json`)
	ap := a.record(200, "admin", "POST", path+"/approve", nil)
	if ap.Status != access.StatusApproved || ap.DecidedBy != "admin:admin" || ap.DecidedAt == nil {
		t.Errorf("approved = %+v", ap)
	}
	if !granted(t, a.grants, callers["k1"], "github", "create_issue") {
		t.Error("not granted after approval")
	}
	if granted(t, a.grants, callers["k2"], "github", "create_issue") {
		t.Error("granted to another caller")
	}
	a.fails(409, "", "admin", "POST", path+"/approve", `{}`)
	a.fails(409, "", "admin", "POST", path+"/deny", `{"reason":"late"}`)

	a.fails(400, "reason", "admin", "POST", path+"/revoke", `{"reason":"`+strings.Repeat("r", access.MaxReason+1)+`"}`)
	a.fails(400, "reason", "admin", "POST", path+"/revoke", `{"reason":7}`)
	rv := a.record(200, "admin", "POST", path+"/revoke", `{"reason":"project over"}`)
	if rv.Status != access.StatusRevoked || rv.Reason != "project over" || rv.RevokedBy != "admin:admin" {
		t.Errorf("revoked = %+v", rv)
	}
	if granted(t, a.grants, callers["k1"], "github", "create_issue") {
		t.Error("still granted after revocation")
	}
	a.fails(409, "", "admin", "POST", path+"/revoke", nil)

	d := create(`"delete_repo"`)
	a.fails(409, "", "admin", "POST", requests+"/"+d.ID+"/revoke", nil)
	a.fails(400, "extra", "admin", "POST", requests+"/"+d.ID+"/deny", `{"reason":"no","extra":1}`)
	dn := a.record(200, "admin", "POST", requests+"/"+d.ID+"/deny", `{"reason":"too broad"}`)
	if dn.Status != access.StatusDenied || dn.Reason != "too broad" {
		t.Errorf("denied = %+v", dn)
	}
	if granted(t, a.grants, callers["k1"], "github", "delete_repo") {
		t.Error("a denied tool is granted")
	}
	a.fails(409, "", "admin", "POST", requests+"/"+d.ID+"/approve", nil)

	a.mu.Lock()
	var seen []string
	for _, r := range a.decisions {
		seen = append(seen, r.ID+" "+string(r.Status))
	}
	a.mu.Unlock()
	want := []string{r.ID + " approved", r.ID + " revoked", d.ID + " denied"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("OnDecision (-want +got):\n%s", diff)
	}

	// Routes and methods that do not exist answer in the same shape.
	a.fails(404, "", "admin", "DELETE", path, nil)
	a.fails(404, "", "admin", "POST", path+"/cancel", nil)
	a.fails(404, "", "admin", "GET", path+"/approve", nil)
	a.fails(404, "", "admin", "PUT", requests, nil)
	a.fails(401, "", "", "GET", path+"/x/y", nil)
}
