package oidc

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/secret"
	"github.com/svc-gateway/svc/internal/sso"
)

// Browser flow defaults and bounds.
const (
	// DefaultFlowTTL is how long a started sign-in can be finished.
	DefaultFlowTTL = 10 * time.Minute
	// MaxFlowTTL bounds FlowConfig.TTL.
	MaxFlowTTL = time.Hour
	// FlowCookieName is a name for the cookie that carries Start's value.
	FlowCookieName = "svc_sso_flow"

	maxCookieLen = 2048
	maxCodeLen   = 4096
	maxStateLen  = 512
)

// FlowConfig configures a Flow.
type FlowConfig struct {
	// Verifier verifies the ID token; its issuer's discovery document gives
	// the authorization and token endpoints, its client id is the client.
	Verifier *Verifier
	// ClientSecret is OIDC_CLIENT_SECRET; empty for a public client, which
	// then relies on PKCE alone.
	ClientSecret string
	// RedirectURI is OIDC_REDIRECT_URI, the callback address registered
	// with the IdP.
	RedirectURI string
	// Scopes requested; nil: openid, profile, email.
	Scopes []string
	// Sealer seals the flow cookie, so any replica (same master key) can
	// finish a flow another started.
	Sealer *secret.Sealer
	// TTL is how long the cookie is good for; 0: DefaultFlowTTL.
	TTL time.Duration
}

// Flow is the OIDC authorization code flow with PKCE (S256), state and
// nonce, for browsers. Start gives the IdP address to send the browser to
// and a sealed value binding state, nonce and PKCE verifier, which the
// caller puts in a short-lived cookie; Finish checks the callback's state
// against it, exchanges the code (with the verifier and the client secret)
// and verifies the ID token and its nonce. It holds no server-side state.
type Flow struct {
	v        *Verifier
	secret   string
	redirect string
	scopes   []string
	sealer   *secret.Sealer
	ttl      time.Duration
	aad      []byte
}

// flowState is the cookie's sealed content.
type flowState struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Expires  int64  `json:"e"`
}

// NewFlow validates cfg (an InvalidRequest *apierr.Error naming the bad
// field) and returns a Flow. It does no I/O.
func NewFlow(cfg FlowConfig) (*Flow, error) {
	if cfg.Verifier == nil || cfg.Sealer == nil {
		return nil, errors.New("oidc: NewFlow needs a Verifier and a Sealer")
	}
	if err := checkURL(cfg.RedirectURI); err != nil {
		return nil, apierr.BadParam("redirect_uri", "OIDC_REDIRECT_URI: %v", err)
	}
	ttl := cfg.TTL
	if ttl == 0 {
		ttl = DefaultFlowTTL
	}
	if ttl < 0 || ttl > MaxFlowTTL {
		return nil, apierr.BadParam("ttl", "the sign-in flow lifetime must be between 0 and %s", MaxFlowTTL)
	}
	scopes := cfg.Scopes
	if scopes == nil {
		scopes = []string{gooidc.ScopeOpenID, gooidc.ScopeProfile, gooidc.ScopeEmail}
	}
	s := cfg.Verifier.s
	aad := fmt.Appendf(nil, "svc/sso/oidc flow v1\x00%s\x00%s\x00%s", s.issuer, s.clientID, cfg.RedirectURI)
	return &Flow{v: cfg.Verifier, secret: cfg.ClientSecret, redirect: cfg.RedirectURI, scopes: scopes,
		sealer: cfg.Sealer, ttl: ttl, aad: aad}, nil
}

// TTL is the cookie's lifetime (its Max-Age).
func (f *Flow) TTL() time.Duration { return f.ttl }

// Start is StartContext without a caller's context (sso.BrowserFlow): the
// discovery it may need is bounded by its own timeout.
func (f *Flow) Start() (authURL, cookieValue string, err error) {
	return f.StartContext(context.Background())
}

// StartContext begins a sign-in: authURL is the IdP's authorization address
// (code flow, S256 challenge, state, nonce), cookieValue the sealed state
// to set as a cookie (FlowCookieName, HttpOnly, Max-Age TTL) for Finish.
// A discovery failure is a ReasonDiscovery error.
func (f *Flow) StartContext(ctx context.Context) (authURL, cookieValue string, err error) {
	cfg, err := f.oauth(ctx)
	if err != nil {
		return "", "", err
	}
	st := flowState{State: randomToken(), Nonce: randomToken(), Verifier: oauth2.GenerateVerifier(),
		Expires: f.v.s.now().Add(f.ttl).Unix()}
	plain, err := json.Marshal(st)
	if err != nil {
		return "", "", err
	}
	sealed, err := f.sealer.Seal(plain, f.aad)
	if err != nil {
		return "", "", err
	}
	authURL = cfg.AuthCodeURL(st.State, oauth2.S256ChallengeOption(st.Verifier), gooidc.Nonce(st.Nonce))
	return authURL, base64.RawURLEncoding.EncodeToString(sealed), nil
}

// Finish completes a sign-in from the callback's code and state and the
// cookie Start gave. A missing, forged or expired cookie is ReasonFlowCookie
// and a state that differs is ReasonState (400); a code the IdP refuses
// (replayed, expired, wrong PKCE verifier) is ReasonCode (400); then the ID
// token is verified like Verify plus its nonce (ReasonNonce).
func (f *Flow) Finish(ctx context.Context, code, state, cookieValue string) (sso.Identity, error) {
	st, err := f.open(cookieValue)
	if err != nil {
		return sso.Identity{}, err
	}
	if state == "" || len(state) > maxStateLen || subtle.ConstantTimeCompare([]byte(state), []byte(st.State)) != 1 {
		return sso.Identity{}, fail(ReasonState, "", nil)
	}
	if code == "" || len(code) > maxCodeLen {
		return sso.Identity{}, fail(ReasonCode, "the callback has no usable code", nil)
	}
	cfg, err := f.oauth(ctx)
	if err != nil {
		return sso.Identity{}, err
	}
	tok, err := cfg.Exchange(gooidc.ClientContext(ctx, f.v.s.client), code, oauth2.VerifierOption(st.Verifier))
	if err != nil {
		return sso.Identity{}, exchangeErr(err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		return sso.Identity{}, fail(ReasonExchange, "the token response has no id_token", nil)
	}
	return f.v.verifyNonce(ctx, raw, st.Nonce)
}

// open unseals and checks the cookie value.
func (f *Flow) open(cookieValue string) (flowState, error) {
	var st flowState
	if cookieValue == "" || len(cookieValue) > maxCookieLen {
		return st, fail(ReasonFlowCookie, "it is missing", nil)
	}
	sealed, err := base64.RawURLEncoding.DecodeString(cookieValue)
	if err != nil {
		return st, fail(ReasonFlowCookie, "", err)
	}
	plain, err := f.sealer.Open(sealed, f.aad)
	if err != nil {
		return st, fail(ReasonFlowCookie, "", err)
	}
	if err := json.Unmarshal(plain, &st); err != nil || st.State == "" || st.Nonce == "" || st.Verifier == "" {
		return flowState{}, fail(ReasonFlowCookie, "", err)
	}
	if !f.v.s.now().Before(time.Unix(st.Expires, 0)) {
		return flowState{}, fail(ReasonFlowCookie, "it has expired", nil)
	}
	return st, nil
}

// oauth is the OAuth 2 client configuration from the discovery document.
func (f *Flow) oauth(ctx context.Context) (*oauth2.Config, error) {
	m, err := f.v.disc.get(ctx)
	if err != nil {
		return nil, err
	}
	ep := m.provider.Endpoint()
	for _, u := range []string{ep.AuthURL, ep.TokenURL} {
		if err := checkURL(u); err != nil {
			return nil, fail(ReasonDiscovery, "its authorization or token endpoint "+err.Error(), nil)
		}
	}
	ep.AuthStyle = m.authStyle
	if f.secret == "" {
		ep.AuthStyle = oauth2.AuthStyleInParams // client_id only, no empty Basic password
	}
	return &oauth2.Config{ClientID: f.v.s.clientID, ClientSecret: f.secret, Endpoint: ep,
		RedirectURL: f.redirect, Scopes: f.scopes}, nil
}

// exchangeErr classifies a token endpoint failure: the IdP refusing the
// grant (4xx, but not our client credentials) is the caller's code; the
// rest is the IdP's or our configuration's, a 502.
func exchangeErr(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) && re.Response != nil {
		status := re.Response.StatusCode
		clientProblem := re.ErrorCode == "invalid_client" || re.ErrorCode == "unauthorized_client"
		if status >= 400 && status < 500 && !clientProblem {
			return fail(ReasonCode, fmt.Sprintf("the identity provider answered %q", clip(re.ErrorCode)), err)
		}
		if clientProblem {
			return fail(ReasonExchange, "the identity provider refused svc's client credentials (check OIDC_CLIENT_SECRET)", err)
		}
		return fail(ReasonExchange, fmt.Sprintf("the token endpoint answered %d", status), err)
	}
	return fail(ReasonExchange, "", err)
}

// randomToken is 32 random bytes, base64url.
func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it panics instead)
	return base64.RawURLEncoding.EncodeToString(b[:])
}
