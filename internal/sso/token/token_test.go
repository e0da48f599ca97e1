package token_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/sso/token"
)

var alice = token.User{Username: "alice", Email: "alice@example.com", Groups: []string{"eng", "svc-Admins"},
	Department: "R&D", Name: "Alice A", Method: "oidc:login.example.com"}

func key(t testing.TB, b byte) token.Key {
	k, err := token.NewKey([]byte(strings.Repeat(string(rune('a'+b)), 40)))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func signer(t testing.TB, o token.Options) *token.Signer {
	s, err := token.New(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func reason(err error) string {
	var e *token.Error
	if errors.As(err, &e) {
		return e.Reason
	}
	return ""
}

func TestMintVerify(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	s := signer(t, token.Options{Current: key(t, 0), TTL: time.Hour, Now: c.now})
	raw, minted, err := s.Mint(alice, []string{"admin", "user"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.Verify(context.Background(), raw)
	if err != nil {
		t.Fatal(err)
	}
	if got.Subject != "alice" || got.Username != "alice" || got.Groups != "eng,svc-Admins" || !got.HasRole("admin") ||
		got.AuthMethod != alice.Method || got.Department != "R&D" || got.ID != minted.ID || got.ExpiresAt.Unix() != c.t.Add(time.Hour).Unix() {
		t.Errorf("claims %+v", got)
	}
	if g := got.GroupList(); len(g) != 2 || g[1] != "svc-Admins" {
		t.Errorf("groups %v", g)
	}
	// Within the leeway, then past it.
	c.t = c.t.Add(time.Hour + 20*time.Second)
	if _, err := s.Verify(context.Background(), raw); err != nil {
		t.Errorf("20 s past expiry (leeway 30 s): %v", err)
	}
	c.t = c.t.Add(time.Minute)
	if _, err := s.Verify(context.Background(), raw); reason(err) != token.ReasonExpired {
		t.Errorf("expired: %v", err)
	}
}

// forge signs claims with method and key, kid set.
func forge(t *testing.T, m jwt.SigningMethod, k any, kid string, edit func(*jwt.MapClaims)) string {
	now := time.Unix(1_800_000_000, 0)
	c := jwt.MapClaims{"sub": "mallory", "username": "mallory", "roles": []string{"admin", "user"}, "auth_method": "x",
		"iss": token.Issuer, "aud": token.Audience, "iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(time.Hour).Unix(), "jti": "j1"}
	if edit != nil {
		edit(&c)
	}
	tk := jwt.NewWithClaims(m, c)
	tk.Header["kid"] = kid
	s, err := tk.SignedString(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestAttacks(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	k := key(t, 0)
	s := signer(t, token.Options{Current: k, Now: c.now})
	secret := []byte(strings.Repeat("a", 40))
	rsaKey, _ := rsa.GenerateKey(rand.Reader, 2048)
	valid := forge(t, jwt.SigningMethodHS256, secret, k.ID, nil)
	if _, err := s.Verify(context.Background(), valid); err != nil {
		t.Fatalf("the forge helper's valid token: %v", err)
	}
	parts := strings.Split(valid, ".")
	none := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"none","typ":"JWT","kid":"`+k.ID+`"}`)) + "." + parts[1] + "."
	tampered := parts[0] + "." + base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"root","username":"root","roles":["admin"],"iss":"svc","aud":"svc","exp":1900000000,"iat":1800000000,"jti":"x"}`)) + "." + parts[2]
	for name, c := range map[string]struct {
		raw, want string
	}{
		"alg none":             {none, token.ReasonSignature},
		"HS384 with the key":   {forge(t, jwt.SigningMethodHS384, secret, k.ID, nil), token.ReasonSignature},
		"RS256 of another key": {forge(t, jwt.SigningMethodRS256, rsaKey, k.ID, nil), token.ReasonSignature},
		"another secret":       {forge(t, jwt.SigningMethodHS256, []byte(strings.Repeat("z", 40)), k.ID, nil), token.ReasonSignature},
		"unknown kid":          {forge(t, jwt.SigningMethodHS256, secret, "feedfeedfeedfeed", nil), token.ReasonSignature},
		"tampered payload":     {tampered, token.ReasonSignature},
		"wrong issuer":         {forge(t, jwt.SigningMethodHS256, secret, k.ID, func(m *jwt.MapClaims) { (*m)["iss"] = "evil" }), token.ReasonIssuer},
		"wrong audience":       {forge(t, jwt.SigningMethodHS256, secret, k.ID, func(m *jwt.MapClaims) { (*m)["aud"] = "other" }), token.ReasonAudience},
		"no expiry":            {forge(t, jwt.SigningMethodHS256, secret, k.ID, func(m *jwt.MapClaims) { delete(*m, "exp") }), token.ReasonMalformed},
		"not yet valid":        {forge(t, jwt.SigningMethodHS256, secret, k.ID, func(m *jwt.MapClaims) { (*m)["nbf"] = c.t.Add(time.Hour).Unix() }), token.ReasonNotYetValid},
		"sub differs":          {forge(t, jwt.SigningMethodHS256, secret, k.ID, func(m *jwt.MapClaims) { (*m)["sub"] = "root" }), token.ReasonMalformed},
		"garbage":              {"a.b.c", token.ReasonMalformed},
		"too long":             {strings.Repeat("a", token.MaxTokenLen+1), token.ReasonMalformed},
	} {
		if _, err := s.Verify(context.Background(), c.raw); reason(err) != c.want {
			t.Errorf("%s: %v, want %s", name, err, c.want)
		}
	}
}

func TestRotation(t *testing.T) {
	old, cur := key(t, 1), key(t, 2)
	before := signer(t, token.Options{Current: old})
	raw, _, err := before.Mint(alice, []string{"user"})
	if err != nil {
		t.Fatal(err)
	}
	after := signer(t, token.Options{Current: cur, Previous: []token.Key{old}})
	if _, err := after.Verify(context.Background(), raw); err != nil {
		t.Errorf("a token of the previous key: %v", err)
	}
	dropped := signer(t, token.Options{Current: cur})
	if _, err := dropped.Verify(context.Background(), raw); reason(err) != token.ReasonSignature {
		t.Errorf("a token of a dropped key: %v", err)
	}
	if _, err := token.NewKey([]byte("short")); err == nil {
		t.Error("a short key was taken")
	}
}

type revocations struct {
	jti    string
	before time.Time
	err    error
}

func (r revocations) Revoked(_ context.Context, _ string, jti string, iat time.Time) (bool, error) {
	return jti == r.jti || iat.Before(r.before), r.err
}

func TestRevoked(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	k := key(t, 3)
	raw, claims, _ := signer(t, token.Options{Current: k, Now: c.now}).Mint(alice, []string{"user"})
	for name, tc := range map[string]struct {
		r    revocations
		want string
	}{
		"by jti":          {revocations{jti: claims.ID}, token.ReasonRevoked},
		"user's earlier":  {revocations{before: c.t.Add(time.Second)}, token.ReasonRevoked},
		"user's later":    {revocations{before: c.t.Add(-time.Second)}, ""},
		"list unreadable": {revocations{err: errors.New("db down")}, token.ReasonUnavailable},
	} {
		_, err := signer(t, token.Options{Current: k, Now: c.now, Revoked: tc.r}).Verify(context.Background(), raw)
		if reason(err) != tc.want {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
		var e *token.Error
		if errors.As(err, &e) && tc.want == token.ReasonUnavailable && e.API().Status() != 503 {
			t.Errorf("%s: status %d, want 503 (never accepted unchecked)", name, e.API().Status())
		}
	}
}

func TestLooksLikeJWT(t *testing.T) {
	raw, _, _ := signer(t, token.Options{Current: key(t, 4)}).Mint(alice, nil)
	for s, want := range map[string]bool{raw: true, "sk-svc-abc.def.ghi": false, "a.b": false, "aaaaaaaaaa.bbbbbbbbbb.cc": true, "aaaaaaaaaa.bbb bbbbbb.cc": false} {
		if token.LooksLikeJWT(s) != want {
			t.Errorf("LooksLikeJWT(%q) = %v", s, !want)
		}
	}
}

func BenchmarkVerify(b *testing.B) {
	s := signer(b, token.Options{Current: key(b, 5)})
	raw, _, _ := s.Mint(alice, []string{"admin", "user"})
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Verify(ctx, raw); err != nil {
			b.Fatal(err)
		}
	}
}

// mutableRevocations revokes a jti once told to.
type mutableRevocations struct{ jti string }

func (r *mutableRevocations) Revoked(_ context.Context, _ string, jti string, _ time.Time) (bool, error) {
	return jti == r.jti, nil
}

// TestRememberedStillChecked: a token verified before is still refused once
// revoked, and once expired.
func TestRememberedStillChecked(t *testing.T) {
	c := &clock{time.Unix(1_800_000_000, 0)}
	r := &mutableRevocations{}
	s := signer(t, token.Options{Current: key(t, 6), Now: c.now, Revoked: r, TTL: time.Minute})
	raw, claims, _ := s.Mint(alice, []string{"user"})
	if _, err := s.Verify(context.Background(), raw); err != nil {
		t.Fatal(err)
	}
	r.jti = claims.ID
	if _, err := s.Verify(context.Background(), raw); reason(err) != token.ReasonRevoked {
		t.Errorf("a remembered token after its revocation: %v", err)
	}
	r.jti = ""
	c.t = c.t.Add(2 * time.Minute)
	if _, err := s.Verify(context.Background(), raw); reason(err) != token.ReasonExpired {
		t.Errorf("a remembered token after its expiry: %v", err)
	}
}

func BenchmarkVerifyFirst(b *testing.B) {
	s := signer(b, token.Options{Current: key(b, 7)})
	toks := make([]string, 1000)
	for i := range toks {
		toks[i], _, _ = s.Mint(alice, []string{"user"})
	}
	ctx := context.Background()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		// A fresh Signer sees each token for the first time.
		if i%len(toks) == 0 {
			s = signer(b, token.Options{Current: key(b, 7)})
		}
		if _, err := s.Verify(ctx, toks[i%len(toks)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// TestMintRefusesOversizedTokens: an identity with so many groups that its
// token would pass MaxTokenLen is refused at sign-in (400), not handed a
// token Verify refuses on every request.
func TestMintRefusesOversizedTokens(t *testing.T) {
	s := signer(t, token.Options{Current: key(t, 0), TTL: time.Hour})
	many := alice
	for i := range 600 {
		many.Groups = append(many.Groups, fmt.Sprintf("S-1-5-21-1004336348-1177238915-682003330-%d", 10000+i))
	}
	_, _, err := s.Mint(many, nil)
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Status() != 400 || ae.Code != "token_too_large" {
		t.Fatalf("Mint with %d groups: %v, want 400 token_too_large", len(many.Groups), err)
	}
	if raw, _, err := s.Mint(alice, nil); err != nil || len(raw) > token.MaxTokenLen {
		t.Fatalf("an ordinary identity: %d bytes, %v", len(raw), err)
	}
}
