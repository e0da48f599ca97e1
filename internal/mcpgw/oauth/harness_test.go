package oauth_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/mcpgw/oauth"
	"github.com/svc-gateway/svc/internal/mcpgw/oauth/oauthtest"
	"github.com/svc-gateway/svc/internal/secret"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// servers is a registry of MCP servers.
type servers map[string]oauth.Server

func (s servers) OAuthServer(_ context.Context, id string) (oauth.Server, error) {
	srv, ok := s[id]
	if !ok {
		return oauth.Server{}, fmt.Errorf("registry: %q: %w", id, oauth.ErrUnknownServer)
	}
	return srv, nil
}

// harness is svc's side: a Flow over a SQL store and an in-process KV, its
// handlers mounted on an httptest server, and the fake authorization server.
type harness struct {
	as      *oauthtest.AS
	flow    *oauth.Flow
	store   *oauth.SQLStore
	db      *sqlstore.DB
	kv      *memkv.KV
	clock   *clock
	servers servers
	svc     *httptest.Server
	logs    *syncBuffer
	reads   atomic.Int64 // records read from the store by the harness's flows
}

// countingStore counts the records read.
type countingStore struct {
	oauth.Store
	reads *atomic.Int64
}

func (c countingStore) Record(ctx context.Context, serverID string) (oauth.Record, error) {
	c.reads.Add(1)
	return c.Store.Record(ctx, serverID)
}

// syncBuffer is a log sink the test reads at the end.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var testKey = secret.MasterKey{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32}

// sqlite opens a new SQLite database for t.
func sqlite(t *testing.T) *sqlstore.DB {
	return storetest.OpenSQL(t, storetest.SQLBackends[0].URL(t))
}

// newHarness builds a harness on db (SQLite when nil) with the fake
// configured by configure; the server "docs" points at the fake MCP server.
func newHarness(t *testing.T, db *sqlstore.DB, configure func(*oauthtest.AS)) *harness {
	t.Helper()
	if db == nil {
		db = sqlite(t)
	}
	h := &harness{as: oauthtest.New(t, configure), db: db, store: oauth.NewSQLStore(db), kv: memkv.New(),
		clock: &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}, logs: &syncBuffer{}}
	t.Cleanup(func() { noSecrets(t, "the log", h.logs.String()) })
	t.Cleanup(func() { h.kv.Close() })
	h.servers = servers{"docs": {ID: "docs", URL: h.as.ServerURL()}}
	mux := http.NewServeMux()
	h.svc = httptest.NewServer(mux)
	t.Cleanup(h.svc.Close)
	h.flow = h.newFlow(t, nil)
	mux.HandleFunc("GET /api/mcp/auth/initiate", h.flow.HandleInitiate)
	mux.HandleFunc("GET /api/mcp/auth/callback", h.flow.HandleCallback)
	mux.HandleFunc("GET /api/mcp/auth/tokens", h.flow.HandleTokens)
	mux.HandleFunc("DELETE /api/mcp/auth/tokens/{server_id}", h.flow.HandleRevoke)
	return h
}

// newFlow is another Flow on the harness's stores (another replica).
func (h *harness) newFlow(t *testing.T, edit func(*oauth.Config)) *oauth.Flow {
	t.Helper()
	cfg := oauth.Config{
		Servers: h.servers, Store: countingStore{h.store, &h.reads}, States: oauth.NewKVStates(h.kv),
		Sealer: secret.NewSealer(testKey), Client: &http.Client{Timeout: 10 * time.Second},
		RedirectURL: h.svc.URL + "/api/mcp/auth/callback", AllowHTTPLoopback: true, Now: h.clock.now,
		Logger: slog.New(slog.NewTextHandler(h.logs, nil)),
	}
	if edit != nil {
		edit(&cfg)
	}
	f, err := oauth.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return f
}

// answer is an HTTP answer read whole.
type answer struct {
	status int
	header http.Header
	body   string
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(a.body), &m); err != nil {
		t.Fatalf("answer %d is not JSON: %v: %s", a.status, err, a.body)
	}
	return m
}

// errorCode is the code of an apierr JSON answer.
func (a answer) errorCode(t *testing.T) string {
	t.Helper()
	e, _ := a.json(t)["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func (a answer) errorMessage(t *testing.T) string {
	t.Helper()
	e, _ := a.json(t)["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}

var noRedirects = &http.Client{
	Timeout:       10 * time.Second,
	CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
}

// get fetches u without following redirects.
func get(t *testing.T, u string, header ...string) answer {
	t.Helper()
	return do(t, http.MethodGet, u, header...)
}

func do(t *testing.T, method, u string, header ...string) answer {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := noRedirects.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, u, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return answer{res.StatusCode, res.Header, string(b)}
}

// initiate calls the initiate route for server id and returns the
// authorization URL.
func (h *harness) initiate(t *testing.T, id string) string {
	t.Helper()
	a := get(t, h.svc.URL+"/api/mcp/auth/initiate?server_id="+id)
	if a.status != http.StatusOK {
		t.Fatalf("initiate: got %d %s, want 200", a.status, a.body)
	}
	u, _ := a.json(t)["redirect_url"].(string)
	if u == "" {
		t.Fatalf("initiate: no redirect_url in %s", a.body)
	}
	return u
}

// consent follows the authorization URL at the fake and returns the
// callback URL it redirects to.
func (h *harness) consent(t *testing.T, authURL string) string {
	t.Helper()
	a := get(t, authURL)
	if a.status != http.StatusFound {
		t.Fatalf("authorize: got %d %s, want 302", a.status, a.body)
	}
	loc := a.header.Get("Location")
	if !strings.HasPrefix(loc, h.svc.URL+"/api/mcp/auth/callback?") {
		t.Fatalf("authorize redirected to %q, want svc's callback", loc)
	}
	return loc
}

// authorize runs the whole flow for server id and checks the callback's
// success page.
func (h *harness) authorize(t *testing.T, id string) {
	t.Helper()
	a := get(t, h.consent(t, h.initiate(t, id)), "Accept", "text/html")
	if a.status != http.StatusOK || !strings.Contains(a.body, "Authorized") {
		t.Fatalf("callback: got %d %s, want 200 and the success page", a.status, a.body)
	}
}
