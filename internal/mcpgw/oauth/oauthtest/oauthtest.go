// Package oauthtest is a local OAuth 2.1 authorization server and the MCP
// server it protects, for tests of svc's OAuth flow to upstream MCP
// servers (internal/mcpgw/oauth) and of the tool gateway end to end.
package oauthtest

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// AS is a local OAuth 2.1 authorization server and the MCP server it
// protects, each an httptest server: RFC 9728 protected-resource metadata,
// RFC 8414 (or OIDC) metadata, RFC 7591 registration, an authorize endpoint
// that redirects back with a code, and a token endpoint that checks the
// client, PKCE S256, the redirect URI and the RFC 8707 resource on the code
// and refresh grants.
type AS struct {
	t *testing.T
	// AuthServer is the authorization server; Resource serves the MCP
	// endpoint (ServerURL) and its protected-resource metadata.
	AuthServer *httptest.Server
	Resource   *httptest.Server
	// Protected, when set, serves requests to the MCP endpoint that carry a
	// valid access token (default: a 200 with {"ok": true}).
	Protected http.Handler

	// Settings, fixed before the first request.
	DCR          bool          // advertise a registration endpoint
	OIDCOnly     bool          // metadata only at /.well-known/openid-configuration
	Issuer       string        // the metadata's issuer; default the server's URL
	ISSParameter bool          // RFC 9207: add iss to the redirect
	BadIss       bool          // add a wrong iss
	Challenge    bool          // the MCP server's 401 names its metadata
	Lifetime     time.Duration // expires_in
	Rotate       bool          // refresh tokens are single use
	NoRefresh    bool          // issue no refresh token
	Gate         bool          // hold the first refresh answer until a second refresh was answered
	Static       [2]string     // a pre-registered client id and secret

	mu          sync.Mutex
	clients     map[string]string // id → secret
	codes       map[string]codeGrant
	refresh     map[string]bool // refresh token → valid
	access      map[string]bool
	n           int
	refreshes   int // refresh requests received
	resources   []string
	authStyle   []string // how each token request authenticated: basic, post, none
	released    chan struct{}
	releaseOnce sync.Once
}

type codeGrant struct {
	client, challenge, redirect, resource, scope string
}

// New starts the servers (closed when t ends) after configure set the
// AS's settings.
func New(t *testing.T, configure func(*AS)) *AS {
	f := &AS{t: t, DCR: true, Challenge: true, Lifetime: time.Hour,
		clients: map[string]string{}, codes: map[string]codeGrant{}, refresh: map[string]bool{},
		access: map[string]bool{}, released: make(chan struct{})}
	if configure != nil {
		configure(f)
	}
	if f.Static[0] != "" {
		f.clients[f.Static[0]] = f.Static[1]
	}
	asMux := http.NewServeMux()
	meta := "/.well-known/oauth-authorization-server"
	if f.OIDCOnly {
		meta = "/.well-known/openid-configuration"
	}
	asMux.HandleFunc("GET "+meta, f.metadata)
	asMux.HandleFunc("POST /register", f.register)
	asMux.HandleFunc("GET /authorize", f.authorize)
	asMux.HandleFunc("POST /token", f.token)
	f.AuthServer = httptest.NewServer(asMux)
	t.Cleanup(f.AuthServer.Close)

	mcpMux := http.NewServeMux()
	mcpMux.HandleFunc("GET /.well-known/oauth-protected-resource/mcp", f.resourceMetadata)
	mcpMux.HandleFunc("/mcp", f.tool)
	f.Resource = httptest.NewServer(mcpMux)
	t.Cleanup(f.Resource.Close)
	return f
}

func (f *AS) ServerURL() string { return f.Resource.URL + "/mcp" }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func oauthErr(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]string{"error": code, "error_description": "fake: " + code})
}

func (f *AS) resourceMetadata(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"resource":              f.ServerURL(),
		"authorization_servers": []string{f.AuthServer.URL},
		"scopes_supported":      []string{"tools:read", "tools:call"},
	})
}

func (f *AS) metadata(w http.ResponseWriter, r *http.Request) {
	iss := f.Issuer
	if iss == "" {
		iss = f.AuthServer.URL
	}
	m := map[string]any{
		"issuer":                                         iss,
		"authorization_endpoint":                         f.AuthServer.URL + "/authorize",
		"token_endpoint":                                 f.AuthServer.URL + "/token",
		"response_types_supported":                       []string{"code"},
		"grant_types_supported":                          []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported":               []string{"S256"},
		"token_endpoint_auth_methods_supported":          []string{"client_secret_basic", "client_secret_post"},
		"authorization_response_iss_parameter_supported": f.ISSParameter,
	}
	if f.DCR {
		m["registration_endpoint"] = f.AuthServer.URL + "/register"
	}
	writeJSON(w, http.StatusOK, m)
}

// tool is the MCP endpoint: 200 with a valid access token, else a 401
// challenge.
func (f *AS) tool(w http.ResponseWriter, r *http.Request) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	f.mu.Lock()
	valid := ok && f.access[tok]
	f.mu.Unlock()
	if valid && f.Protected != nil {
		f.Protected.ServeHTTP(w, r)
		return
	}
	if valid {
		writeJSON(w, http.StatusOK, map[string]any{"ok": true})
		return
	}
	if f.Challenge {
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer resource_metadata="%s/.well-known/oauth-protected-resource/mcp", scope="tools:call"`, f.Resource.URL))
	}
	w.WriteHeader(http.StatusUnauthorized)
}

func (f *AS) register(w http.ResponseWriter, r *http.Request) {
	var m struct {
		RedirectURIs []string `json:"redirect_uris"`
		AuthMethod   string   `json:"token_endpoint_auth_method"`
		GrantTypes   []string `json:"grant_types"`
		ClientName   string   `json:"client_name"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil || len(m.RedirectURIs) != 1 {
		oauthErr(w, http.StatusBadRequest, "invalid_client_metadata")
		return
	}
	if !slices.Contains(m.GrantTypes, "refresh_token") || m.ClientName == "" {
		oauthErr(w, http.StatusBadRequest, "invalid_client_metadata")
		return
	}
	f.mu.Lock()
	f.n++
	id, secret := fmt.Sprintf("dyn-%d", f.n), fmt.Sprintf("dyn-secret-%d", f.n)
	f.clients[id] = secret
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id": id, "client_secret": secret, "redirect_uris": m.RedirectURIs,
		"token_endpoint_auth_method": m.AuthMethod, "client_secret_expires_at": 0,
	})
}

// authorize checks the request and redirects back with a code, as if the
// user had consented.
func (f *AS) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f.mu.Lock()
	_, known := f.clients[q.Get("client_id")]
	f.mu.Unlock()
	switch {
	case q.Get("response_type") != "code", !known, q.Get("code_challenge_method") != "S256",
		len(q.Get("code_challenge")) != 43, q.Get("state") == "", q.Get("redirect_uri") == "",
		q.Get("resource") != f.ServerURL(), q.Has("code_verifier"):
		http.Error(w, "fake: bad authorization request: "+r.URL.RawQuery, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	f.n++
	code := fmt.Sprintf("code-%d", f.n)
	f.codes[code] = codeGrant{client: q.Get("client_id"), challenge: q.Get("code_challenge"),
		redirect: q.Get("redirect_uri"), resource: q.Get("resource"), scope: q.Get("scope")}
	f.mu.Unlock()
	back, _ := url.Parse(q.Get("redirect_uri"))
	v := url.Values{"code": {code}, "state": {q.Get("state")}}
	switch {
	case f.BadIss:
		v.Set("iss", "https://evil.example")
	case f.ISSParameter:
		v.Set("iss", f.AuthServer.URL)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

// clientAuth authenticates the token request's client.
func (f *AS) clientAuth(r *http.Request) (string, bool) {
	id, secret, basic := r.BasicAuth()
	style := "basic"
	if basic {
		id, _ = url.QueryUnescape(id)
		secret, _ = url.QueryUnescape(secret)
	} else {
		id, secret, style = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret"), "post"
		if secret == "" {
			style = "none"
		}
	}
	f.authStyle = append(f.authStyle, style)
	want, ok := f.clients[id]
	return id, ok && subtle.ConstantTimeCompare([]byte(want), []byte(secret)) == 1
}

func (f *AS) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		oauthErr(w, http.StatusBadRequest, "invalid_request")
		return
	}
	f.mu.Lock()
	client, ok := f.clientAuth(r)
	f.resources = append(f.resources, r.PostForm.Get("resource"))
	f.mu.Unlock()
	if !ok {
		oauthErr(w, http.StatusUnauthorized, "invalid_client")
		return
	}
	if r.PostForm.Get("resource") != f.ServerURL() {
		oauthErr(w, http.StatusBadRequest, "invalid_target")
		return
	}
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		f.codeGrant(w, r, client)
	case "refresh_token":
		f.refreshGrant(w, r)
	default:
		oauthErr(w, http.StatusBadRequest, "unsupported_grant_type")
	}
}

func (f *AS) codeGrant(w http.ResponseWriter, r *http.Request, client string) {
	f.mu.Lock()
	g, ok := f.codes[r.PostForm.Get("code")]
	delete(f.codes, r.PostForm.Get("code"))
	f.mu.Unlock()
	sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
	switch {
	case !ok, g.client != client, g.redirect != r.PostForm.Get("redirect_uri"),
		base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge:
		oauthErr(w, http.StatusBadRequest, "invalid_grant")
		return
	}
	f.issue(w, g.scope, true)
}

func (f *AS) refreshGrant(w http.ResponseWriter, r *http.Request) {
	rt := r.PostForm.Get("refresh_token")
	f.mu.Lock()
	f.refreshes++
	first := f.refreshes == 1
	valid := f.refresh[rt]
	if valid && f.Rotate {
		f.refresh[rt] = false
	}
	f.mu.Unlock()
	rec := httptest.NewRecorder()
	if valid {
		f.issue(rec, "", f.Rotate)
	} else {
		oauthErr(rec, http.StatusBadRequest, "invalid_grant")
	}
	if f.Gate && first {
		select { // hold the first answer until a second refresh was answered
		case <-f.released:
		case <-time.After(5 * time.Second):
			f.t.Errorf("fake AS: no second refresh arrived")
		}
	}
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
	if f.Gate && !first {
		f.releaseOnce.Do(func() { close(f.released) })
	}
}

// issue answers a new access token (and a refresh token when withRefresh).
func (f *AS) issue(w http.ResponseWriter, scope string, withRefresh bool) {
	f.mu.Lock()
	f.n++
	at, rt := fmt.Sprintf("at-%d", f.n), fmt.Sprintf("rt-%d", f.n)
	f.access[at] = true
	if withRefresh && !f.NoRefresh {
		f.refresh[rt] = true
	} else {
		rt = ""
	}
	f.mu.Unlock()
	body := map[string]any{"access_token": at, "token_type": "Bearer", "expires_in": int(f.Lifetime / time.Second)}
	if rt != "" {
		body["refresh_token"] = rt
	}
	if scope != "" {
		body["scope"] = scope
	}
	writeJSON(w, http.StatusOK, body)
}

// Stats returns the refresh count and the resource of every token request.
func (f *AS) Stats() (refreshes int, resources []string, styles []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refreshes, slices.Clone(f.resources), slices.Clone(f.authStyle)
}

// CallMCP calls the MCP endpoint with token and returns the status.
func (f *AS) CallMCP(t *testing.T, token string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, f.ServerURL(), nil)
	req.Header.Set("Authorization", "Bearer "+token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	return res.StatusCode
}

// ForgetRefreshTokens invalidates every refresh token issued so far.
func (f *AS) ForgetRefreshTokens() {
	f.mu.Lock()
	clear(f.refresh)
	f.mu.Unlock()
}
