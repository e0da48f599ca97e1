package sso

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/egress"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/sso/token"
)

// The methods' verifiers, as the configuration in force builds them (the
// wiring adapts sso/oidc, sso/saml and sso/kerberos). Their errors are
// *apierr.Error values naming the check that failed.
type (
	// IDTokens verify an OIDC ID token.
	IDTokens interface {
		Verify(ctx context.Context, raw string) (Identity, error)
	}
	// Assertions verify a base64 SAML assertion.
	Assertions interface {
		Verify(ctx context.Context, b64 string) (Identity, error)
	}
	// Negotiator verifies a SPNEGO token; the second result is the token
	// for a mutual-authentication answer ("" when none).
	Negotiator interface {
		Verify(ctx context.Context, spnego string) (Identity, string, error)
	}
	// BrowserFlow is the OIDC authorization-code flow: Start gives the
	// authorization URL and the value of the cookie that binds state,
	// nonce and PKCE verifier; Finish checks them and the code.
	BrowserFlow interface {
		Start() (authURL, cookie string, err error)
		Finish(ctx context.Context, code, state, cookie string) (Identity, error)
	}
)

// Methods are the sign-in methods in force; a nil one is not configured.
type Methods struct {
	OIDC     IDTokens
	SAML     Assertions
	Kerberos Negotiator
	Browser  BrowserFlow
}

// API serves the sign-in routes.
type API struct {
	Service *Service
	Tokens  *token.Signer
	// Methods gives the methods of the configuration in force.
	Methods func() Methods
	Proxies Proxies
	// Admin guards the configuration and revocation routes (auth.Guard).
	Admin func(http.Handler) http.Handler
	// Audit, when set, records a configuration change or a revocation that
	// succeeded (the tamper-evident audit chain): EventConfigUpdate,
	// EventRevoke.
	Audit func(r *http.Request, event, subject string, details map[string]any)
}

// Events of the admin actions the routes record.
const (
	EventConfigUpdate = "sso.config.update"
	EventRevoke       = "sso.revoke"
)

func (a *API) audit(r *http.Request, event, subject string, details map[string]any) {
	if a.Audit != nil {
		a.Audit(r, event, subject, details)
	}
}

// Cookie names.
const (
	TokenCookie = "svc_token"
	flowCookie  = "svc_sso_flow"
	flowPath    = "/api/auth/sso/callback"
)

// Register adds the routes to mux.
func (a *API) Register(mux *http.ServeMux) {
	mux.Handle("GET /api/auth/sso/config", a.Admin(http.HandlerFunc(a.getConfig)))
	mux.Handle("POST /api/auth/sso/config", a.Admin(http.HandlerFunc(a.postConfig)))
	mux.Handle("POST /api/auth/sso/revoke", a.Admin(http.HandlerFunc(a.revoke)))
	mux.HandleFunc("POST /api/auth/sso/signin", a.signin)
	mux.HandleFunc("GET /api/auth/sso/login", a.login)
	mux.HandleFunc("GET /api/auth/sso/callback", a.callback)
}

func (a *API) getConfig(w http.ResponseWriter, _ *http.Request) {
	c, ok := a.Service.Config()
	if !ok {
		_ = jsonbody.Write(w, http.StatusOK, map[string]any{"success": false, "error": "sign-in is not configured: POST /api/auth/sso/config"})
		return
	}
	_ = jsonbody.Write(w, http.StatusOK, map[string]any{"success": true, "config": c})
}

func (a *API) postConfig(w http.ResponseWriter, r *http.Request) {
	var p Patch
	if err := jsonbody.Read(r, 128<<10, &p, true); err != nil {
		apierr.Write(w, err)
		return
	}
	c, err := a.Service.UpdateConfig(r.Context(), p)
	var fe *FieldError
	switch {
	case errors.As(err, &fe):
		apierr.Write(w, apierr.BadParam(fe.Field, "%s", fe.Error()))
		return
	case err != nil:
		apierr.Write(w, apierr.Wrap(apierr.Unavailable, "store_unavailable", "the sign-in configuration could not be stored", err))
		return
	}
	a.audit(r, EventConfigUpdate, "sso_config", map[string]any{"version": c.Version})
	_ = jsonbody.Write(w, http.StatusOK, map[string]any{"success": true, "config": c})
}

// revoke serves POST /api/auth/sso/revoke {username} or {jti}.
func (a *API) revoke(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Username string `json:"username"`
		JTI      string `json:"jti"`
	}
	if err := jsonbody.Read(r, 4<<10, &body, true); err != nil {
		apierr.Write(w, err)
		return
	}
	kind, subject := RevokeUser, strings.TrimSpace(body.Username)
	if body.JTI != "" {
		kind, subject = RevokeToken, strings.TrimSpace(body.JTI)
	}
	if subject == "" || len(subject) > 256 || body.Username != "" && body.JTI != "" {
		apierr.Write(w, apierr.BadParam("username", "give one of username or jti"))
		return
	}
	if err := a.Service.Revoke(r.Context(), kind, subject); err != nil {
		apierr.Write(w, apierr.Wrap(apierr.Unavailable, "store_unavailable", "the revocation could not be stored", err))
		return
	}
	a.audit(r, EventRevoke, subject, map[string]any{"kind": kind})
	_ = jsonbody.Write(w, http.StatusOK, map[string]any{"success": true, "revoked": map[string]string{"kind": kind, "subject": subject}})
}

// signin serves POST /api/auth/sso/signin: the method is the credential
// the request carries, in this order: Negotiate (Kerberos), a SAML
// assertion, a bearer ID token (OIDC), trusted proxy headers.
func (a *API) signin(w http.ResponseWriter, r *http.Request) {
	m := a.Methods()
	id, mutual, err := a.identify(r, m)
	if err != nil {
		if m.Kerberos != nil && apierr.From(err).Status() == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", "Negotiate")
		}
		apierr.Write(w, err)
		return
	}
	if mutual != "" {
		w.Header().Set("WWW-Authenticate", "Negotiate "+mutual)
	}
	a.issue(w, r, id, false)
}

// identify verifies the request's sign-in credential.
func (a *API) identify(r *http.Request, m Methods) (Identity, string, error) {
	authz := strings.TrimSpace(r.Header.Get("Authorization"))
	scheme, value, _ := strings.Cut(authz, " ")
	value = strings.TrimSpace(value)
	switch {
	case strings.EqualFold(scheme, "Negotiate"):
		if m.Kerberos == nil {
			return Identity{}, "", notConfigured("Kerberos")
		}
		return m.Kerberos.Verify(r.Context(), value)
	case r.Header.Get("X-SAML-Assertion") != "":
		if m.SAML == nil {
			return Identity{}, "", notConfigured("SAML")
		}
		id, err := m.SAML.Verify(r.Context(), r.Header.Get("X-SAML-Assertion"))
		return id, "", err
	case strings.EqualFold(scheme, "Bearer") && value != "":
		if m.OIDC == nil {
			return Identity{}, "", notConfigured("OIDC")
		}
		id, err := m.OIDC.Verify(r.Context(), value)
		return id, "", err
	case a.Proxies.Trusts(r):
		if id, ok := FromHeaders(r.Header); ok {
			return id, "", nil
		}
	}
	return Identity{}, "", apierr.New(apierr.Unauthenticated, "no_credentials",
		"sign in with Authorization: Bearer <ID token>, X-SAML-Assertion, Authorization: Negotiate, or through a trusted proxy")
}

func notConfigured(method string) error {
	return apierr.Newf(apierr.InvalidRequest, "sso_not_configured", "%s sign-in is not configured", method)
}

// signinResponse is the spec's sign-in response.
type signinResponse struct {
	Token     string     `json:"token"`
	ExpiresIn int64      `json:"expires_in"`
	TokenType string     `json:"token_type"`
	User      signinUser `json:"user"`
}

type signinUser struct {
	Username   string   `json:"username"`
	Email      string   `json:"email"`
	Groups     []string `json:"groups"`
	AuthMethod string   `json:"auth_method"`
	Roles      []string `json:"roles"`
}

// issue records the sign-in, mints the token and answers it (and sets the
// token cookie for the browser flow).
func (a *API) issue(w http.ResponseWriter, r *http.Request, id Identity, cookie bool) {
	id, roles, err := a.Service.Exchange(r.Context(), id)
	if err != nil {
		apierr.Write(w, apierr.Wrap(apierr.Unavailable, "store_unavailable", "the sign-in could not be recorded", err))
		return
	}
	raw, claims, err := a.Tokens.Mint(token.User{Username: id.Username, Email: id.Email, Department: id.Department,
		Name: id.DisplayName, Groups: id.Groups, Method: id.Method}, roles)
	if err != nil {
		apierr.Write(w, apierr.Wrap(apierr.Internal, "token_failed", "the sign-in token could not be made", err))
		return
	}
	ttl := claims.ExpiresAt.Sub(claims.IssuedAt.Time)
	if cookie {
		http.SetCookie(w, &http.Cookie{Name: TokenCookie, Value: raw, Path: "/", MaxAge: int(ttl / time.Second),
			HttpOnly: true, Secure: !loopback(r), SameSite: http.SameSiteLaxMode})
	}
	w.Header().Set("Cache-Control", "no-store")
	groups := id.Groups
	if groups == nil {
		groups = []string{}
	}
	_ = jsonbody.Write(w, http.StatusOK, signinResponse{Token: raw, ExpiresIn: int64(ttl / time.Second), TokenType: "Bearer",
		User: signinUser{Username: id.Username, Email: id.Email, Groups: groups, AuthMethod: id.Method, Roles: roles}})
}

// login serves GET /api/auth/sso/login: {auth_url}, or a redirect to it
// for a browser (Accept: text/html).
func (a *API) login(w http.ResponseWriter, r *http.Request) {
	m := a.Methods()
	if m.Browser == nil {
		apierr.Write(w, notConfigured("OIDC browser"))
		return
	}
	u, c, err := m.Browser.Start()
	if err != nil {
		apierr.Write(w, apierr.From(err))
		return
	}
	http.SetCookie(w, &http.Cookie{Name: flowCookie, Value: c, Path: flowPath, MaxAge: 600,
		HttpOnly: true, Secure: !loopback(r), SameSite: http.SameSiteLaxMode})
	w.Header().Set("Cache-Control", "no-store")
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		http.Redirect(w, r, u, http.StatusFound)
		return
	}
	_ = jsonbody.Write(w, http.StatusOK, map[string]string{"auth_url": u})
}

// callback serves GET /api/auth/sso/callback?code=&state=.
func (a *API) callback(w http.ResponseWriter, r *http.Request) {
	m := a.Methods()
	if m.Browser == nil {
		apierr.Write(w, notConfigured("OIDC browser"))
		return
	}
	q := r.URL.Query()
	c, err := r.Cookie(flowCookie)
	if err != nil || q.Get("state") == "" || q.Get("code") == "" {
		apierr.Write(w, apierr.New(apierr.InvalidRequest, "invalid_state", "the sign-in was not started here, has expired, or lacks its code and state"))
		return
	}
	// The flow's cookie is single use.
	http.SetCookie(w, &http.Cookie{Name: flowCookie, Value: "", Path: flowPath, MaxAge: -1, HttpOnly: true, Secure: !loopback(r)})
	id, err := m.Browser.Finish(r.Context(), q.Get("code"), q.Get("state"), c.Value)
	if err != nil {
		apierr.Write(w, apierr.From(err))
		return
	}
	a.issue(w, r, id, true)
}

// loopback reports whether the request reached svc on a loopback address
// (a cookie may then go without Secure, for local use over http).
func loopback(r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return egress.IsLoopbackHost(host)
}
