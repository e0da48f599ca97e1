package oidc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/sync/singleflight"
)

// keySet caches the IdP's signing keys. A token whose kid is not cached
// (or, without a kid, that no cached key verifies) makes it refetch the
// JWKS, at most once per floor whatever the number of such tokens, so an
// attacker minting kids cannot make svc hammer the IdP; keys older than
// keysMaxAge are refetched the same way, and kept when that fails.
// go-oidc's RemoteKeySet refetches on every unknown kid, hence this type.
type keySet struct {
	fetch func(ctx context.Context) ([]jose.JSONWebKey, error) // typed errors
	now   func() time.Time
	floor time.Duration
	group singleflight.Group

	mu        sync.Mutex
	keys      []jose.JSONWebKey
	fetchedAt time.Time // last successful fetch
	triedAt   time.Time // last attempt
	lastErr   error     // of the last attempt
}

type keysResult struct {
	keys []jose.JSONWebKey
	err  error
}

// verify returns the payload of jws (one signature, algorithm already
// allowed) once a key of the set verifies it: a ReasonSignature error when
// none does, ReasonJWKSFetch when the keys could not be had.
func (k *keySet) verify(ctx context.Context, jws *jose.JSONWebSignature) ([]byte, error) {
	hdr := jws.Signatures[0].Header
	keys, fresh := k.snapshot()
	if fresh && hasCandidate(keys, hdr) {
		if payload, ok := verifyWith(keys, jws, hdr); ok || hdr.KeyID != "" {
			return payload, signatureErr(ok, hdr)
		}
	}
	keys, err := k.refresh(ctx)
	if !hasCandidate(keys, hdr) {
		if err != nil {
			return nil, err
		}
		return nil, fail(ReasonSignature, unknownKid(hdr), nil)
	}
	payload, ok := verifyWith(keys, jws, hdr)
	return payload, signatureErr(ok, hdr)
}

func signatureErr(ok bool, hdr jose.Header) error {
	if ok {
		return nil
	}
	if hdr.KeyID == "" {
		return fail(ReasonSignature, "no key of the JWKS verifies it", nil)
	}
	return fail(ReasonSignature, fmt.Sprintf("the key %q does not verify it", clip(hdr.KeyID)), nil)
}

func unknownKid(hdr jose.Header) string {
	if hdr.KeyID == "" {
		return "the JWKS has no key for it"
	}
	return fmt.Sprintf("the JWKS has no key %q", clip(hdr.KeyID))
}

// snapshot is the cached keys and whether they are younger than keysMaxAge.
func (k *keySet) snapshot() ([]jose.JSONWebKey, bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.keys, !k.fetchedAt.IsZero() && k.now().Sub(k.fetchedAt) < keysMaxAge
}

// refresh refetches the JWKS unless an attempt was made within the floor,
// and returns the keys then cached with the error of the last attempt.
func (k *keySet) refresh(ctx context.Context) ([]jose.JSONWebKey, error) {
	r, err := await(ctx, &k.group, "jwks", func(fctx context.Context) keysResult {
		k.mu.Lock()
		if !k.triedAt.IsZero() && k.now().Sub(k.triedAt) < k.floor {
			defer k.mu.Unlock()
			return keysResult{k.keys, k.lastErr}
		}
		k.triedAt = k.now()
		k.mu.Unlock()

		keys, err := k.fetch(fctx)
		k.mu.Lock()
		defer k.mu.Unlock()
		k.lastErr = err
		if err == nil {
			k.keys, k.fetchedAt = keys, k.now()
		}
		return keysResult{k.keys, err}
	})
	if err != nil {
		return nil, fail(ReasonJWKSFetch, "", err)
	}
	return r.keys, r.err
}

// matches reports whether key may verify a signature with hdr: its kid (when
// the token names one) and its algorithm (when the key names one) agree.
func matches(key jose.JSONWebKey, hdr jose.Header) bool {
	return (hdr.KeyID == "" || key.KeyID == hdr.KeyID) &&
		(key.Algorithm == "" || key.Algorithm == hdr.Algorithm)
}

func hasCandidate(keys []jose.JSONWebKey, hdr jose.Header) bool {
	for _, key := range keys {
		if matches(key, hdr) {
			return true
		}
	}
	return false
}

// verifyWith tries each matching key; go-jose checks the key's type fits the
// algorithm.
func verifyWith(keys []jose.JSONWebKey, jws *jose.JSONWebSignature, hdr jose.Header) ([]byte, bool) {
	for i := range keys {
		if !matches(keys[i], hdr) {
			continue
		}
		if payload, err := jws.Verify(&keys[i]); err == nil {
			return payload, true
		}
	}
	return nil, false
}

// clip bounds an attacker-chosen value quoted in a message.
func clip(s string) string {
	const max = 64
	if len(s) > max {
		return s[:max] + "…"
	}
	return s
}

// errNoTrace is go-oidc calling the key set outside Verifier.check.
var errNoTrace = errors.New("oidc: key set used outside the verifier")
