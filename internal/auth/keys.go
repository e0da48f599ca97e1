// Package auth owns authentication: the Authenticator interface and Chain
// (each authenticator turns credentials into an identity.Principal), the
// admin-key authenticator, and virtual keys — creating them (the secret is
// shown once and stored only as a SHA-256 hash), authenticating them with a
// cached lookup that is invalidated across processes on revoke, and reading
// their records (model restrictions, limits) for the stages that enforce
// them. The pipeline wrapper (Stage) and the management guard (Guard) are
// thin: every gateway calls the same Authenticate. The key records live in
// a KeyStore; SQLKeyStore is it on SQL (keys_sql.go).
//
// proxy, mgmt and wire import auth. It imports store, store/sqlstore,
// identity, apierr, pipeline and secret.
package auth

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/store"
	"golang.org/x/sync/singleflight"
)

// KeyPrefix starts every virtual key.
const KeyPrefix = "sk-svc-"

// changedChannel carries the hex hash of a key whose record changed.
const changedChannel = "auth:vkeys:changed"

// maxCached bounds the lookup cache; when full it is emptied (cheap, rare).
const maxCached = 100_000

// Bus carries key invalidations between processes; Ping tells whether it
// is up (while it is not, invalidations may be lost, so cached lookups are
// not trusted).
type Bus interface {
	store.Bus
	Ping(ctx context.Context) error
}

// Keys manages virtual keys.
type Keys struct {
	store KeyStore
	bus   Bus
	ttl   time.Duration
	now   func() time.Time
	log   *slog.Logger
	// trust lets the cache serve only while Run is subscribed to
	// invalidations and the bus answers its pings: otherwise lookups go
	// to the store every time, so a revocation made meanwhile holds at
	// once.
	trust store.Trust
	// notices announces key changes, again later when it cannot at once.
	notices *store.Announcer

	mu    sync.RWMutex
	cache map[[32]byte]cached
	byID  map[string]cachedRecord
	// epoch counts evictions and flushes: a lookup that began before one
	// does not fill the cache with what it read (the key may have been
	// revoked, and its notice handled, while the store answered).
	// It is changed under mu (with the cache) and read without it.
	epoch atomic.Uint64
	// loads shares one store read among concurrent misses of one key.
	loads singleflight.Group
}

// loadTimeout bounds one shared store read of a key (it outlives the
// caller that started it when others wait for it too).
const loadTimeout = 10 * time.Second

type cached struct {
	p       *identity.Principal // nil: no such key, or revoked
	expires time.Time
}

type cachedRecord struct {
	vk      *VirtualKey
	expires time.Time
}

// NewKeys returns a key manager. ttl bounds how long a lookup is cached when no
// invalidation arrives (0 disables caching); nothing is cached unless Run
// is following invalidations.
func NewKeys(s KeyStore, bus Bus, ttl time.Duration, log *slog.Logger) *Keys {
	// A notice is retried for as long as another process may cache the
	// key (the Announcer keeps a minimum: the TTL that matters is the
	// other processes').
	notices := &store.Announcer{Bus: bus, Channel: changedChannel, For: ttl, Log: log}
	return &Keys{store: s, bus: bus, ttl: ttl, now: time.Now, log: log, notices: notices, cache: map[[32]byte]cached{}, byID: map[string]cachedRecord{}}
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

// Bounds of a key's limits. A spend cap of 0 (or none) is no cap; a
// positive cap must be at least one micro-dollar, the unit spend is
// metered in, so that every positive cap caps.
const (
	MinBudgetUSD = 0.000001
	MaxBudgetUSD = 1e9
	MaxRateLimit = 1_000_000_000
)

// Validate reports the first invalid field.
func (p *CreateParams) Validate() error {
	p.BudgetPeriod = strings.ToLower(strings.TrimSpace(p.BudgetPeriod))
	switch {
	case len(p.Alias) > 200:
		return apierr.BadParam("alias", "alias must be at most 200 characters")
	case p.MaxBudgetUSD < 0 || p.MaxBudgetUSD > MaxBudgetUSD:
		return apierr.BadParam("max_budget_usd", "max_budget_usd must be between 0.000001 and %g US dollars (omit it for no cap)", float64(MaxBudgetUSD))
	case p.MaxBudgetUSD > 0 && p.MaxBudgetUSD < MinBudgetUSD:
		return apierr.BadParam("max_budget_usd", "max_budget_usd must be at least 0.000001 (one micro-dollar): a smaller cap cannot be metered")
	case p.RPMLimit < 0 || p.RPMLimit > MaxRateLimit:
		return apierr.BadParam("rpm_limit", "rpm_limit must be between 0 and %d", MaxRateLimit)
	case p.TPMLimit < 0 || p.TPMLimit > MaxRateLimit:
		return apierr.BadParam("tpm_limit", "tpm_limit must be between 0 and %d", MaxRateLimit)
	case len(p.ModelRestrictions) > 1000:
		return apierr.BadParam("model_restrictions", "at most 1000 models")
	case len(p.PolicySet) > 200 || strings.IndexByte(p.PolicySet, 0) >= 0:
		return apierr.BadParam("policy_set", "policy_set must be a preset id of at most 200 characters")
	case len(p.TeamID) > 200 || strings.IndexByte(p.TeamID, 0) >= 0:
		return apierr.BadParam("team_id", "team_id must be at most 200 characters")
	case strings.IndexByte(p.Alias, 0) >= 0:
		return apierr.BadParam("alias", "alias must not hold a NUL character")
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

// Patch changes some fields of a key: nil fields stay as they are.
type Patch struct {
	Alias             *string
	BudgetPeriod      *string
	MaxBudgetUSD      *float64
	ModelRestrictions *[]string
	RPMLimit          *int
	TPMLimit          *int
	PolicySet         *string
	TeamID            *string
}

// Update applies p to the key named by ref (id or secret), validated as at
// creation, and makes every process see the new record at once (as a
// revocation does). A revoked key cannot be changed (409).
func (k *Keys) Update(ctx context.Context, ref string, p Patch) (VirtualKey, error) {
	vk, err := k.Get(ctx, ref)
	if err != nil {
		return VirtualKey{}, err
	}
	if vk.Revoked() {
		return VirtualKey{}, apierr.New(apierr.Conflict, "key_revoked", "a revoked key cannot be changed")
	}
	c := CreateParams{Alias: vk.Alias, BudgetPeriod: vk.BudgetPeriod, MaxBudgetUSD: vk.MaxBudgetUSD,
		ModelRestrictions: vk.ModelRestrictions, RPMLimit: vk.RPMLimit, TPMLimit: vk.TPMLimit, PolicySet: vk.PolicySet, TeamID: vk.TeamID}
	set(&c.Alias, p.Alias)
	set(&c.BudgetPeriod, p.BudgetPeriod)
	set(&c.MaxBudgetUSD, p.MaxBudgetUSD)
	set(&c.ModelRestrictions, p.ModelRestrictions)
	set(&c.RPMLimit, p.RPMLimit)
	set(&c.TPMLimit, p.TPMLimit)
	set(&c.PolicySet, p.PolicySet)
	set(&c.TeamID, p.TeamID)
	if err := c.Validate(); err != nil {
		return VirtualKey{}, err
	}
	vk.Alias, vk.BudgetPeriod, vk.MaxBudgetUSD, vk.ModelRestrictions = c.Alias, c.BudgetPeriod, c.MaxBudgetUSD, c.ModelRestrictions
	vk.RPMLimit, vk.TPMLimit, vk.PolicySet, vk.TeamID = c.RPMLimit, c.TPMLimit, c.PolicySet, c.TeamID
	if err := k.store.UpdateVirtualKey(ctx, vk); err != nil {
		return VirtualKey{}, apierr.Wrap(apierr.Internal, "store_error", "could not update the key", err)
	}
	if raw, err := hex.DecodeString(vk.Hash); err == nil && len(raw) == 32 {
		k.changed(ctx, [32]byte(raw))
	}
	return vk, nil
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
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

// Authenticate implements Authenticator for virtual keys: a bearer token
// (or x-api-key, where the route accepts it) starting with sk-svc-. Any
// other credential is not its own (ErrNotMine); an unknown or revoked key is
// Unauthenticated.
func (k *Keys) Authenticate(ctx context.Context, c Credentials) (*identity.Principal, error) {
	secret := c.Token()
	if !strings.HasPrefix(secret, KeyPrefix) {
		return nil, ErrNotMine
	}
	if len(secret) > 256 {
		return nil, errInvalid
	}
	sum := sha256.Sum256([]byte(secret))
	now := k.now()
	c0, ok := k.cachedKey(sum, now)
	if !ok {
		var err error
		c0, err = k.lookup(ctx, sum, now)
		if err != nil {
			return nil, err
		}
	}
	if c0.p == nil {
		return nil, errInvalid
	}
	return c0.p, nil
}

// cachedKey is the cached lookup of sum, when there is one to trust.
func (k *Keys) cachedKey(sum [32]byte, now time.Time) (cached, bool) {
	if !k.trust.Trusted() {
		return cached{}, false
	}
	k.mu.RLock()
	c, ok := k.cache[sum]
	k.mu.RUnlock()
	return c, ok && !now.After(c.expires)
}

// lookup reads sum's record from the store. While the cache is trusted,
// concurrent misses of one key share one read (a burst of requests with a
// new key is one query, not one per request); a miss after an eviction or
// flush does not join a read that began before it (the epoch is part of the
// key). Untrusted, every lookup reads the store itself, so a revocation
// made meanwhile holds at once.
func (k *Keys) lookup(ctx context.Context, sum [32]byte, now time.Time) (cached, error) {
	if !k.trust.Trusted() {
		return k.load(ctx, sum, now)
	}
	var key [len(sum) + 8]byte
	copy(key[:], sum[:])
	binary.LittleEndian.PutUint64(key[len(sum):], k.epoch.Load())
	ch := k.loads.DoChan(string(key[:]), func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
		defer cancel()
		return k.load(lctx, sum, now)
	})
	select {
	case <-ctx.Done():
		return cached{}, apierr.Wrap(apierr.Unavailable, "store_unavailable", "key store unavailable", ctx.Err())
	case r := <-ch:
		if r.Err != nil {
			return cached{}, r.Err
		}
		return r.Val.(cached), nil
	}
}

func (k *Keys) load(ctx context.Context, sum [32]byte, now time.Time) (cached, error) {
	epoch := k.epoch.Load()
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
	if k.ttl > 0 && k.trust.Trusted() {
		k.mu.Lock()
		defer k.mu.Unlock()
		if k.epoch.Load() != epoch {
			return c, nil // a revocation or a flush came while the store answered: not cached
		}
		if len(k.cache) >= maxCached {
			clear(k.cache)
			clear(k.byID)
		}
		k.cache[sum] = c
		if err == nil {
			k.byID[vk.ID] = cachedRecord{vk: &vk, expires: c.expires}
		}
	}
	return c, nil
}

// Record returns the record of the virtual key id (revoked ones included),
// from the cache the lookups fill, else from the store.
func (k *Keys) Record(ctx context.Context, id string) (*VirtualKey, error) {
	now := k.now()
	if k.trust.Trusted() {
		k.mu.RLock()
		r, ok := k.byID[id]
		k.mu.RUnlock()
		if ok && !now.After(r.expires) {
			return r.vk, nil
		}
	}
	epoch := k.epoch.Load()
	vk, err := k.store.VirtualKeyByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errInvalid
	}
	if err != nil {
		return nil, apierr.Wrap(apierr.Unavailable, "store_unavailable", "key store unavailable", err)
	}
	if k.ttl > 0 && k.trust.Trusted() {
		k.mu.Lock()
		if k.epoch.Load() == epoch { // else a change came while the store answered
			if len(k.byID) >= maxCached {
				clear(k.byID)
			}
			k.byID[id] = cachedRecord{vk: &vk, expires: now.Add(k.ttl)}
		}
		k.mu.Unlock()
	}
	return &vk, nil
}

// Models is the allow-list of models of p's key (nil: every model). Only
// virtual keys have one today.
func (k *Keys) Models(ctx context.Context, p *identity.Principal) ([]string, error) {
	if p == nil || p.Kind != identity.VirtualKey {
		return nil, nil
	}
	vk, err := k.Record(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	return vk.ModelRestrictions, nil
}

func principal(vk VirtualKey) *identity.Principal {
	return &identity.Principal{
		Kind:      identity.VirtualKey,
		ID:        vk.ID,
		Name:      vk.Alias,
		TeamID:    vk.TeamID,
		MaskedKey: vk.MaskedKey,
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

// changed evicts sum here and tells every other process to. When the bus
// is down the notice is published again later (store.Announcer), and every
// process notices the outage within store.WatchEvery+store.WatchTimeout and
// stops trusting its cache meanwhile (Run).
func (k *Keys) changed(ctx context.Context, sum [32]byte) {
	k.evict(sum)
	if err := k.notices.Announce(ctx, hex.EncodeToString(sum[:])); err != nil {
		k.log.Warn("could not publish key invalidation; retrying every second", "err", err)
	}
}

// evict drops sum's lookup and the cached records.
func (k *Keys) evict(sum [32]byte) {
	k.mu.Lock()
	k.epoch.Add(1)
	delete(k.cache, sum)
	// The records are read by id, not by hash: a change to any key drops
	// them all (changes are rare admin actions; a scan for the hash would
	// hold the lock every lookup waits on).
	clear(k.byID)
	k.mu.Unlock()
}

// Run follows invalidations from other processes until ctx ends. Lookups
// are cached only while it is subscribed: when the subscription fails or
// ends (a notice may have been lost) the cache is unused (lookups go to the
// store), and Run subscribes again every second, emptying it when it has,
// so that no revocation announced while it was not listening is missed. It also pings
// the bus every second: while the bus does not answer (a notice published
// then is lost), lookups bypass the cache and go to the store, so a
// revocation made anywhere holds here within about a second and a half of
// the outage's start, whatever SVC_KEY_CACHE_TTL is; when the bus is back
// the cache is emptied and trusted again.
func (k *Keys) Run(ctx context.Context) error {
	return k.trust.Run(ctx, k.bus, changedChannel, store.TrustHooks{
		// Nothing is cached before we listen (before Run, or while
		// Subscribe fails); the flush when a subscription is made drops
		// lookups of a Run before.
		Flush:      k.flush,
		BusFlipped: k.busFlipped,
		Message:    k.evictHex,
		Lost: func(err error) error {
			if ctx.Err() == nil && !errors.Is(err, store.ErrSubscriptionEnded) {
				k.log.Warn("key invalidation subscription failed; retrying", "err", err)
			}
			return nil // untrusted now; Trust empties the cache before trusting it again
		},
	})
}

// busFlipped logs an outage of the bus (the cache is emptied and unused
// until it ends) and its end.
func (k *Keys) busFlipped(down bool, err error) {
	if down {
		k.log.Warn("key invalidation bus unreachable: checking every key against the database until it is back", "err", err)
	} else {
		k.log.Info("key invalidation bus reachable again: key lookups cached again")
	}
}

// evictHex evicts the key whose hash a change notice carries (in hex);
// other messages are ignored.
func (k *Keys) evictHex(msg []byte) {
	raw, err := hex.DecodeString(string(msg))
	if err == nil && len(raw) == 32 {
		k.evict([32]byte(raw))
	}
}

func (k *Keys) flush() {
	k.mu.Lock()
	k.epoch.Add(1)
	clear(k.cache)
	clear(k.byID)
	k.mu.Unlock()
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("auth: random: %w", err)
	}
	return hex.EncodeToString(b), nil
}
