package oidc

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/secret"
	"github.com/svc-gateway/svc/internal/sso"
)

// The sign-in routes' method ports.
var (
	_ sso.IDTokens    = (*Verifier)(nil)
	_ sso.BrowserFlow = (*Flow)(nil)
)

const redirectURI = "https://svc.example/api/auth/sso/callback"

func testSealer(seed byte) *secret.Sealer {
	var k secret.MasterKey
	for i := range k {
		k[i] = seed + byte(i)
	}
	return secret.NewSealer(k)
}

func newFlow(t *testing.T, idp *fakeIdP, sealer *secret.Sealer, secretValue string) *Flow {
	t.Helper()
	f, err := NewFlow(FlowConfig{Verifier: idp.verifier(t, nil), ClientSecret: secretValue,
		RedirectURI: redirectURI, Sealer: sealer})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// browse follows authURL like a browser that signs in at once, and returns
// the callback's code and state.
func browse(t *testing.T, idp *fakeIdP, authURL string) (code, state string) {
	t.Helper()
	c := *idp.srv.Client()
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := c.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Fatalf("authorize answered %d", resp.StatusCode)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || !strings.HasPrefix(loc.String(), redirectURI+"?") {
		t.Fatalf("redirected to %q", resp.Header.Get("Location"))
	}
	return loc.Query().Get("code"), loc.Query().Get("state")
}

func TestFlowEndToEnd(t *testing.T) {
	clock := newClock()
	idp := newFakeIdP(t, clock)
	sealer := testSealer(1)
	f := newFlow(t, idp, sealer, idp.secret)
	ctx := context.Background()
	authURL, cookie, err := f.StartContext(ctx)
	if err != nil {
		t.Fatal(err)
	}
	q := mustQuery(t, authURL)
	for k, want := range map[string]string{"response_type": "code", "client_id": idp.clientID,
		"redirect_uri": redirectURI, "code_challenge_method": "S256"} {
		if q.Get(k) != want {
			t.Fatalf("%s=%q, want %q", k, q.Get(k), want)
		}
	}
	if !strings.Contains(q.Get("scope"), "openid") || len(q.Get("state")) < 32 || len(q.Get("nonce")) < 32 ||
		q.Get("code_challenge") == "" {
		t.Fatalf("authorize parameters %v", q)
	}
	for _, v := range []string{q.Get("state"), q.Get("nonce")} {
		if strings.Contains(cookie, v) {
			t.Fatal("the cookie shows the state or nonce in the clear")
		}
	}
	code, state := browse(t, idp, authURL)

	// Another replica (same master key, its own Verifier) finishes the flow.
	other := newFlow(t, idp, testSealer(1), idp.secret)
	id, err := other.Finish(ctx, code, state, cookie)
	if err != nil {
		t.Fatal(err)
	}
	if id.Username != "alice" || id.Method != "oidc:127.0.0.1" || len(id.Groups) != 2 {
		t.Fatalf("identity %+v", id)
	}

	// The code is spent: the IdP refuses it again (400).
	_, err = f.Finish(ctx, code, state, cookie)
	wantReason(t, err, ReasonCode, http.StatusBadRequest, "")
	if !strings.Contains(apierr.From(err).Message, "invalid_grant") {
		t.Fatalf("message %q does not say the IdP refused the grant", apierr.From(err).Message)
	}
}

func mustQuery(t *testing.T, raw string) url.Values {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

// TestFlowRefusals: each way a callback can be wrong is refused by the
// check that names it, before the code is spent where it can be.
func TestFlowRefusals(t *testing.T) {
	clock := newClock()
	idp := newFakeIdP(t, clock)
	f := newFlow(t, idp, testSealer(1), idp.secret)
	ctx := context.Background()
	start := func() (code, state, cookie string) {
		authURL, cookie, err := f.StartContext(ctx)
		if err != nil {
			t.Fatal(err)
		}
		code, state = browse(t, idp, authURL)
		return code, state, cookie
	}

	t.Run("state mismatch", func(t *testing.T) {
		code, _, cookie := start()
		_, state2, _ := start()
		before := idp.tokenHits.Load()
		_, err := f.Finish(ctx, code, state2, cookie)
		wantReason(t, err, ReasonState, http.StatusBadRequest, "")
		if idp.tokenHits.Load() != before {
			t.Fatal("the code was exchanged despite the state mismatch")
		}
		_, err = f.Finish(ctx, code, "", cookie)
		wantReason(t, err, ReasonState, http.StatusBadRequest, "")
	})
	t.Run("PKCE verifier of another flow", func(t *testing.T) {
		code1, _, _ := start()
		_, state2, cookie2 := start()
		// The attacker's own flow cookie and state, with the victim's code:
		// the token endpoint sees the wrong verifier.
		_, err := f.Finish(ctx, code1, state2, cookie2)
		wantReason(t, err, ReasonCode, http.StatusBadRequest, "")
	})
	t.Run("nonce mismatch", func(t *testing.T) {
		code, state, cookie := start()
		idp.mu.Lock()
		idp.nonceFor = func(string) string { return "nonce-of-another-sign-in" }
		idp.mu.Unlock()
		defer func() { idp.mu.Lock(); idp.nonceFor = func(n string) string { return n }; idp.mu.Unlock() }()
		_, err := f.Finish(ctx, code, state, cookie)
		wantReason(t, err, ReasonNonce, http.StatusUnauthorized, "")
	})
	t.Run("ID token refused like Verify", func(t *testing.T) {
		code, state, cookie := start()
		idp.mu.Lock()
		idp.current = rs256("k1", rsaAttacker)
		idp.mu.Unlock()
		defer func() { idp.mu.Lock(); idp.current = rs256("k1", rsaKey1); idp.mu.Unlock() }()
		_, err := f.Finish(ctx, code, state, cookie)
		wantReason(t, err, ReasonSignature, http.StatusUnauthorized, "")
	})
	t.Run("missing code", func(t *testing.T) {
		_, state, cookie := start()
		_, err := f.Finish(ctx, "", state, cookie)
		wantReason(t, err, ReasonCode, http.StatusBadRequest, "")
	})
	t.Run("cookie expired", func(t *testing.T) {
		code, state, cookie := start()
		clock.advance(DefaultFlowTTL)
		defer clock.advance(-DefaultFlowTTL)
		_, err := f.Finish(ctx, code, state, cookie)
		wantReason(t, err, ReasonFlowCookie, http.StatusBadRequest, "")
	})
	t.Run("cookie forged or foreign", func(t *testing.T) {
		code, state, cookie := start()
		stranger := newFlow(t, idp, testSealer(2), idp.secret) // another master key
		_, foreign, _ := stranger.StartContext(ctx)
		flipped := []byte(cookie)
		flipped[len(flipped)/2] ^= 'A' ^ 'B'
		for name, c := range map[string]string{"missing": "", "garbage": "!!", "tampered": string(flipped),
			"other key": foreign, "huge": strings.Repeat("A", maxCookieLen+1)} {
			_, err := f.Finish(ctx, code, state, c)
			if ReasonOf(err) != ReasonFlowCookie || apierr.From(err).Status() != http.StatusBadRequest {
				t.Fatalf("%s cookie: %v", name, err)
			}
		}
	})
	t.Run("wrong client secret", func(t *testing.T) {
		bad := newFlow(t, idp, testSealer(1), "not-the-secret")
		authURL, cookie, err := bad.Start()
		if err != nil {
			t.Fatal(err)
		}
		code, state := browse(t, idp, authURL)
		_, err = bad.Finish(ctx, code, state, cookie)
		wantReason(t, err, ReasonExchange, http.StatusBadGateway, "")
	})
}

func TestFlowDiscoveryDown(t *testing.T) {
	clock := newClock()
	idp := newFakeIdP(t, clock)
	f := newFlow(t, idp, testSealer(1), idp.secret)
	idp.srv.Close()
	_, _, err := f.Start()
	wantReason(t, err, ReasonDiscovery, http.StatusBadGateway, "")
}

func TestFlowConfig(t *testing.T) {
	idp := newFakeIdP(t, newClock())
	v := idp.verifier(t, nil)
	for _, tc := range []struct {
		name string
		cfg  FlowConfig
	}{
		{"no redirect", FlowConfig{Verifier: v, Sealer: testSealer(1)}},
		{"http redirect", FlowConfig{Verifier: v, Sealer: testSealer(1), RedirectURI: "http://svc.example/cb"}},
		{"ttl too long", FlowConfig{Verifier: v, Sealer: testSealer(1), RedirectURI: redirectURI, TTL: 2 * time.Hour}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewFlow(tc.cfg)
			var e *apierr.Error
			if !errors.As(err, &e) || e.Kind != apierr.InvalidRequest {
				t.Fatalf("err %v, want a 400", err)
			}
		})
	}
	if _, err := NewFlow(FlowConfig{Verifier: v, RedirectURI: redirectURI}); err == nil {
		t.Fatal("a Flow without a Sealer")
	}
}
