package oidc

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"
	"golang.org/x/sync/singleflight"
)

// await runs fn once for all concurrent callers of key, on a context that
// outlives any one caller (a caller that goes away does not fail the
// others), and returns its result or the caller's context error.
func await[T any](ctx context.Context, g *singleflight.Group, key string, fn func(context.Context) T) (T, error) {
	bg := context.WithoutCancel(ctx)
	ch := g.DoChan(key, func() (any, error) {
		fctx, cancel := context.WithTimeout(bg, fetchTimeout)
		defer cancel()
		return fn(fctx), nil
	})
	select {
	case <-ctx.Done():
		var zero T
		return zero, ctx.Err()
	case r := <-ch:
		return r.Val.(T), nil
	}
}

// metadata is what svc uses of the discovery document.
type metadata struct {
	provider  *gooidc.Provider
	jwksURI   string
	authStyle oauth2.AuthStyle // of the token endpoint, for a confidential client
}

// discovery fetches the issuer's discovery document once (go-oidc checks its
// issuer is exactly ours); a failure is retried no sooner than the floor.
type discovery struct {
	issuer string
	client *http.Client
	now    func() time.Time
	floor  time.Duration
	group  singleflight.Group

	mu      sync.Mutex
	meta    *metadata
	lastErr error
	triedAt time.Time
}

type discoveryResult struct {
	meta *metadata
	err  error
}

// get returns the discovered metadata or a ReasonDiscovery error.
func (d *discovery) get(ctx context.Context) (*metadata, error) {
	if m, err, done := d.cached(); done {
		return m, err
	}
	r, err := await(ctx, &d.group, "discovery", func(fctx context.Context) discoveryResult {
		if m, err, done := d.cached(); done {
			return discoveryResult{m, err}
		}
		d.mu.Lock()
		d.triedAt = d.now()
		d.mu.Unlock()
		m, err := d.fetch(fctx)
		d.mu.Lock()
		d.meta, d.lastErr = m, err
		d.mu.Unlock()
		return discoveryResult{m, err}
	})
	if err != nil {
		return nil, fail(ReasonDiscovery, "", err)
	}
	return r.meta, r.err
}

// cached is the known answer: the metadata, or the last failure while
// within the floor; done is false when a fetch is due.
func (d *discovery) cached() (*metadata, error, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.meta != nil {
		return d.meta, nil, true
	}
	if d.lastErr != nil && d.now().Sub(d.triedAt) < d.floor {
		return nil, d.lastErr, true
	}
	return nil, nil, false
}

func (d *discovery) fetch(ctx context.Context) (*metadata, error) {
	p, err := gooidc.NewProvider(gooidc.ClientContext(ctx, d.client), d.issuer)
	if err != nil {
		if mm, ok := err.(*gooidc.IssuerMismatchError); ok {
			return nil, fail(ReasonDiscovery, fmt.Sprintf("the document names issuer %q, not %q", mm.Discovered, mm.Provided), err)
		}
		return nil, fail(ReasonDiscovery, "", err)
	}
	var doc struct {
		JWKSURI     string   `json:"jwks_uri"`
		AuthMethods []string `json:"token_endpoint_auth_methods_supported"`
	}
	if err := p.Claims(&doc); err != nil {
		return nil, fail(ReasonDiscovery, "", err)
	}
	return &metadata{provider: p, jwksURI: doc.JWKSURI, authStyle: authStyle(doc.AuthMethods)}, nil
}

// authStyle is how to send the client secret: HTTP Basic (the default of
// the discovery spec) unless the IdP lists only client_secret_post.
func authStyle(methods []string) oauth2.AuthStyle {
	if len(methods) == 0 {
		return oauth2.AuthStyleInHeader
	}
	post := false
	for _, m := range methods {
		switch m {
		case "client_secret_basic":
			return oauth2.AuthStyleInHeader
		case "client_secret_post":
			post = true
		}
	}
	if post {
		return oauth2.AuthStyleInParams
	}
	return oauth2.AuthStyleInHeader
}

// fetchJWKS gets and parses the JWK set at uri: its usable public
// signature keys, skipping those of unknown types or algorithms.
func fetchJWKS(ctx context.Context, client *http.Client, uri string) ([]jose.JSONWebKey, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, uri, nil)
	if err != nil {
		return nil, fail(ReasonJWKSFetch, "", err)
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fail(ReasonJWKSFetch, "", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fail(ReasonJWKSFetch, "", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fail(ReasonJWKSFetch, fmt.Sprintf("the JWKS address answered %d", resp.StatusCode), nil)
	}
	return parseJWKS(body)
}

func parseJWKS(body []byte) ([]jose.JSONWebKey, error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, fail(ReasonJWKSFetch, "the JWKS is not a JWK set", err)
	}
	if len(set.Keys) > maxJWKSKeys {
		return nil, fail(ReasonJWKSFetch, fmt.Sprintf("the JWKS has more than %d keys", maxJWKSKeys), nil)
	}
	keys := make([]jose.JSONWebKey, 0, len(set.Keys))
	for _, raw := range set.Keys {
		if k, ok := usableKey(raw); ok {
			keys = append(keys, k)
		}
	}
	return keys, nil
}

// usableKey parses one JWK and keeps it when it is a public (or the public
// half of a) RSA, EC or Ed25519 key for signatures, of an allowed algorithm
// when it names one. Symmetric keys are never kept.
func usableKey(raw json.RawMessage) (jose.JSONWebKey, bool) {
	var k jose.JSONWebKey
	if err := k.UnmarshalJSON(raw); err != nil || !k.Valid() {
		return jose.JSONWebKey{}, false
	}
	if (k.Use != "" && k.Use != "sig") || (k.Algorithm != "" && !allowedAlg(k.Algorithm)) {
		return jose.JSONWebKey{}, false
	}
	pub := k.Public()
	switch pub.Key.(type) {
	case *rsa.PublicKey, *ecdsa.PublicKey, ed25519.PublicKey:
		return pub, true
	}
	return jose.JSONWebKey{}, false
}
