package oauth_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/mcpgw/oauth"
	"github.com/svc-gateway/svc/internal/mcpgw/oauth/oauthtest"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// noSecrets fails t when s holds a value that must never appear in an answer,
// an error, a log or the database in clear: any token or client secret the
// fake issued, or the PKCE verifier.
func noSecrets(t *testing.T, where, s string) {
	t.Helper()
	for _, p := range []string{"at-", "rt-", "dyn-secret-", "static-secret", "code_verifier", "verifier"} {
		if strings.Contains(s, p) {
			t.Errorf("%s holds %q: %s", where, p, s)
		}
	}
}

// TestFlowDCR is the whole flow with dynamic client registration, on
// SQLite and PostgreSQL: initiate → the authorization server's redirect →
// callback → Token → refresh near expiry (with the resource) → list.
func TestFlowDCR(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		h := newHarness(t, db, func(f *oauthtest.AS) { f.Rotate = true })
		ctx := t.Context()

		authURL := h.initiate(t, "docs")
		u, err := url.Parse(authURL)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		if got := q.Get("code_challenge_method"); got != "S256" {
			t.Errorf("code_challenge_method: got %q, want S256", got)
		}
		if got := q.Get("resource"); got != h.as.ServerURL() {
			t.Errorf("resource: got %q, want %q", got, h.as.ServerURL())
		}
		if got := q.Get("client_id"); got != "dyn-1" {
			t.Errorf("client_id: got %q, want the registered dyn-1", got)
		}
		if got := q.Get("scope"); got != "tools:call" {
			t.Errorf("scope: got %q, want the challenge's tools:call", got)
		}
		if len(q.Get("state")) != 43 {
			t.Errorf("state: got %q, want 32 random bytes in base64url", q.Get("state"))
		}
		// The pending authorization is sealed in the KV: no verifier in clear.
		sum := sha256.Sum256([]byte(q.Get("state")))
		kept, err := h.kv.Get(ctx, "mcp:oauth:state:"+hex.EncodeToString(sum[:]))
		if err != nil {
			t.Fatalf("pending authorization not in the KV: %v", err)
		}
		noSecrets(t, "the KV's pending authorization", string(kept))
		if strings.Contains(string(kept), q.Get("state")) {
			t.Errorf("the KV's pending authorization holds the state in clear")
		}

		a := get(t, h.consent(t, authURL), "Accept", "application/json")
		if a.status != http.StatusOK || a.json(t)["status"] != "authorized" || a.json(t)["server_id"] != "docs" {
			t.Fatalf("callback: got %d %s, want 200 authorized docs", a.status, a.body)
		}

		tok, err := h.flow.Token(ctx, "docs")
		if err != nil || tok != "at-3" {
			t.Fatalf("Token: got %q, %v; want at-3", tok, err)
		}
		if got := h.as.CallMCP(t, tok); got != http.StatusOK {
			t.Errorf("MCP call with the token: got %d, want 200", got)
		}

		// Stored sealed.
		var access, refresh []byte
		if err := db.QueryRow(ctx, `SELECT access_token, refresh_token FROM mcp_oauth_tokens WHERE server_id = ?`, "docs").Scan(&access, &refresh); err != nil {
			t.Fatal(err)
		}
		noSecrets(t, "the stored row", string(access)+string(refresh))

		// Within a minute of expiry: refreshed, with the resource.
		h.clock.advance(time.Hour - 59*time.Second)
		tok2, err := h.flow.Token(ctx, "docs")
		if err != nil || tok2 == tok || !strings.HasPrefix(tok2, "at-") {
			t.Fatalf("Token near expiry: got %q, %v; want a new token", tok2, err)
		}
		if got := h.as.CallMCP(t, tok2); got != http.StatusOK {
			t.Errorf("MCP call with the refreshed token: got %d, want 200", got)
		}
		// The rotated refresh token was stored: a second refresh works.
		h.clock.advance(time.Hour)
		tok3, err := h.flow.Token(ctx, "docs")
		if err != nil || tok3 == tok2 {
			t.Fatalf("second refresh: got %q, %v; want a new token", tok3, err)
		}
		n, resources, styles := h.as.Stats()
		if n != 2 {
			t.Errorf("refreshes: got %d, want 2", n)
		}
		for i, r := range resources {
			if r != h.as.ServerURL() {
				t.Errorf("token request %d: resource %q, want %q", i, r, h.as.ServerURL())
			}
		}
		if !slices.Equal(styles, []string{"basic", "basic", "basic"}) {
			t.Errorf("client authentication: got %v, want basic each time", styles)
		}
		// Not yet near expiry: no refresh.
		if again, _ := h.flow.Token(ctx, "docs"); again != tok3 {
			t.Errorf("Token: got %q, want the current %q", again, tok3)
		}

		a = get(t, h.svc.URL+"/api/mcp/auth/tokens")
		if a.status != http.StatusOK {
			t.Fatalf("tokens: got %d %s", a.status, a.body)
		}
		noSecrets(t, "the tokens list", a.body)
		data, _ := a.json(t)["data"].([]any)
		if len(data) != 1 {
			t.Fatalf("tokens: got %s, want one server", a.body)
		}
		ti := data[0].(map[string]any)
		wantExpiry := h.clock.now().Add(time.Hour).Format(time.RFC3339)
		if ti["server_id"] != "docs" || ti["has_refresh_token"] != true || ti["expired"] != false ||
			ti["authorized_by"] != "admin" || ti["dynamic_client"] != true || ti["expires_at"] != wantExpiry {
			t.Errorf("tokens entry: got %v, want docs with a refresh token expiring at %s", ti, wantExpiry)
		}
		if sc, _ := ti["scopes"].([]any); len(sc) != 1 || sc[0] != "tools:call" {
			t.Errorf("scopes: got %v, want [tools:call]", ti["scopes"])
		}
	})
}

// TestReauthorizeReusesRegisteredClient: a second authorization of the same
// server reuses the client registered the first time.
func TestReauthorizeReusesRegisteredClient(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.authorize(t, "docs")
	u, _ := url.Parse(h.initiate(t, "docs"))
	if got := u.Query().Get("client_id"); got != "dyn-1" {
		t.Errorf("second authorization: client_id %q, want the registered dyn-1", got)
	}
	a := get(t, h.consent(t, u.String()))
	if a.status != http.StatusOK {
		t.Fatalf("second callback: got %d %s", a.status, a.body)
	}
	if _, err := h.flow.Token(t.Context(), "docs"); err != nil {
		t.Fatalf("Token after the second authorization: %v", err)
	}
}

// TestFlowConfiguredClient: without a registration endpoint, the client
// configured on the server is used; without one, a clear 400.
func TestFlowConfiguredClient(t *testing.T) {
	h := newHarness(t, nil, func(f *oauthtest.AS) {
		f.DCR = false
		f.Static = [2]string{"static-id", "static-secret"}
	})
	a := get(t, h.svc.URL+"/api/mcp/auth/initiate?server_id=docs")
	if a.status != http.StatusBadRequest || a.errorCode(t) != "mcp_oauth_client_required" {
		t.Errorf("initiate without a client: got %d %s, want 400 mcp_oauth_client_required", a.status, a.body)
	}

	h.servers["docs"] = oauth.Server{ID: "docs", URL: h.as.ServerURL(), ClientID: "static-id",
		ClientSecret: "static-secret", Scopes: []string{"tools:read"}}
	authURL := h.initiate(t, "docs")
	u, _ := url.Parse(authURL)
	if u.Query().Get("client_id") != "static-id" || u.Query().Get("scope") != "tools:read" {
		t.Errorf("authorization URL: got %s, want the configured client and scopes", authURL)
	}
	a = get(t, h.consent(t, authURL))
	if a.status != http.StatusOK {
		t.Fatalf("callback: got %d %s", a.status, a.body)
	}
	tok, err := h.flow.Token(t.Context(), "docs")
	if err != nil || h.as.CallMCP(t, tok) != http.StatusOK {
		t.Fatalf("Token: got %q, %v; want a working token", tok, err)
	}
	list, err := h.flow.Tokens(t.Context())
	if err != nil || len(list) != 1 || list[0].DynamicClient {
		t.Errorf("Tokens: got %+v, %v; want docs with the configured client", list, err)
	}
	// Refresh with the configured client's secret.
	h.clock.advance(time.Hour)
	if tok2, err := h.flow.Token(t.Context(), "docs"); err != nil || tok2 == tok {
		t.Errorf("refresh: got %q, %v; want a new token", tok2, err)
	}
}

// TestDiscoveryFallbacks: with no challenge, the metadata is found at the
// well-known URI; an authorization server with OIDC metadata only works.
func TestDiscoveryFallbacks(t *testing.T) {
	h := newHarness(t, nil, func(f *oauthtest.AS) {
		f.Challenge = false
		f.OIDCOnly = true
	})
	h.authorize(t, "docs")
	if _, err := h.flow.Token(t.Context(), "docs"); err != nil {
		t.Fatalf("Token: %v", err)
	}
}

// TestDiscoveryRefusals: an issuer that does not match, an http URL
// without the loopback exception, an unknown server.
func TestDiscoveryRefusals(t *testing.T) {
	t.Run("issuer mismatch", func(t *testing.T) {
		h := newHarness(t, nil, func(f *oauthtest.AS) { f.Issuer = "https://other.example" })
		a := get(t, h.svc.URL+"/api/mcp/auth/initiate?server_id=docs")
		if a.status != http.StatusBadGateway || a.errorCode(t) != "mcp_oauth_discovery_failed" {
			t.Errorf("got %d %s, want 502 mcp_oauth_discovery_failed", a.status, a.body)
		}
	})
	t.Run("http without the loopback exception", func(t *testing.T) {
		h := newHarness(t, nil, nil)
		f := h.newFlow(t, func(c *oauth.Config) { c.AllowHTTPLoopback = false })
		_, err := f.Initiate(t.Context(), "docs", "admin")
		if e := apierr.From(err); e.Kind != apierr.InvalidRequest || e.Code != "invalid_server_url" {
			t.Errorf("got %v, want 400 invalid_server_url", err)
		}
	})
	t.Run("unknown server", func(t *testing.T) {
		h := newHarness(t, nil, nil)
		a := get(t, h.svc.URL+"/api/mcp/auth/initiate?server_id=nope")
		if a.status != http.StatusNotFound || a.errorCode(t) != "mcp_server_not_found" {
			t.Errorf("got %d %s, want 404 mcp_server_not_found", a.status, a.body)
		}
		a = get(t, h.svc.URL+"/api/mcp/auth/initiate")
		if a.status != http.StatusBadRequest {
			t.Errorf("no server_id: got %d %s, want 400", a.status, a.body)
		}
	})
}

// TestInitiateRedirect: redirect=true answers 302 to the authorization URL.
func TestInitiateRedirect(t *testing.T) {
	h := newHarness(t, nil, nil)
	a := get(t, h.svc.URL+"/api/mcp/auth/initiate?server_id=docs&redirect=true")
	if a.status != http.StatusFound || !strings.HasPrefix(a.header.Get("Location"), h.as.AuthServer.URL+"/authorize?") {
		t.Fatalf("got %d Location %q, want 302 to the authorize endpoint", a.status, a.header.Get("Location"))
	}
	if a := get(t, h.consent(t, a.header.Get("Location"))); a.status != http.StatusOK {
		t.Errorf("callback: got %d %s", a.status, a.body)
	}
}

// TestCallbackState: a state that is unknown, replayed or expired is a 400;
// so is a callback without one.
func TestCallbackState(t *testing.T) {
	h := newHarness(t, nil, nil)
	cb := h.svc.URL + "/api/mcp/auth/callback"

	for name, q := range map[string]string{
		"missing": "?code=x",
		"unknown": "?code=x&state=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
		"long":    "?code=x&state=" + strings.Repeat("a", 300),
	} {
		if a := get(t, cb+q); a.status != http.StatusBadRequest || a.errorCode(t) != "invalid_state" {
			t.Errorf("%s state: got %d %s, want 400 invalid_state", name, a.status, a.body)
		}
	}

	back := h.consent(t, h.initiate(t, "docs"))
	if a := get(t, back); a.status != http.StatusOK {
		t.Fatalf("first callback: got %d %s", a.status, a.body)
	}
	if a := get(t, back); a.status != http.StatusBadRequest || a.errorCode(t) != "invalid_state" {
		t.Errorf("replayed callback: got %d %s, want 400 invalid_state", a.status, a.body)
	}

	// A tampered state of the right shape.
	u, _ := url.Parse(h.consent(t, h.initiate(t, "docs")))
	q := u.Query()
	s := []byte(q.Get("state"))
	s[0] ^= 1
	q.Set("state", string(s))
	u.RawQuery = q.Encode()
	if a := get(t, u.String()); a.status != http.StatusBadRequest || a.errorCode(t) != "invalid_state" {
		t.Errorf("tampered state: got %d %s, want 400 invalid_state", a.status, a.body)
	}

	back = h.consent(t, h.initiate(t, "docs"))
	h.clock.advance(11 * time.Minute)
	if a := get(t, back); a.status != http.StatusBadRequest || a.errorCode(t) != "invalid_state" {
		t.Errorf("expired state: got %d %s, want 400 invalid_state", a.status, a.body)
	}
}

// TestCallbackRefused: the authorization server's error parameter is a
// clear 400 and ends the pending authorization.
func TestCallbackRefused(t *testing.T) {
	h := newHarness(t, nil, nil)
	u, _ := url.Parse(h.consent(t, h.initiate(t, "docs")))
	q := u.Query()
	refused := url.Values{"state": {q.Get("state")}, "error": {"access_denied"}, "error_description": {"the user said no"}}
	a := get(t, h.svc.URL+"/api/mcp/auth/callback?"+refused.Encode())
	if a.status != http.StatusBadRequest || a.errorCode(t) != "mcp_oauth_denied" ||
		!strings.Contains(a.errorMessage(t), "access_denied") || !strings.Contains(a.errorMessage(t), "the user said no") ||
		!strings.Contains(a.errorMessage(t), `"docs"`) {
		t.Errorf("got %d %s, want 400 mcp_oauth_denied naming docs, access_denied and the description", a.status, a.body)
	}
	if a := get(t, u.String()); a.status != http.StatusBadRequest || a.errorCode(t) != "invalid_state" {
		t.Errorf("the code after a refusal: got %d %s, want 400 invalid_state", a.status, a.body)
	}
	if _, err := h.flow.Token(t.Context(), "docs"); !errors.Is(err, oauth.ErrNoToken) {
		t.Errorf("Token: got %v, want ErrNoToken", err)
	}
}

// TestCallbackIssuer: RFC 9207's iss must match when present, and be
// present when the server advertises it.
func TestCallbackIssuer(t *testing.T) {
	h := newHarness(t, nil, func(f *oauthtest.AS) { f.ISSParameter = true })
	h.authorize(t, "docs")

	h = newHarness(t, nil, func(f *oauthtest.AS) { f.BadIss = true })
	a := get(t, h.consent(t, h.initiate(t, "docs")))
	if a.status != http.StatusBadRequest || a.errorCode(t) != "mcp_oauth_issuer_mismatch" {
		t.Errorf("wrong iss: got %d %s, want 400 mcp_oauth_issuer_mismatch", a.status, a.body)
	}

	h = newHarness(t, nil, func(f *oauthtest.AS) { f.ISSParameter = true })
	u, _ := url.Parse(h.consent(t, h.initiate(t, "docs")))
	q := u.Query()
	q.Del("iss")
	u.RawQuery = q.Encode()
	if a := get(t, u.String()); a.status != http.StatusBadRequest || a.errorCode(t) != "mcp_oauth_issuer_mismatch" {
		t.Errorf("missing iss: got %d %s, want 400 mcp_oauth_issuer_mismatch", a.status, a.body)
	}
}

// TestCallbackBadCode: a code the authorization server does not know is a
// 502 naming its error, never quoting its answer.
func TestCallbackBadCode(t *testing.T) {
	h := newHarness(t, nil, nil)
	u, _ := url.Parse(h.consent(t, h.initiate(t, "docs")))
	q := u.Query()
	q.Set("code", "forged")
	u.RawQuery = q.Encode()
	a := get(t, u.String())
	if a.status != http.StatusBadGateway || a.errorCode(t) != "mcp_oauth_token_failed" || !strings.Contains(a.errorMessage(t), "invalid_grant") {
		t.Errorf("got %d %s, want 502 mcp_oauth_token_failed naming invalid_grant", a.status, a.body)
	}
	noSecrets(t, "the error", a.body)
}

// TestTokenWithoutRefresh: a token without a refresh token serves until it
// expires, then the server needs authorizing again.
func TestTokenWithoutRefresh(t *testing.T) {
	h := newHarness(t, nil, func(f *oauthtest.AS) { f.NoRefresh = true })
	ctx := t.Context()
	if _, err := h.flow.Token(ctx, "docs"); !errors.Is(err, oauth.ErrNoToken) || apierr.From(err).Code != "mcp_oauth_required" {
		t.Errorf("before authorizing: got %v, want ErrNoToken in mcp_oauth_required", err)
	}
	h.authorize(t, "docs")
	h.clock.advance(time.Hour - 30*time.Second)
	if tok, err := h.flow.Token(ctx, "docs"); err != nil || tok == "" {
		t.Errorf("near expiry: got %q, %v; want the still valid token", tok, err)
	}
	h.clock.advance(time.Minute)
	_, err := h.flow.Token(ctx, "docs")
	if !errors.Is(err, oauth.ErrReauthorize) || apierr.From(err).Status() != http.StatusForbidden {
		t.Errorf("expired: got %v, want ErrReauthorize (403)", err)
	}
	noSecrets(t, "the error", err.Error())
}

// TestRefreshRefused: a refresh token the server no longer accepts ends the
// authorization once the access token has expired.
func TestRefreshRefused(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.authorize(t, "docs")
	h.as.ForgetRefreshTokens()
	h.clock.advance(time.Hour - 30*time.Second)
	for range 2 {
		if tok, err := h.flow.Token(t.Context(), "docs"); err != nil || tok == "" {
			t.Errorf("refused refresh of a still valid token: got %q, %v; want the current token", tok, err)
		}
	}
	if n, _, _ := h.as.Stats(); n != 1 {
		t.Errorf("refreshes: got %d, want 1 (the next try waits)", n)
	}
	h.clock.advance(time.Minute)
	if _, err := h.flow.Token(t.Context(), "docs"); !errors.Is(err, oauth.ErrReauthorize) {
		t.Errorf("refused refresh of an expired token: got %v, want ErrReauthorize", err)
	}
}

// TestRevoke: the tokens go, and Token says so.
func TestRevoke(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.authorize(t, "docs")
	if a := do(t, http.MethodDelete, h.svc.URL+"/api/mcp/auth/tokens/docs"); a.status != http.StatusOK {
		t.Fatalf("revoke: got %d %s", a.status, a.body)
	}
	if a := do(t, http.MethodDelete, h.svc.URL+"/api/mcp/auth/tokens/docs"); a.status != http.StatusNotFound {
		t.Errorf("second revoke: got %d %s, want 404", a.status, a.body)
	}
	if _, err := h.flow.Token(t.Context(), "docs"); !errors.Is(err, oauth.ErrNoToken) {
		t.Errorf("Token after revoke: got %v, want ErrNoToken", err)
	}
	if list, err := h.flow.Tokens(t.Context()); err != nil || len(list) != 0 {
		t.Errorf("Tokens after revoke: got %v, %v; want none", list, err)
	}
}

// TestConcurrentRefresh: two replicas refreshing at once, the first answer
// held until the second was answered. With rotating refresh tokens the
// second is refused and takes the first's token; without, the first to
// store wins and the other takes its token. Either way a later refresh works.
func TestConcurrentRefresh(t *testing.T) {
	for _, rotate := range []bool{true, false} {
		t.Run(map[bool]string{true: "rotating", false: "reusable"}[rotate], func(t *testing.T) {
			h := newHarness(t, nil, func(f *oauthtest.AS) { f.Rotate, f.Gate = rotate, true })
			h.authorize(t, "docs")
			replica := h.newFlow(t, nil)
			h.clock.advance(time.Hour - 10*time.Second)

			type result struct {
				tok string
				err error
			}
			results := make(chan result, 2)
			for _, f := range []*oauth.Flow{h.flow, replica} {
				go func() {
					tok, err := f.Token(context.Background(), "docs")
					results <- result{tok, err}
				}()
			}
			r1, r2 := <-results, <-results
			if r1.err != nil || r2.err != nil {
				t.Fatalf("Token: got errors %v, %v", r1.err, r2.err)
			}
			stored, err := h.flow.Token(t.Context(), "docs")
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range []result{r1, r2} {
				if h.as.CallMCP(t, r.tok) != http.StatusOK {
					t.Errorf("token %q does not work", r.tok)
				}
			}
			if !rotate && (r1.tok != stored || r2.tok != stored) {
				t.Errorf("tokens %q, %q: want both the stored %q", r1.tok, r2.tok, stored)
			}
			if n, _, _ := h.as.Stats(); n != 2 {
				t.Errorf("refreshes: got %d, want 2", n)
			}
			h.as.Gate = false
			h.clock.advance(time.Hour)
			if tok, err := h.flow.Token(t.Context(), "docs"); err != nil || tok == stored {
				t.Errorf("a later refresh: got %q, %v; want a new token (the stored refresh token works)", tok, err)
			}
		})
	}
}

// TestRefreshOncePerProcess: many callers of one replica share one refresh.
func TestRefreshOncePerProcess(t *testing.T) {
	h := newHarness(t, nil, nil)
	h.authorize(t, "docs")
	h.clock.advance(time.Hour)
	errs := make(chan error, 8)
	for range 8 {
		go func() {
			_, err := h.flow.Token(context.Background(), "docs")
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Errorf("Token: %v", err)
		}
	}
	if n, _, _ := h.as.Stats(); n != 1 {
		t.Errorf("refreshes: got %d, want 1", n)
	}
}
