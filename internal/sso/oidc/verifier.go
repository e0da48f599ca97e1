package oidc

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"

	"github.com/svc-gateway/svc/internal/sso"
)

// allowedAlgs are the ID token signing algorithms accepted: asymmetric
// only, so never "none" and never HMAC (whose "secret" an attacker would
// take from the public JWKS).
var allowedAlgs = []jose.SignatureAlgorithm{
	jose.RS256, jose.RS384, jose.RS512,
	jose.PS256, jose.PS384, jose.PS512,
	jose.ES256, jose.ES384, jose.ES512,
	jose.EdDSA,
}

func allowedAlg(alg string) bool {
	return slices.Contains(allowedAlgs, jose.SignatureAlgorithm(alg))
}

// Verifier verifies OIDC ID tokens of one identity provider and client into
// an sso.Identity. It is safe for concurrent use; build one per
// configuration and keep it, since it caches the discovery document and the
// JWKS.
//
// The checks, in order: size (MaxTokenBytes) and compact form; the
// algorithm allow-list; the signature with go-oidc's IDTokenVerifier over
// this package's JWKS cache (refetched on an unknown kid at most once per
// RefreshFloor); iss exactly the issuer; the client id in aud (and, with
// several audiences, azp equal to it); exp and nbf with the skew; the
// identity claims. Each refusal is a typed *apierr.Error (see the Reason
// constants) that never carries the token.
type Verifier struct {
	s    settings
	disc *discovery
	keys *keySet
	idv  *gooidc.IDTokenVerifier
}

// NewVerifier validates cfg (an InvalidRequest *apierr.Error naming the bad
// field) and returns a Verifier. It does no I/O: discovery and the JWKS are
// fetched on first use.
func NewVerifier(cfg Config) (*Verifier, error) {
	s, err := cfg.settings()
	if err != nil {
		return nil, err
	}
	v := &Verifier{s: s, disc: &discovery{issuer: s.issuer, client: s.client, now: s.now, floor: s.floor}}
	v.keys = &keySet{fetch: v.fetchKeys, now: s.now, floor: s.floor}
	algs := make([]string, len(allowedAlgs))
	for i, a := range allowedAlgs {
		algs[i] = string(a)
	}
	v.idv = gooidc.NewVerifier(s.issuer, traceKeySet{v.keys}, &gooidc.Config{
		ClientID:             s.clientID,
		SupportedSigningAlgs: algs,
		SkipExpiryCheck:      true, // checked below with the skew (go-oidc: none on exp, 5 min on nbf)
		Now:                  s.now,
	})
	return v, nil
}

// Issuer is the issuer tokens must name (after the tenant rule).
func (v *Verifier) Issuer() string { return v.s.issuer }

// Method is the identity method label, "oidc:<idp>".
func (v *Verifier) Method() string { return sso.MethodOIDC + ":" + v.s.idp }

// JWKSURI is the configured JWKS address, or the discovery document's (a
// ReasonDiscovery error when it cannot be had).
func (v *Verifier) JWKSURI(ctx context.Context) (string, error) {
	if v.s.jwksURI != "" {
		return v.s.jwksURI, nil
	}
	m, err := v.disc.get(ctx)
	if err != nil {
		return "", err
	}
	if err := checkURL(m.jwksURI); err != nil {
		return "", fail(ReasonDiscovery, "its jwks_uri "+err.Error(), nil)
	}
	return m.jwksURI, nil
}

func (v *Verifier) fetchKeys(ctx context.Context) ([]jose.JSONWebKey, error) {
	uri, err := v.JWKSURI(ctx)
	if err != nil {
		return nil, err
	}
	return fetchJWKS(ctx, v.s.client, uri)
}

// Verify verifies a raw ID token (the credential of "Authorization: Bearer")
// and returns whom it names.
func (v *Verifier) Verify(ctx context.Context, rawIDToken string) (sso.Identity, error) {
	c, err := v.check(ctx, rawIDToken)
	if err != nil {
		return sso.Identity{}, err
	}
	return c.identity(v.Method())
}

// verifyNonce is Verify for the browser flow: the token's nonce must be the
// flow's.
func (v *Verifier) verifyNonce(ctx context.Context, rawIDToken, nonce string) (sso.Identity, error) {
	c, err := v.check(ctx, rawIDToken)
	if err != nil {
		return sso.Identity{}, err
	}
	if nonce == "" || subtle.ConstantTimeCompare([]byte(c.Nonce), []byte(nonce)) != 1 {
		return sso.Identity{}, fail(ReasonNonce, "", nil)
	}
	return c.identity(v.Method())
}

// check runs every check but the identity's and returns the claims.
func (v *Verifier) check(ctx context.Context, raw string) (*claims, error) {
	jws, err := parseToken(raw)
	if err != nil {
		return nil, err
	}
	t := &trace{raw: raw, jws: jws}
	if _, err := v.idv.Verify(context.WithValue(ctx, traceKey{}, t), raw); err != nil {
		return nil, v.classify(t, err)
	}
	c, err := decodeClaims(t.payload)
	if err != nil {
		return nil, err
	}
	if err := v.checkClaims(c); err != nil {
		return nil, err
	}
	return c, nil
}

// classify turns a go-oidc refusal into the failed check, from typed facts
// (the key set's own error, or the verified claims), never its message.
func (v *Verifier) classify(t *trace, err error) error {
	if t.err != nil {
		return t.err
	}
	if t.payload == nil {
		return fail(ReasonMalformed, "", err)
	}
	c, derr := decodeClaims(t.payload)
	if derr != nil {
		return derr
	}
	if cerr := v.checkClaims(c); cerr != nil {
		return cerr
	}
	return fail(ReasonMalformed, "", err)
}

// checkClaims checks iss, aud (and azp), exp and nbf of verified claims.
func (v *Verifier) checkClaims(c *claims) error {
	now := v.s.now()
	switch {
	case c.Issuer != v.s.issuer:
		return fail(ReasonIssuer, fmt.Sprintf("expected %q, got %q", v.s.issuer, clip(c.Issuer)), nil)
	case !slices.Contains(c.Audience, v.s.clientID):
		return fail(ReasonAudience, fmt.Sprintf("expected %q", v.s.clientID), nil)
	case len(c.Audience) > 1 && c.AuthorizedParty != v.s.clientID:
		return fail(ReasonAudience, fmt.Sprintf("several audiences and azp is not %q", v.s.clientID), nil)
	case c.Expiry == nil:
		return fail(ReasonMalformed, "it has no exp", nil)
	case now.After(c.Expiry.Add(v.s.skew)):
		return fail(ReasonExpired, "at "+c.Expiry.UTC().Format("2006-01-02T15:04:05Z"), nil)
	case c.NotBefore != nil && now.Add(v.s.skew).Before(c.NotBefore.Time):
		return fail(ReasonNotYetValid, "before "+c.NotBefore.UTC().Format("2006-01-02T15:04:05Z"), nil)
	}
	return nil
}

// parseToken checks the size, the compact form and the algorithm, and
// parses the JWS with go-jose restricted to the allow-list.
func parseToken(raw string) (*jose.JSONWebSignature, error) {
	if raw == "" {
		return nil, fail(ReasonMalformed, "it is empty", nil)
	}
	if len(raw) > MaxTokenBytes {
		return nil, fail(ReasonMalformed, fmt.Sprintf("it is over %d bytes", MaxTokenBytes), nil)
	}
	if strings.Count(raw, ".") != 2 {
		return nil, fail(ReasonMalformed, "it is not a compact JWS", nil)
	}
	hdrJSON, err := base64.RawURLEncoding.Strict().DecodeString(raw[:strings.IndexByte(raw, '.')])
	if err != nil {
		return nil, fail(ReasonMalformed, "its header is not base64url", nil)
	}
	var hdr struct {
		Alg string `json:"alg"`
	}
	if err := json.Unmarshal(hdrJSON, &hdr); err != nil {
		return nil, fail(ReasonMalformed, "its header is not a JSON object", nil)
	}
	if !allowedAlg(hdr.Alg) {
		return nil, fail(ReasonAlgorithm, fmt.Sprintf("%q is not one of the asymmetric algorithms allowed", clip(hdr.Alg)), nil)
	}
	jws, err := jose.ParseSignedCompact(raw, allowedAlgs)
	if err != nil {
		return nil, fail(ReasonMalformed, "", err)
	}
	if len(jws.Signatures) != 1 {
		return nil, fail(ReasonMalformed, "it must have exactly one signature", nil)
	}
	return jws, nil
}

// trace carries one verification through go-oidc to the key set and back:
// the parsed JWS in, the verified payload or the typed error out.
type trace struct {
	raw     string
	jws     *jose.JSONWebSignature
	payload []byte
	err     error
}

type traceKey struct{}

// traceKeySet is the go-oidc KeySet over keySet.
type traceKeySet struct{ keys *keySet }

// VerifySignature implements gooidc.KeySet for the trace in ctx only.
func (a traceKeySet) VerifySignature(ctx context.Context, jwt string) ([]byte, error) {
	t, _ := ctx.Value(traceKey{}).(*trace)
	if t == nil || t.raw != jwt {
		return nil, errNoTrace
	}
	t.payload, t.err = a.keys.verify(ctx, t.jws)
	return t.payload, t.err
}
