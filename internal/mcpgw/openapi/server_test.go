package openapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// recorded is one request the backend received.
type recorded struct {
	Method, URI string
	Header      http.Header
	Body        string
}

// backend is the API the tools call: it records every request and answers
// with respond (200 {"ok":true} when nil).
type backend struct {
	*httptest.Server
	mu      sync.Mutex
	reqs    []recorded
	respond http.HandlerFunc
}

func newBackend(t *testing.T) *backend {
	b := &backend{}
	b.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		b.mu.Lock()
		b.reqs = append(b.reqs, recorded{r.Method, r.RequestURI, r.Header.Clone(), string(body)})
		respond := b.respond
		b.mu.Unlock()
		if respond == nil {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"ok":true}`)
			return
		}
		respond(w, r)
	}))
	t.Cleanup(b.Close)
	return b
}

// take returns and forgets the requests received so far.
func (b *backend) take() []recorded {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := b.reqs
	b.reqs = nil
	return out
}

func (b *backend) answer(status int, contentType, body string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.respond = func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// connect hosts NewServer's server over the SDK's in-memory transports and
// returns a client session to it.
func connect(t *testing.T, spec []byte, opts Options) *mcp.ClientSession {
	t.Helper()
	srv, err := NewServer(mustParse(t, spec), opts)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	ctx := context.Background()
	clientT, serverT := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, serverT, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, clientT, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	return cs
}

func bearer(token string) func(*http.Request) error {
	return func(r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+token)
		return nil
	}
}

func call(t *testing.T, cs *mcp.ClientSession, name, args string) *mcp.CallToolResult {
	t.Helper()
	if !json.Valid([]byte(args)) {
		t.Fatalf("bad test arguments %s", args)
	}
	// Raw, so that numbers reach the server as written.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: json.RawMessage(args)})
	if err != nil {
		t.Fatalf("CallTool %s: %v", name, err)
	}
	return res
}

func resultText(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("got %d contents, want 1", len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("got content %T, want text", res.Content[0])
	}
	return tc.Text
}

func TestServerListTools(t *testing.T) {
	be := newBackend(t)
	cs := connect(t, readFixture(t, "petstore.json"), Options{
		Name: "petstore", BaseURL: be.URL, Client: be.Client(), IncludeMethods: []string{"GET"},
	})
	if got := cs.InitializeResult().ServerInfo.Name; got != "petstore" {
		t.Errorf("server name: got %q, want petstore", got)
	}
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	// The SDK lists tools by name.
	want := []string{"findPetsByStatus", "findPetsByTags", "getInventory", "getOrderById", "getPetById", "getUserByName", "loginUser", "logoutUser"}
	if diff := cmp.Diff(want, toolNames(res.Tools)); diff != "" {
		t.Fatalf("tools (-want +got):\n%s", diff)
	}
	get := findTool(t, res.Tools, "getPetById")
	if got := at(t, get.InputSchema, "properties", "path", "properties", "petId", "format"); got != "int64" {
		t.Errorf("petId format over the wire: got %v", got)
	}
	if !get.Annotations.ReadOnlyHint {
		t.Errorf("getPetById is not read-only over the wire")
	}
}

func TestServerCallMapping(t *testing.T) {
	be := newBackend(t)
	pets := connect(t, readFixture(t, "petstore.json"), Options{BaseURL: be.URL + "/v3", Client: be.Client(), Authorize: bearer("s3cret")})
	widgets := connect(t, readFixture(t, "widgets-3.1.yaml"), Options{BaseURL: be.URL + "/api/", Client: be.Client()})
	for _, tc := range []struct {
		name     string
		cs       *mcp.ClientSession
		tool     string
		args     string
		method   string
		uri      string
		headers  map[string]string
		wantBody string
	}{
		{"path integer", pets, "getPetById", `{"path": {"petId": 42}}`, "GET", "/v3/pet/42",
			map[string]string{"Authorization": "Bearer s3cret", "Accept": "application/json, */*;q=0.8"}, ""},
		{"path escaped", pets, "getUserByName", `{"path": {"username": "a/b c?d"}}`, "GET", "/v3/user/a%2Fb%20c%3Fd", nil, ""},
		{"query exploded array", pets, "findPetsByTags", `{"query": {"tags": ["a", "b c", "&"]}}`, "GET",
			"/v3/pet/findByTags?tags=a&tags=b+c&tags=%26", nil, ""},
		{"path and query", pets, "updatePetWithForm", `{"path": {"petId": 7}, "query": {"status": "sold", "name": "x y"}}`, "POST",
			"/v3/pet/7?name=x+y&status=sold", nil, ""},
		{"null is absent", pets, "findPetsByStatus", `{"query": {"status": null}}`, "GET", "/v3/pet/findByStatus", nil, ""},
		{"json body", pets, "addPet", `{"body": {"name": "doggie", "photoUrls": ["u"], "id": 12345678901234567}}`, "POST", "/v3/pet",
			map[string]string{"Content-Type": "application/json"}, `{"name":"doggie","photoUrls":["u"],"id":12345678901234567}`},
		{"array body", pets, "createUsersWithListInput", `{"body": [{"username": "u1"}]}`, "POST", "/v3/user/createWithList",
			map[string]string{"Content-Type": "application/json"}, `[{"username":"u1"}]`},
		{"styles and header", widgets, "widgets.list_v2", `{"path": {"folderId": "f1"}, "header": {"X-Request-ID": "req-1"},
		  "query": {"limit": 5, "colour": ["red", "blue"], "filter": {"size": "m", "shape": "round"}, "sort": {"by": "name"}}}`,
			"GET", "/api/folders/f1/widgets?limit=5&colour=red,blue&filter[shape]=round&filter[size]=m&sort=%7B%22by%22%3A%22name%22%7D",
			map[string]string{"X-Request-ID": "req-1"}, ""},
		{"header name case", widgets, "widgets.list_v2", `{"path": {"folderId": "f1"}, "header": {"x-request-id": "req-2"}}`,
			"GET", "/api/folders/f1/widgets", map[string]string{"X-Request-ID": "req-2"}, ""},
		{"merge patch body", widgets, "patchWidget", `{"path": {"folderId": "f", "widgetId": 3}, "body": {"colour": null}}`,
			"PATCH", "/api/folders/f/widgets/3", map[string]string{"Content-Type": "application/merge-patch+json"}, `{"colour":null}`},
		{"no arguments", widgets, "getTree", `{}`, "GET", "/api/tree", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, tc.cs, tc.tool, tc.args)
			if res.IsError {
				t.Fatalf("tool error: %s", resultText(t, res))
			}
			reqs := be.take()
			if len(reqs) != 1 {
				t.Fatalf("backend got %d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.Method != tc.method || r.URI != tc.uri {
				t.Errorf("request: got %s %s, want %s %s", r.Method, r.URI, tc.method, tc.uri)
			}
			for k, v := range tc.headers {
				if got := r.Header.Get(k); got != v {
					t.Errorf("header %s: got %q, want %q", k, got, v)
				}
			}
			if r.Body != tc.wantBody {
				t.Errorf("body: got %q, want %q", r.Body, tc.wantBody)
			}
			if got := resultText(t, res); got != `{"ok":true}` {
				t.Errorf("text: got %q", got)
			}
			if diff := cmp.Diff(map[string]any{"ok": true}, res.StructuredContent); diff != "" {
				t.Errorf("structured content (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServerCallRefused covers arguments that must not reach the API: each
// is a tool error naming the problem, and nothing is sent.
func TestServerCallRefused(t *testing.T) {
	be := newBackend(t)
	pets := connect(t, readFixture(t, "petstore.json"), Options{BaseURL: be.URL, Client: be.Client()})
	widgets := connect(t, readFixture(t, "widgets-3.1.yaml"), Options{BaseURL: be.URL, Client: be.Client()})
	for _, tc := range []struct {
		name string
		cs   *mcp.ClientSession
		tool string
		args string
		want string
	}{
		{"required path parameter", pets, "getPetById", `{}`, "missing required argument(s): path.petId"},
		{"required in empty group", pets, "getPetById", `{"path": {}}`, "missing required argument(s): path.petId"},
		{"required body", pets, "updatePet", `{}`, `missing required argument "body"`},
		{"dot-dot segment", pets, "getUserByName", `{"path": {"username": ".."}}`, `"." or ".."`},
		{"empty path value", pets, "getUserByName", `{"path": {"username": ""}}`, "path.username is empty"},
		{"unknown top-level", pets, "getPetById", `{"path": {"petId": 1}, "extra": 1}`, `unknown argument "extra"`},
		{"unknown parameter", pets, "getPetById", `{"path": {"petId": 1, "x": 2}}`, "unknown argument path.x"},
		{"group not an object", pets, "getPetById", `{"path": "petId=1"}`, `"path" must be an object`},
		{"credential parameter", pets, "deletePet", `{"path": {"petId": 1}, "header": {"api_key": "k"}}`, "unknown argument header.api_key"},
		{"authorization header", widgets, "widgets.list_v2", `{"path": {"folderId": "f"}, "header": {"Authorization": "Bearer x"}}`,
			`header "Authorization" may not be set`},
		{"hop-by-hop header", widgets, "widgets.list_v2", `{"path": {"folderId": "f"}, "header": {"Transfer-Encoding": "chunked"}}`,
			`header "Transfer-Encoding" may not be set`},
		{"header given twice", widgets, "widgets.list_v2", `{"path": {"folderId": "f"}, "header": {"X-Request-ID": "a", "x-request-id": "b"}}`,
			"given twice"},
		{"header injection", widgets, "widgets.list_v2", `{"path": {"folderId": "f"}, "header": {"X-Request-ID": "a\r\nX-Evil: 1"}}`,
			"control characters"},
		{"body not accepted", pets, "uploadFile", `{"path": {"petId": 1}, "body": "aGk="}`, "takes no JSON body"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := call(t, tc.cs, tc.tool, tc.args)
			if !res.IsError {
				t.Fatalf("got a result, want a tool error: %s", resultText(t, res))
			}
			if got := resultText(t, res); !strings.Contains(got, tc.want) {
				t.Errorf("error: got %q, want it to contain %q", got, tc.want)
			}
			if reqs := be.take(); len(reqs) != 0 {
				t.Errorf("backend got %d requests, want none: %+v", len(reqs), reqs[0])
			}
		})
	}
}

func TestServerResults(t *testing.T) {
	be := newBackend(t)
	cs := connect(t, readFixture(t, "petstore.json"), Options{BaseURL: be.URL, Client: be.Client(), MaxResponseBytes: 64})
	big := `{"data": "` + strings.Repeat("é", 100) + `"}`
	for _, tc := range []struct {
		name        string
		status      int
		ctype, body string
		isError     bool
		want        string // exact text, or prefix when wantPrefix
		wantPrefix  bool
		structured  bool
	}{
		{"ok object", 200, "application/json", `{"id": 1}`, false, `{"id": 1}`, false, true},
		{"ok array", 200, "application/json", `[1, 2]`, false, `[1, 2]`, false, false},
		{"not found", 404, "application/json", `{"message": "Pet not found"}`, true, "HTTP 404 Not Found\n{\"message\": \"Pet not found\"}", false, true},
		{"server error", 503, "text/plain", "down", true, "HTTP 503 Service Unavailable\ndown", false, false},
		{"no content", 204, "", "", false, "HTTP 204 No Content (no body)", false, false},
		{"binary", 200, "image/png", "\x89PNG\r\n\x1a\n\xff\xfe", false, "[binary response body: 10 bytes of image/png, not shown]", false, false},
		{"truncated", 200, "application/json", big, false, `{"data": "` + strings.Repeat("é", 26), true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			be.answer(tc.status, tc.ctype, tc.body)
			res := call(t, cs, "getInventory", `{}`)
			be.take()
			got := resultText(t, res)
			if res.IsError != tc.isError {
				t.Errorf("isError: got %v, want %v (%q)", res.IsError, tc.isError, got)
			}
			if tc.wantPrefix {
				if !strings.HasPrefix(got, tc.want) || !strings.HasSuffix(got, "[truncated: the response is longer than 64 bytes]") {
					t.Errorf("text: got %q, want %q… with the truncation marker", got, tc.want)
				}
			} else if got != tc.want {
				t.Errorf("text: got %q, want %q", got, tc.want)
			}
			if (res.StructuredContent != nil) != tc.structured {
				t.Errorf("structured content: got %v, want present=%v", res.StructuredContent, tc.structured)
			}
		})
	}
}

func TestServerResultCutShort(t *testing.T) {
	be := newBackend(t)
	be.respond = func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "100")
		io.WriteString(w, `{"partial": `)
	}
	cs := connect(t, readFixture(t, "petstore.json"), Options{BaseURL: be.URL, Client: be.Client()})
	res := call(t, cs, "getInventory", `{}`)
	want := "{\"partial\": \n[truncated: reading the response failed]"
	if got := resultText(t, res); got != want || res.StructuredContent != nil {
		t.Errorf("got %q (structured %v), want %q", got, res.StructuredContent, want)
	}
}

// roundTripFunc lets a test stand in for the caller's client transport.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestServerNoCredentialInErrors: a transport error naming the URL, whose
// query holds the credential, and an Authorize error are not shown.
func TestServerNoCredentialInErrors(t *testing.T) {
	spec := readFixture(t, "petstore.json")
	keyInQuery := func(r *http.Request) error {
		q := r.URL.Query()
		q.Set("key", "SECRET-1")
		r.URL.RawQuery = q.Encode()
		return nil
	}
	failing := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		return nil, errors.New("blocked by policy: " + r.URL.String())
	})}
	cs := connect(t, spec, Options{BaseURL: "http://api.invalid", Client: failing, Authorize: keyInQuery})
	res := call(t, cs, "getPetById", `{"path": {"petId": 1}}`)
	if got := resultText(t, res); !res.IsError || strings.Contains(got, "SECRET-1") || !strings.Contains(got, "the request to the API failed") {
		t.Errorf("transport error: got isError=%v %q", res.IsError, got)
	}

	var sent bool
	never := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		sent = true
		return nil, errors.New("unreachable")
	})}
	cs = connect(t, spec, Options{BaseURL: "http://api.invalid", Client: never, Authorize: func(*http.Request) error {
		return errors.New("vault: token SECRET-2 expired")
	}})
	res = call(t, cs, "getPetById", `{"path": {"petId": 1}}`)
	if got := resultText(t, res); !res.IsError || strings.Contains(got, "SECRET-2") || sent {
		t.Errorf("authorize error: got isError=%v %q (sent=%v)", res.IsError, got, sent)
	}
}

func TestNewServerOptions(t *testing.T) {
	d := mustParse(t, readFixture(t, "petstore.json"))
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"no client", Options{BaseURL: "https://api.example.com"}},
		{"relative base", Options{BaseURL: "/v3", Client: http.DefaultClient}},
		{"ftp base", Options{BaseURL: "ftp://api.example.com", Client: http.DefaultClient}},
		{"credentials in base", Options{BaseURL: "https://u:p@api.example.com", Client: http.DefaultClient}},
		{"unknown method", Options{BaseURL: "https://api.example.com", Client: http.DefaultClient, IncludeMethods: []string{"BREW"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := NewServer(d, tc.opts); err == nil {
				t.Errorf("NewServer: got a server, want an error")
			}
		})
	}
}

// TestServerParameterStyles covers the serialisation styles the fixtures
// do not use.
func TestServerParameterStyles(t *testing.T) {
	spec := `openapi: 3.0.3
info: {title: t, version: '1'}
paths:
  /m/{a}/{b}/{c}/{d}:
    get:
      operationId: styles
      parameters:
        - {name: a, in: path, required: true, schema: {type: array, items: {type: integer}}}
        - {name: b, in: path, required: true, style: label, schema: {type: string}}
        - {name: c, in: path, required: true, style: matrix, explode: true, schema: {type: array, items: {type: integer}}}
        - {name: d, in: path, required: true, content: {text/plain: {schema: {type: string}}}}
        - {name: s, in: query, style: spaceDelimited, explode: false, schema: {type: array, items: {type: string}}}
        - {name: p, in: query, style: pipeDelimited, explode: false, schema: {type: array, items: {type: string}}}
        - {name: o, in: query, explode: false, schema: {type: object}}
        - {name: e, in: query, schema: {type: object}}
        - {name: X-Obj, in: header, schema: {type: object}}
        - {name: X-Num, in: header, schema: {type: number}}
      responses: {'200': {description: ok}}
`
	be := newBackend(t)
	cs := connect(t, []byte(spec), Options{BaseURL: be.URL + "/base?fixed=1", Client: be.Client()})
	res := call(t, cs, "styles", `{
	  "path": {"a": [1, 2], "b": "x", "c": [3, 4], "d": "x y"},
	  "query": {"s": ["a", "b"], "p": ["a", "b"], "o": {"k2": "v2", "k": "v"}, "e": {"f": 1, "g": [1, 2]}},
	  "header": {"X-Obj": {"a": 1, "b": true}, "X-Num": 1.50}}`)
	if res.IsError {
		t.Fatalf("tool error: %s", resultText(t, res))
	}
	reqs := be.take()
	if len(reqs) != 1 {
		t.Fatalf("backend got %d requests, want 1", len(reqs))
	}
	want := "/base/m/1,2/.x/;c=3;c=4/x%20y?fixed=1&s=a%20b&p=a|b&o=k,v,k2,v2&f=1&g=%5B1%2C2%5D"
	if got := reqs[0].URI; got != want {
		t.Errorf("URI:\n got %s\nwant %s", got, want)
	}
	for k, v := range map[string]string{"X-Obj": "a,1,b,true", "X-Num": "1.50"} {
		if got := reqs[0].Header.Get(k); got != v {
			t.Errorf("header %s: got %q, want %q", k, got, v)
		}
	}
}
