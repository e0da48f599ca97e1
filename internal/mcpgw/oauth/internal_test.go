package oauth

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/secret"
	"github.com/svc-gateway/svc/internal/store/memkv"
)

func TestResourceMetadataURLs(t *testing.T) {
	for _, c := range []struct {
		challenge, server string
		want              []metadataCandidate
	}{
		{"", "https://mcp.example/v1/mcp", []metadataCandidate{
			{"https://mcp.example/.well-known/oauth-protected-resource/v1/mcp", "https://mcp.example/v1/mcp"},
			{"https://mcp.example/.well-known/oauth-protected-resource", "https://mcp.example"},
		}},
		{"https://meta.example/prm", "https://mcp.example", []metadataCandidate{
			{"https://meta.example/prm", "https://mcp.example"},
			{"https://mcp.example/.well-known/oauth-protected-resource", "https://mcp.example"},
		}},
	} {
		if d := cmp.Diff(c.want, resourceMetadataURLs(c.challenge, c.server), cmp.AllowUnexported(metadataCandidate{})); d != "" {
			t.Errorf("resourceMetadataURLs(%q, %q) (-want +got):\n%s", c.challenge, c.server, d)
		}
	}
}

func TestAuthServerMetadataURLs(t *testing.T) {
	for issuer, want := range map[string][]string{
		"https://as.example": {
			"https://as.example/.well-known/oauth-authorization-server",
			"https://as.example/.well-known/openid-configuration",
		},
		"https://as.example/tenant/1/": {
			"https://as.example/.well-known/oauth-authorization-server/tenant/1",
			"https://as.example/.well-known/openid-configuration/tenant/1",
			"https://as.example/tenant/1/.well-known/openid-configuration",
		},
	} {
		if d := cmp.Diff(want, authServerMetadataURLs(issuer)); d != "" {
			t.Errorf("authServerMetadataURLs(%q) (-want +got):\n%s", issuer, d)
		}
	}
}

func TestCheckURL(t *testing.T) {
	for _, c := range []struct {
		url      string
		loopback bool
		ok       bool
	}{
		{"https://as.example/token", false, true},
		{"http://as.example/token", false, false},
		{"http://as.example/token", true, false},
		{"http://127.0.0.1:8080/token", false, false},
		{"http://127.0.0.1:8080/token", true, true},
		{"http://[::1]:8080/token", true, true},
		{"http://localhost/token", true, true},
		{"https://user:pw@as.example/token", false, false},
		{"https://as.example/token#x", false, false},
		{"/token", false, false},
		{"javascript:alert(1)", true, false},
	} {
		if err := checkURL("u", c.url, c.loopback); (err == nil) != c.ok {
			t.Errorf("checkURL(%q, loopback %v): got %v, want ok %v", c.url, c.loopback, err, c.ok)
		}
	}
}

func TestSanitize(t *testing.T) {
	if got := sanitize("access_denied\n\x1b[31mred", 64); got != "access_denied[31mred" {
		t.Errorf("got %q, want control characters dropped", got)
	}
	if got := sanitize(strings.Repeat("a", 100), 10); got != strings.Repeat("a", 10)+"…" {
		t.Errorf("got %q, want 10 runes and an ellipsis", got)
	}
}

// TestWithResource: the refresh's token request gains the resource; one
// that has it keeps it.
func TestWithResource(t *testing.T) {
	var got url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		got = r.PostForm
	}))
	defer srv.Close()
	c := &http.Client{Transport: withResource{base: http.DefaultTransport, resource: "https://mcp.example/mcp"}}
	for body, want := range map[string]string{
		"grant_type=refresh_token&refresh_token=r":                      "https://mcp.example/mcp",
		"grant_type=refresh_token&resource=https%3A%2F%2Fother.example": "https://other.example",
	} {
		res, err := c.Post(srv.URL, "application/x-www-form-urlencoded", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if got.Get("resource") != want || got.Get("grant_type") != "refresh_token" {
			t.Errorf("body %q: the server got %v, want resource %q", body, got, want)
		}
	}
}

// TestMetadataBounded: metadata over 1 MiB is refused, not read whole;
// the same metadata under the bound is taken.
func TestMetadataBounded(t *testing.T) {
	var pad atomic.Int64
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"issuer":"`+srv.URL+`","authorization_endpoint":"`+srv.URL+`/a",`+
			`"token_endpoint":"`+srv.URL+`/t","response_types_supported":["code"],`+
			`"code_challenge_methods_supported":["S256"],"service_documentation":"`+srv.URL+`/`+strings.Repeat("a", int(pad.Load()))+`"}`)
	}))
	defer srv.Close()
	f := newTestFlow(t)
	for _, c := range []struct {
		pad int
		ok  bool
	}{{1000, true}, {2 << 20, false}} {
		pad.Store(int64(c.pad))
		_, err := f.authServerMeta(t.Context(), srv.URL)
		if (err == nil) != c.ok {
			t.Errorf("metadata of %d bytes: got %v, want ok %v", c.pad, err, c.ok)
		}
		if err != nil && apierr.From(err).Code != "mcp_oauth_discovery_failed" {
			t.Errorf("got %v, want mcp_oauth_discovery_failed", err)
		}
	}
}

// TestNewChecks: the required settings, and a redirect URL that is https or
// loopback.
func TestNewChecks(t *testing.T) {
	if _, err := New(Config{}); err == nil {
		t.Errorf("New of nothing: got nil, want an error")
	}
	cfg := testConfig(t)
	cfg.RedirectURL = "http://svc.example/api/mcp/auth/callback"
	if _, err := New(cfg); err == nil {
		t.Errorf("New with an http redirect URL: got nil, want an error")
	}
	cfg.RedirectURL = "http://127.0.0.1:9/api/mcp/auth/callback"
	if _, err := New(cfg); err != nil {
		t.Errorf("New with a loopback redirect URL: %v", err)
	}
}

type serversFunc func(id string) (Server, error)

func (f serversFunc) OAuthServer(_ context.Context, id string) (Server, error) { return f(id) }

func testConfig(t *testing.T) Config {
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	return Config{
		Servers: serversFunc(func(string) (Server, error) { return Server{}, ErrUnknownServer }),
		Store:   (*SQLStore)(nil), States: NewKVStates(kv), Sealer: secret.NewSealer(secret.MasterKey{1}),
		Client: &http.Client{}, RedirectURL: "https://svc.example/api/mcp/auth/callback", AllowHTTPLoopback: true,
	}
}

func newTestFlow(t *testing.T) *Flow {
	f, err := New(testConfig(t))
	if err != nil {
		t.Fatal(err)
	}
	return f
}
