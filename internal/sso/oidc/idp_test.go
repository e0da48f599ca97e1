package oidc

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
)

// Test keys are generated once per process: RSA generation is slow.
var (
	keysOnce         sync.Once
	rsaKey1, rsaKey2 *rsa.PrivateKey
	rsaAttacker      *rsa.PrivateKey
	ecKey            *ecdsa.PrivateKey
)

func testKeys(t testing.TB) {
	t.Helper()
	keysOnce.Do(func() {
		rsaKey1 = mustRSA()
		rsaKey2 = mustRSA()
		rsaAttacker = mustRSA()
		var err error
		if ecKey, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader); err != nil {
			panic(err)
		}
	})
}

func mustRSA() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

// signer is a key the fake IdP signs with (and publishes, when listed).
type signer struct {
	kid    string
	method jwt.SigningMethod
	priv   crypto.Signer
	jwkAlg string // the JWK's alg ("" publishes none)
}

func rs256(kid string, k *rsa.PrivateKey) signer {
	return signer{kid: kid, method: jwt.SigningMethodRS256, priv: k, jwkAlg: "RS256"}
}

// sign mints a token with s over claims; extra header fields are added.
func (s signer) sign(t testing.TB, claims jwt.MapClaims, header map[string]any) string {
	t.Helper()
	tok := jwt.NewWithClaims(s.method, claims)
	if s.kid != "" {
		tok.Header["kid"] = s.kid
	}
	for k, v := range header {
		tok.Header[k] = v
	}
	raw, err := tok.SignedString(s.priv)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// testClock is a settable clock.
type testClock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *testClock { return &testClock{t: time.Unix(1_800_000_000, 0)} }

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// grant is an authorization code the fake IdP issued.
type grant struct {
	nonce, challenge, redirect string
	used                       bool
}

// fakeIdP is a local OIDC issuer: discovery, JWKS, an authorize endpoint
// that redirects with a code, and a token endpoint that checks the client
// secret, the redirect URI, PKCE (S256) and single use of codes.
type fakeIdP struct {
	t        testing.TB
	srv      *httptest.Server
	issuer   string // what discovery and tokens name
	clientID string
	secret   string
	clock    *testClock

	jwksHits, discHits, tokenHits atomic.Int32
	jwksStatus                    atomic.Int32 // 0: 200
	jwksBody                      atomic.Pointer[[]byte]

	mu        sync.Mutex
	published []signer // in the JWKS
	current   signer   // signs the flow's ID tokens
	grants    map[string]*grant
	nonceFor  func(string) string // the nonce put in the flow's ID token
	docExtra  map[string]any
}

func newFakeIdP(t testing.TB, clock *testClock) *fakeIdP {
	t.Helper()
	testKeys(t)
	idp := &fakeIdP{t: t, clientID: "svc-client", secret: "s3cret-value", clock: clock,
		grants: map[string]*grant{}, nonceFor: func(n string) string { return n }}
	idp.current = rs256("k1", rsaKey1)
	idp.published = []signer{idp.current}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /.well-known/openid-configuration", idp.discovery)
	mux.HandleFunc("GET /jwks", idp.jwks)
	mux.HandleFunc("GET /authorize", idp.authorize)
	mux.HandleFunc("POST /token", idp.token)
	idp.srv = httptest.NewTLSServer(mux)
	t.Cleanup(idp.srv.Close)
	idp.issuer = idp.srv.URL
	return idp
}

func (idp *fakeIdP) publish(keys ...signer) {
	idp.mu.Lock()
	idp.published = keys
	idp.mu.Unlock()
}

func (idp *fakeIdP) discovery(w http.ResponseWriter, _ *http.Request) {
	idp.discHits.Add(1)
	doc := map[string]any{
		"issuer":                                idp.issuer,
		"authorization_endpoint":                idp.srv.URL + "/authorize",
		"token_endpoint":                        idp.srv.URL + "/token",
		"jwks_uri":                              idp.srv.URL + "/jwks",
		"id_token_signing_alg_values_supported": []string{"RS256", "ES256", "PS256"},
		"token_endpoint_auth_methods_supported": []string{"client_secret_basic"},
	}
	idp.mu.Lock()
	for k, v := range idp.docExtra {
		doc[k] = v
	}
	idp.mu.Unlock()
	writeJSON(w, http.StatusOK, doc)
}

func (idp *fakeIdP) jwks(w http.ResponseWriter, _ *http.Request) {
	idp.jwksHits.Add(1)
	if s := idp.jwksStatus.Load(); s != 0 {
		http.Error(w, "down", int(s))
		return
	}
	if b := idp.jwksBody.Load(); b != nil {
		_, _ = w.Write(*b)
		return
	}
	idp.mu.Lock()
	set := jose.JSONWebKeySet{}
	for _, s := range idp.published {
		set.Keys = append(set.Keys, jose.JSONWebKey{Key: s.priv.Public(), KeyID: s.kid, Algorithm: s.jwkAlg, Use: "sig"})
	}
	idp.mu.Unlock()
	writeJSON(w, http.StatusOK, set)
}

func (idp *fakeIdP) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	if q.Get("response_type") != "code" || q.Get("client_id") != idp.clientID ||
		q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" || q.Get("state") == "" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	code := rand.Text()
	idp.mu.Lock()
	idp.grants[code] = &grant{nonce: q.Get("nonce"), challenge: q.Get("code_challenge"), redirect: q.Get("redirect_uri")}
	idp.mu.Unlock()
	to, _ := url.Parse(q.Get("redirect_uri"))
	v := url.Values{"code": {code}, "state": {q.Get("state")}}
	to.RawQuery = v.Encode()
	http.Redirect(w, r, to.String(), http.StatusFound)
}

func (idp *fakeIdP) token(w http.ResponseWriter, r *http.Request) {
	idp.tokenHits.Add(1)
	user, pass, ok := r.BasicAuth()
	if !ok || user != idp.clientID || pass != idp.secret {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "authorization_code" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	idp.mu.Lock()
	g := idp.grants[r.PostForm.Get("code")]
	refuse := g == nil || g.used || g.redirect != r.PostForm.Get("redirect_uri") ||
		oauth2Challenge(r.PostForm.Get("code_verifier")) != g.challenge
	if g != nil {
		g.used = true // a code is spent even by a failed attempt
	}
	signWith, nonceFor := idp.current, idp.nonceFor
	idp.mu.Unlock()
	if refuse {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant"})
		return
	}
	claims := idp.claims()
	claims["nonce"] = nonceFor(g.nonce)
	writeJSON(w, http.StatusOK, map[string]any{"access_token": "at-123", "token_type": "Bearer",
		"expires_in": 3600, "id_token": signWith.sign(idp.t, claims, nil)})
}

// oauth2Challenge is the S256 PKCE challenge of verifier (RFC 7636).
func oauth2Challenge(verifier string) string {
	if verifier == "" {
		return "no verifier sent"
	}
	sum := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// claims are a valid ID token's claims at the clock's time.
func (idp *fakeIdP) claims() jwt.MapClaims {
	now := idp.clock.now()
	return jwt.MapClaims{
		"iss": idp.issuer, "aud": idp.clientID, "sub": "0001",
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(),
		"email": "alice@corp.example", "name": "Alice Example", "department": "Research",
		"groups": []string{"svc-Admins", "eng"},
	}
}

// verifier is a Verifier for the fake IdP; mod adjusts its config.
func (idp *fakeIdP) verifier(t testing.TB, mod func(*Config)) *Verifier {
	t.Helper()
	cfg := Config{Issuer: idp.issuer, ClientID: idp.clientID, HTTPClient: idp.srv.Client(), Now: idp.clock.now}
	if mod != nil {
		mod(&cfg)
	}
	v, err := NewVerifier(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil {
		panic(fmt.Sprint("encode: ", err))
	}
}
