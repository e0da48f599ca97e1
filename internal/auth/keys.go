// Package auth owns virtual keys: creating them (the secret is shown once and
// stored only as a SHA-256 hash), authenticating callers with a cached lookup
// that is invalidated across processes on revoke, the admin-key check, and the
// proxy's auth stage.
//
// proxy, mgmt and wire import auth. It imports store, identity, apierr,
// pipeline and secret.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/store"
)

// KeyPrefix starts every virtual key.
const KeyPrefix = "sk-svc-"

// changedChannel carries the hex hash of a key whose record changed.
const changedChannel = "auth:vkeys:changed"

// maxCached bounds the lookup cache; when full it is emptied (cheap, rare).
const maxCached = 100_000

// Keys manages virtual keys.
type Keys struct {
	store KeyStore
	kv    store.KV
	ttl   time.Duration
	now   func() time.Time
	log   *slog.Logger

	mu    sync.RWMutex
	cache map[[32]byte]cached
}

type cached struct {
	p       *identity.Principal // nil: no such key, or revoked
	expires time.Time
}

// NewKeys returns a key manager. ttl bounds how long a lookup is cached when no
// invalidation arrives (0 disables caching).
func NewKeys(s KeyStore, kv store.KV, ttl time.Duration, log *slog.Logger) *Keys {
	return &Keys{store: s, kv: kv, ttl: ttl, now: time.Now, log: log, cache: map[[32]byte]cached{}}
}

// CreateParams are the fields of a new key.
type CreateParams struct {
	Alias             string
	BudgetPeriod      string
	MaxBudgetUSD      float64
	ModelRestrictions []string
	RPMLimit          int
	TPMLimit          int
	PolicySet         string
	TeamID            string
}

// Budget periods.
var periods = map[string]bool{"daily": true, "weekly": true, "monthly": true}

// Validate reports the first invalid field.
func (p *CreateParams) Validate() error {
	p.BudgetPeriod = strings.ToLower(strings.TrimSpace(p.BudgetPeriod))
	switch {
	case len(p.Alias) > 200:
		return apierr.BadParam("alias", "alias must be at most 200 characters")
	case p.MaxBudgetUSD < 0:
		return apierr.BadParam("max_budget_usd", "max_budget_usd must not be negative")
	case p.RPMLimit < 0:
		return apierr.BadParam("rpm_limit", "rpm_limit must not be negative")
	case p.TPMLimit < 0:
		return apierr.BadParam("tpm_limit", "tpm_limit must not be negative")
	case len(p.ModelRestrictions) > 1000:
		return apierr.BadParam("model_restrictions", "at most 1000 models")
	}
	if p.BudgetPeriod == "" {
		p.BudgetPeriod = "monthly"
	}
	if !periods[p.BudgetPeriod] {
		return apierr.BadParam("budget_period", "budget_period must be daily, weekly or monthly")
	}
	for i, m := range p.ModelRestrictions {
		m = strings.TrimSpace(m)
		if m == "" {
			return apierr.BadParam("model_restrictions", "model_restrictions[%d] is empty", i)
		}
		p.ModelRestrictions[i] = m
	}
	return nil
}

// Create makes a new key and returns its record and secret. The secret is not
// kept anywhere: this is the only time it exists outside the caller.
func (k *Keys) Create(ctx context.Context, p CreateParams) (VirtualKey, string, error) {
	if err := p.Validate(); err != nil {
		return VirtualKey{}, "", err
	}
	secret, err := randomHex(24)
	if err != nil {
		return VirtualKey{}, "", err
	}
	secret = KeyPrefix + secret
	id, err := randomHex(12)
	if err != nil {
		return VirtualKey{}, "", err
	}
	sum := sha256.Sum256([]byte(secret))
	models := p.ModelRestrictions
	if models == nil {
		models = []string{}
	}
	vk := VirtualKey{
		ID:                "vk_" + id,
		Hash:              hex.EncodeToString(sum[:]),
		MaskedKey:         secret[:len(KeyPrefix)+4] + "…",
		Alias:             p.Alias,
		BudgetPeriod:      p.BudgetPeriod,
		MaxBudgetUSD:      p.MaxBudgetUSD,
		ModelRestrictions: models,
		RPMLimit:          p.RPMLimit,
		TPMLimit:          p.TPMLimit,
		PolicySet:         p.PolicySet,
		TeamID:            p.TeamID,
		CreatedAt:         k.now().UTC().Truncate(time.Microsecond),
	}
	if err := k.store.CreateVirtualKey(ctx, vk); err != nil {
		return VirtualKey{}, "", apierr.Wrap(apierr.Internal, "store_error", "could not store the key", err)
	}
	// A negative cache entry for this hash may exist in some process.
	k.changed(ctx, sum)
	return vk, secret, nil
}

// Authenticate returns the principal for a presented secret. An empty,
// malformed, unknown or revoked key is Unauthenticated.
func (k *Keys) Authenticate(ctx context.Context, secret string) (*identity.Principal, error) {
	if secret == "" {
		return nil, errMissing
	}
	if !strings.HasPrefix(secret, KeyPrefix) || len(secret) > 256 {
		return nil, errInvalid
	}
	sum := sha256.Sum256([]byte(secret))
	now := k.now()
	k.mu.RLock()
	c, ok := k.cache[sum]
	k.mu.RUnlock()
	if !ok || now.After(c.expires) {
		var err error
		c, err = k.load(ctx, sum, now)
		if err != nil {
			return nil, err
		}
	}
	if c.p == nil {
		return nil, errInvalid
	}
	return c.p, nil
}

var (
	errMissing = &apierr.Error{Kind: apierr.Unauthenticated, Code: "missing_api_key",
		Message: "missing API key: send your virtual key as Authorization: Bearer sk-svc-…"}
	errInvalid = &apierr.Error{Kind: apierr.Unauthenticated, Code: "invalid_api_key",
		Message: "invalid API key: the virtual key is unknown or revoked"}
)

func (k *Keys) load(ctx context.Context, sum [32]byte, now time.Time) (cached, error) {
	vk, err := k.store.VirtualKeyByHash(ctx, hex.EncodeToString(sum[:]))
	var c cached
	switch {
	case errors.Is(err, store.ErrNotFound):
		c.expires = now.Add(min(k.ttl, 5*time.Second))
	case err != nil:
		return cached{}, apierr.Wrap(apierr.Unavailable, "store_unavailable", "key store unavailable", err)
	case vk.Revoked():
		c.expires = now.Add(k.ttl)
	default:
		c.p = principal(vk)
		c.expires = now.Add(k.ttl)
	}
	if k.ttl > 0 {
		k.mu.Lock()
		if len(k.cache) >= maxCached {
			clear(k.cache)
		}
		k.cache[sum] = c
		k.mu.Unlock()
	}
	return c, nil
}

func principal(vk VirtualKey) *identity.Principal {
	return &identity.Principal{
		Kind:         identity.VirtualKey,
		ID:           vk.ID,
		Name:         vk.Alias,
		TeamID:       vk.TeamID,
		MaskedKey:    vk.MaskedKey,
		Models:       vk.ModelRestrictions,
		RPMLimit:     vk.RPMLimit,
		TPMLimit:     vk.TPMLimit,
		BudgetPeriod: vk.BudgetPeriod,
		MaxBudgetUSD: vk.MaxBudgetUSD,
		PolicySet:    vk.PolicySet,
	}
}

// Get returns a key by id, or by its secret when ref starts with sk-svc-.
func (k *Keys) Get(ctx context.Context, ref string) (VirtualKey, error) {
	var vk VirtualKey
	var err error
	if strings.HasPrefix(ref, KeyPrefix) {
		sum := sha256.Sum256([]byte(ref))
		vk, err = k.store.VirtualKeyByHash(ctx, hex.EncodeToString(sum[:]))
	} else {
		vk, err = k.store.VirtualKeyByID(ctx, ref)
	}
	if errors.Is(err, store.ErrNotFound) {
		return VirtualKey{}, apierr.New(apierr.NotFound, "key_not_found", "no virtual key with that id")
	}
	if err != nil {
		return VirtualKey{}, apierr.Wrap(apierr.Internal, "store_error", "could not read the key", err)
	}
	return vk, nil
}

// List returns every key (without secrets), newest first.
func (k *Keys) List(ctx context.Context) ([]VirtualKey, error) {
	keys, err := k.store.ListVirtualKeys(ctx)
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "store_error", "could not list keys", err)
	}
	return keys, nil
}

// Revoke revokes the key named by ref (id or secret). Every process stops
// accepting it as soon as the invalidation reaches it, and within the cache
// TTL at the latest.
func (k *Keys) Revoke(ctx context.Context, ref string) (VirtualKey, error) {
	vk, err := k.Get(ctx, ref)
	if err != nil {
		return VirtualKey{}, err
	}
	at := k.now().UTC().Truncate(time.Microsecond)
	if err := k.store.RevokeVirtualKey(ctx, vk.ID, at); err != nil {
		return VirtualKey{}, apierr.Wrap(apierr.Internal, "store_error", "could not revoke the key", err)
	}
	if vk.RevokedAt == nil {
		vk.RevokedAt = &at
	}
	raw, err := hex.DecodeString(vk.Hash)
	if err == nil && len(raw) == 32 {
		k.changed(ctx, [32]byte(raw))
	}
	return vk, nil
}

// changed evicts sum here and tells every other process to.
func (k *Keys) changed(ctx context.Context, sum [32]byte) {
	k.evict(sum)
	if err := k.kv.Publish(ctx, changedChannel, []byte(hex.EncodeToString(sum[:]))); err != nil {
		k.log.Warn("could not publish key invalidation; other processes rely on the cache TTL", "err", err)
	}
}

func (k *Keys) evict(sum [32]byte) {
	k.mu.Lock()
	delete(k.cache, sum)
	k.mu.Unlock()
}

// Run follows invalidations from other processes until ctx ends. When the
// subscription fails it retries, and empties the cache meanwhile so that no
// revocation is missed for longer than the retry.
func (k *Keys) Run(ctx context.Context) error {
	for ctx.Err() == nil {
		sub, err := k.kv.Subscribe(ctx, changedChannel)
		if err != nil {
			k.log.Warn("key invalidation subscription failed; retrying", "err", err)
			k.flush()
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		k.follow(ctx, sub)
		sub.Close()
		k.flush()
	}
	return nil
}

func (k *Keys) follow(ctx context.Context, sub store.Subscription) {
	for {
		select {
		case <-ctx.Done():
			return
		case msg, ok := <-sub.C():
			if !ok {
				return
			}
			raw, err := hex.DecodeString(string(msg))
			if err == nil && len(raw) == 32 {
				k.evict([32]byte(raw))
			}
		}
	}
}

func (k *Keys) flush() {
	k.mu.Lock()
	clear(k.cache)
	k.mu.Unlock()
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("auth: random: %w", err)
	}
	return hex.EncodeToString(b), nil
}
