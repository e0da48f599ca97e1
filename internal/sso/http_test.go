package sso_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/sso"
	"github.com/svc-gateway/svc/internal/sso/token"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// Fake verifiers: each accepts one credential value.
type idTokens struct{}

func (idTokens) Verify(_ context.Context, raw string) (sso.Identity, error) {
	if raw != "good-id-token" {
		return sso.Identity{}, apierr.New(apierr.Unauthenticated, "oidc_audience_mismatch", "the ID token's audience is not svc's client id")
	}
	return sso.Identity{Username: "alice", Email: "alice@corp.example", Groups: []string{"svc-Admins"}, Method: "oidc:idp.example"}, nil
}

type assertions struct{}

func (assertions) Verify(_ context.Context, b64 string) (sso.Identity, error) {
	if b64 != "PHNhbWw+" {
		return sso.Identity{}, apierr.New(apierr.Unauthenticated, "saml_expired", "the assertion has expired")
	}
	return sso.Identity{Username: "bob", Groups: []string{"eng"}, Method: sso.MethodSAML}, nil
}

type negotiator struct{}

func (negotiator) Verify(_ context.Context, tok string) (sso.Identity, string, error) {
	if tok != "YII=" {
		return sso.Identity{}, "", apierr.New(apierr.Unauthenticated, "kerberos_ticket_invalid", "the ticket is not valid")
	}
	return sso.Identity{Username: "carol", Method: sso.MethodKerberos}, "oYI=", nil
}

type browser struct{ finished []string }

func (b *browser) Start() (string, string, error) {
	return "https://idp.example/authorize?state=s1", "cookie-1", nil
}

func (b *browser) Finish(_ context.Context, code, state, cookie string) (sso.Identity, error) {
	b.finished = append(b.finished, code+"|"+state+"|"+cookie)
	if state != "s1" || cookie != "cookie-1" {
		return sso.Identity{}, apierr.New(apierr.InvalidRequest, "invalid_state", "state mismatch")
	}
	return sso.Identity{Username: "dave", Method: "oidc:idp.example"}, nil
}

type signinEnv struct {
	srv    *httptest.Server
	svc    *sso.Service
	tokens *token.Signer
	flow   *browser
}

func newSigninEnv(t *testing.T, db *sqlstore.DB, methods sso.Methods) *signinEnv {
	e := &signinEnv{flow: &browser{}}
	e.svc = sso.NewService(sso.Options{Store: sso.NewSQLStore(db)})
	if err := e.svc.Load(context.Background()); err != nil {
		t.Fatal(err)
	}
	k, _ := token.NewKey([]byte(strings.Repeat("k", 32)))
	e.tokens, _ = token.New(token.Options{Current: k, Revoked: e.svc})
	if methods.Browser == nil {
		methods.Browser = e.flow
	}
	api := &sso.API{Service: e.svc, Tokens: e.tokens, Methods: func() sso.Methods { return methods },
		Proxies: sso.Proxies{netip.MustParsePrefix("127.0.0.1/32")},
		Admin: func(h http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Header.Get("Authorization") != "Bearer admin" {
					apierr.Write(w, apierr.New(apierr.Unauthenticated, "invalid_admin_key", "admin only"))
					return
				}
				h.ServeHTTP(w, r)
			})
		}}
	mux := http.NewServeMux()
	api.Register(mux)
	e.srv = httptest.NewServer(mux)
	t.Cleanup(e.srv.Close)
	return e
}

func (e *signinEnv) do(t *testing.T, method, path string, hdr map[string]string, body string) (*http.Response, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := (&http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return resp, out
}

func TestSignin(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSigninEnv(t, db, sso.Methods{OIDC: idTokens{}, SAML: assertions{}, Kerberos: negotiator{}})
		admin := map[string]string{"Authorization": "Bearer admin"}
		if _, out := e.do(t, "GET", "/api/auth/sso/config", admin, ""); out["success"] != false || out["error"] == "" {
			t.Errorf("unconfigured: %v", out)
		}
		if resp, _ := e.do(t, "POST", "/api/auth/sso/config", nil, `{"client_id":"x"}`); resp.StatusCode != 401 {
			t.Errorf("config without the admin key: %d", resp.StatusCode)
		}
		if resp, out := e.do(t, "POST", "/api/auth/sso/config", admin, `{"client_id":"svc","issuer":"https://idp.example","admin_groups":["svc-*"]}`); resp.StatusCode != 200 || out["success"] != true {
			t.Fatalf("config: %d %v", resp.StatusCode, out)
		}
		if resp, out := e.do(t, "POST", "/api/auth/sso/config", admin, `{"jwks_uri":"ftp://x"}`); resp.StatusCode != 400 || !strings.Contains(jsonString(out), "jwks_uri") {
			t.Errorf("a bad field: %d %v", resp.StatusCode, out)
		}

		// Each method, by the credential the request carries.
		for _, c := range []struct {
			name   string
			hdr    map[string]string
			user   string
			admin  bool
			mutual string
		}{
			{"oidc", map[string]string{"Authorization": "Bearer good-id-token"}, "alice", true, ""},
			{"saml", map[string]string{"X-SAML-Assertion": "PHNhbWw+"}, "bob", false, ""},
			{"kerberos", map[string]string{"Authorization": "Negotiate YII="}, "carol", false, "Negotiate oYI="},
			{"trusted headers", map[string]string{"X-Remote-User": "erin@corp.example", "X-User-Groups": "svc-ops"}, "erin", true, ""},
		} {
			resp, out := e.do(t, "POST", "/api/auth/sso/signin", c.hdr, "")
			if resp.StatusCode != 200 || out["token_type"] != "Bearer" || out["expires_in"] != float64(3600) {
				t.Errorf("%s: %d %v", c.name, resp.StatusCode, out)
				continue
			}
			if got := resp.Header.Get("WWW-Authenticate"); got != c.mutual {
				t.Errorf("%s: WWW-Authenticate %q, want %q", c.name, got, c.mutual)
			}
			p, err := sso.TokenAuthenticator{Tokens: e.tokens}.Authenticate(context.Background(), auth.Credentials{Bearer: out["token"].(string)})
			if err != nil || p.Kind != identity.User || p.ID != c.user || p.IsAdmin() != c.admin {
				t.Errorf("%s: the token's principal %+v %v, want %s admin=%v", c.name, p, err, c.user, c.admin)
			}
		}
		// Refusals keep the verifier's status and code; nothing sent is a 401
		// with the Negotiate challenge.
		for _, c := range []struct {
			hdr  map[string]string
			code string
		}{
			{map[string]string{"Authorization": "Bearer forged"}, "oidc_audience_mismatch"},
			{map[string]string{"X-SAML-Assertion": "old"}, "saml_expired"},
			{map[string]string{"Authorization": "Negotiate bad"}, "kerberos_ticket_invalid"},
			{nil, "no_credentials"},
		} {
			resp, out := e.do(t, "POST", "/api/auth/sso/signin", c.hdr, "")
			if resp.StatusCode != 401 || !strings.Contains(jsonString(out), c.code) || resp.Header.Get("WWW-Authenticate") != "Negotiate" {
				t.Errorf("%v: %d %v %q", c.hdr, resp.StatusCode, out, resp.Header.Get("WWW-Authenticate"))
			}
		}
	})
}

// TestSigninNotConfigured: a method without configuration is a 400.
func TestSigninNotConfigured(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSigninEnv(t, db, sso.Methods{})
		resp, out := e.do(t, "POST", "/api/auth/sso/signin", map[string]string{"Authorization": "Bearer x.y.z"}, "")
		if resp.StatusCode != 400 || !strings.Contains(jsonString(out), "sso_not_configured") {
			t.Errorf("%d %v", resp.StatusCode, out)
		}
	})
}

func TestBrowserFlowAndRevoke(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		e := newSigninEnv(t, db, sso.Methods{})
		resp, out := e.do(t, "GET", "/api/auth/sso/login", nil, "")
		var flow *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == "svc_sso_flow" {
				flow = c
			}
		}
		if resp.StatusCode != 200 || out["auth_url"] == "" || flow == nil || !flow.HttpOnly {
			t.Fatalf("login: %d %v %+v", resp.StatusCode, out, flow)
		}
		if resp, _ := e.do(t, "GET", "/api/auth/sso/login", map[string]string{"Accept": "text/html"}, ""); resp.StatusCode != 302 {
			t.Errorf("login from a browser: %d, want a redirect", resp.StatusCode)
		}
		if resp, _ := e.do(t, "GET", "/api/auth/sso/callback?code=c&state=s1", nil, ""); resp.StatusCode != 400 {
			t.Errorf("a callback without the flow's cookie: %d", resp.StatusCode)
		}
		cookie := map[string]string{"Cookie": "svc_sso_flow=" + flow.Value}
		if resp, _ := e.do(t, "GET", "/api/auth/sso/callback?code=c&state=wrong", cookie, ""); resp.StatusCode != 400 {
			t.Errorf("a wrong state: %d", resp.StatusCode)
		}
		resp, out = e.do(t, "GET", "/api/auth/sso/callback?code=c&state=s1", cookie, "")
		var tok *http.Cookie
		for _, c := range resp.Cookies() {
			if c.Name == sso.TokenCookie {
				tok = c
			}
		}
		if resp.StatusCode != 200 || tok == nil || !tok.HttpOnly || tok.SameSite != http.SameSiteLaxMode || tok.Secure || tok.Value != out["token"] {
			t.Fatalf("callback: %d %v %+v", resp.StatusCode, out, tok)
		}
		if !slices.Contains(e.flow.finished, "c|s1|cookie-1") {
			t.Errorf("Finish saw %v", e.flow.finished)
		}
		// Revocation: the user's tokens are refused at once.
		authn := sso.TokenAuthenticator{Tokens: e.tokens}
		if _, err := authn.Authenticate(context.Background(), auth.Credentials{Bearer: tok.Value}); err != nil {
			t.Fatal(err)
		}
		if resp, _ := e.do(t, "POST", "/api/auth/sso/revoke", map[string]string{"Authorization": "Bearer admin"}, `{"username":"dave"}`); resp.StatusCode != 200 {
			t.Fatalf("revoke: %d", resp.StatusCode)
		}
		time.Sleep(10 * time.Millisecond)
		_, err := authn.Authenticate(context.Background(), auth.Credentials{Bearer: tok.Value})
		if apierr.From(err).Status() != 401 || apierr.From(err).Code != "token_revoked" {
			t.Errorf("a revoked user's token: %v", err)
		}
		if resp, _ := e.do(t, "POST", "/api/auth/sso/revoke", map[string]string{"Authorization": "Bearer admin"}, `{"username":"a","jti":"b"}`); resp.StatusCode != 400 {
			t.Errorf("both username and jti: %d", resp.StatusCode)
		}
	})
}

// TestHeaderAuthenticator: headers count from a trusted proxy with no
// token presented, and from nowhere else.
func TestHeaderAuthenticator(t *testing.T) {
	a := sso.HeaderAuthenticator{Proxies: sso.Proxies{netip.MustParsePrefix("127.0.0.2/32")}}
	h := http.Header{"X-Remote-User": {"frank"}, "X-User-Groups": {"Domain Admins"}}
	p, err := a.Authenticate(context.Background(), auth.Credentials{Header: h, RemoteAddr: "127.0.0.2:1"})
	if err != nil || p.ID != "frank" || !p.IsAdmin() || p.AuthMethod != sso.MethodProxy {
		t.Errorf("from the proxy: %+v %v", p, err)
	}
	for _, c := range []auth.Credentials{
		{Header: h, RemoteAddr: "127.0.0.1:1"},
		{Header: h, RemoteAddr: "127.0.0.2:1", Bearer: "sk-svc-x"},
		{Header: http.Header{}, RemoteAddr: "127.0.0.2:1"},
	} {
		if _, err := a.Authenticate(context.Background(), c); err != auth.ErrNotMine {
			t.Errorf("%+v: %v, want ErrNotMine", c, err)
		}
	}
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// BenchmarkTokenAuthenticator is the request path's cost of a sign-in
// token: the authenticator (shape check, verification — remembered after
// the first time —, the revocation lookup, the principal).
func BenchmarkTokenAuthenticator(b *testing.B) {
	svc := sso.NewService(sso.Options{Store: emptyStore{}})
	if err := svc.Load(context.Background()); err != nil {
		b.Fatal(err)
	}
	k, _ := token.NewKey([]byte(strings.Repeat("k", 32)))
	signer, _ := token.New(token.Options{Current: k, Revoked: svc})
	raw, _, _ := signer.Mint(token.User{Username: "alice", Groups: []string{"eng", "svc-Admins"}, Method: "oidc:x"}, []string{"admin", "user"})
	a := sso.TokenAuthenticator{Tokens: signer}
	c := auth.Credentials{Bearer: raw}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := a.Authenticate(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}

// emptyStore is a Store with nothing in it.
type emptyStore struct{}

func (emptyStore) Config(context.Context) (sso.Config, error)  { return sso.Config{}, store.ErrNotFound }
func (emptyStore) PutConfig(context.Context, sso.Config) error { return nil }
func (emptyStore) User(context.Context, string) (sso.User, error) {
	return sso.User{}, store.ErrNotFound
}
func (emptyStore) PutUser(context.Context, sso.User) error                          { return nil }
func (emptyStore) Revoke(context.Context, sso.Revocation) error                     { return nil }
func (emptyStore) Revocations(context.Context, time.Time) ([]sso.Revocation, error) { return nil, nil }
