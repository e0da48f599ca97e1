package keyvault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/svc-gateway/svc/internal/secret"
	"github.com/svc-gateway/svc/internal/store"
)

// Channel is the KV channel on which every change of a provider key is
// announced; the message is the provider name (an empty message means "drop
// everything").
const Channel = "keyvault:changed"

// CacheTTL is how long a resolved key (or its absence) is served from memory
// without asking the store again. Invalidations end it earlier.
const CacheTTL = 30 * time.Second

const (
	maxCacheEntries = 4096            // bounds the cache against lookups of many names
	publishTimeout  = 5 * time.Second // for announcing a change already stored
)

// ErrNoKey is returned by Key when neither the store nor the environment has a
// key for the provider. It is returned unwrapped, so the hot path does not
// allocate; the caller knows which provider it asked for.
var ErrNoKey = errors.New("keyvault: no key for provider")

// ErrNotPublished is wrapped by the error of Put or Delete when the change was
// stored but could not be announced on Channel: other processes keep serving
// their cached key for up to CacheTTL. The returned Record is valid.
var ErrNotPublished = errors.New("keyvault: change stored but not announced to other processes")

// errLoadAborted is what waiters see if the loading goroutine panicked.
var errLoadAborted = errors.New("keyvault: key lookup aborted")

// Vault resolves, stores and lists provider API keys. Its methods are safe for
// concurrent use. Run keeps its cache coherent with other processes; without
// Run, another process's change is seen within CacheTTL.
type Vault struct {
	store  Store
	sealer *secret.Sealer
	bus    Bus
	env    func(provider string) string
	now    func() time.Time

	mu    sync.RWMutex
	cache map[string]entry // provider → resolved key or its absence
	calls map[string]*call // provider → load in flight
	// pending is a subscription to Channel that is only ever received from
	// with mu held for writing (by Run and by Key's miss path). A message in
	// it is a change not yet applied, so Key does not trust its cache while
	// len(pending) > 0. That makes a change published in this process visible
	// to the very next Key call, which a single subscription received by Run
	// could not: Run may have taken the message and not yet evicted.
	pending <-chan []byte
	// endRound ends Run's current round when pending ends; nil between
	// rounds.
	endRound context.CancelFunc
	running  bool
	// following is true while Run is subscribed to Channel. While Run runs
	// but is not subscribed (between its rounds) a change may go unheard,
	// so Key asks the store every time instead of trusting its cache.
	following bool
}

type entry struct {
	key     string
	found   bool
	expires time.Time
}

func (e entry) result() (string, error) {
	if e.found {
		return e.key, nil
	}
	return "", ErrNoKey
}

// call is one load from the store that concurrent misses wait for.
type call struct {
	done chan struct{}
	entry
	err error
}

// New returns a Vault over store, sealing with sealer and announcing changes
// on bus. env returns the <PROVIDER>_API_KEY value configured for a provider,
// or ""; it is consulted only when the store has no key, and may be nil. It
// should answer only for providers that are configured: Key passes it any
// well-formed name a caller asks for.
func New(store Store, sealer *secret.Sealer, bus Bus, env func(provider string) string) *Vault {
	if env == nil {
		env = func(string) string { return "" }
	}
	return &Vault{
		store:  store,
		sealer: sealer,
		bus:    bus,
		env:    env,
		now:    time.Now,
		cache:  make(map[string]entry),
		calls:  make(map[string]*call),
	}
}

// Key returns the API key to use for provider: the stored key if there is
// one, else env(provider), else ErrNoKey. Results, including ErrNoKey, are
// cached for up to CacheTTL; a cache hit is a map lookup under a read lock and
// does not allocate. Names that cannot be stored (see Put) yield ErrNoKey
// without a lookup.
func (v *Vault) Key(ctx context.Context, provider string) (string, error) {
	v.mu.RLock()
	e, ok := v.cache[provider]
	fresh := ok && len(v.pending) == 0 && v.servableLocked(e)
	v.mu.RUnlock()
	if fresh {
		return e.result()
	}
	return v.load(ctx, provider)
}

// load is Key's miss path: it applies pending invalidations, and either waits
// for a load of provider already in flight or performs one.
func (v *Vault) load(ctx context.Context, provider string) (string, error) {
	if !validProvider(provider) {
		return "", ErrNoKey
	}
	for {
		v.mu.Lock()
		v.applyPendingLocked()
		if e, ok := v.cache[provider]; ok && v.servableLocked(e) {
			v.mu.Unlock()
			return e.result()
		}
		c, ok := v.calls[provider]
		if !ok {
			c = &call{done: make(chan struct{}), err: errLoadAborted}
			v.calls[provider] = c
			v.mu.Unlock()
			v.lead(ctx, provider, c)
			if c.err != nil {
				return "", c.err
			}
			return c.result()
		}
		v.mu.Unlock()

		select {
		case <-c.done:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if c.err != nil && ctx.Err() == nil &&
			(errors.Is(c.err, context.Canceled) || errors.Is(c.err, context.DeadlineExceeded)) {
			continue // the loader's caller gave up, not the store: load again
		}
		if c.err != nil {
			return "", c.err
		}
		return c.result()
	}
}

// lead performs the load of c and caches its result unless an invalidation
// came in meanwhile (which removes c from v.calls) or the cache would not
// serve it (Run is between rounds: the next round empties it anyway).
func (v *Vault) lead(ctx context.Context, provider string, c *call) {
	defer func() {
		v.mu.Lock()
		if v.calls[provider] == c {
			delete(v.calls, provider)
			if c.err == nil && v.trustedLocked() {
				c.expires = v.now().Add(CacheTTL)
				v.putLocked(provider, c.entry)
			}
		}
		v.mu.Unlock()
		close(c.done)
	}()
	c.key, c.found, c.err = v.fetch(ctx, provider)
}

// servableLocked reports whether the cached e may answer Key: it has not
// expired, and the cache is trusted. v.mu is held (read or write).
func (v *Vault) servableLocked(e entry) bool {
	return v.trustedLocked() && v.now().Before(e.expires)
}

// trustedLocked reports whether the cache may serve at all: Run, if it
// runs, is subscribed. v.mu is held (read or write).
func (v *Vault) trustedLocked() bool { return v.following || !v.running }

// fetch reads provider's key from the store, falling back to the environment.
func (v *Vault) fetch(ctx context.Context, provider string) (key string, found bool, err error) {
	rec, err := v.store.ProviderKey(ctx, provider)
	if errors.Is(err, store.ErrNotFound) {
		key = v.env(provider)
		return key, key != "", nil
	}
	if err != nil {
		return "", false, fmt.Errorf("keyvault: read key of provider %q: %w", provider, err)
	}
	pt, err := v.sealer.Open(rec.Sealed, []byte(provider))
	if err != nil {
		return "", false, fmt.Errorf("keyvault: open key of provider %q (was the master key changed?): %w", provider, err)
	}
	key = string(pt)
	clear(pt)
	return key, true, nil
}

// putLocked caches e, keeping the cache bounded.
func (v *Vault) putLocked(provider string, e entry) {
	if len(v.cache) >= maxCacheEntries {
		now := v.now()
		for p, old := range v.cache {
			if !now.Before(old.expires) {
				delete(v.cache, p)
			}
		}
		if len(v.cache) >= maxCacheEntries {
			clear(v.cache)
		}
	}
	v.cache[provider] = e
}

// Put validates, seals and stores apiKey as provider's key, then drops the
// cached key here and announces the change to every process. Invalid
// arguments yield a *ValidationError. The returned Record carries the masked
// key only (Sealed is nil). If the change was stored but not announced, the
// Record is returned with an error wrapping ErrNotPublished.
func (v *Vault) Put(ctx context.Context, provider, apiKey string) (Record, error) {
	if err := validateProvider(provider); err != nil {
		return Record{}, err
	}
	if err := validateKey(apiKey); err != nil {
		return Record{}, err
	}
	pt := []byte(apiKey)
	sealed, err := v.sealer.Seal(pt, []byte(provider))
	clear(pt)
	if err != nil {
		return Record{}, fmt.Errorf("keyvault: seal key of provider %q: %w", provider, err)
	}
	rec := Record{
		Provider:  provider,
		Sealed:    sealed,
		Masked:    secret.Mask(apiKey),
		UpdatedAt: v.now().UTC().Truncate(time.Microsecond), // what SQL stores keep
	}
	if err := v.store.PutProviderKey(ctx, rec); err != nil {
		return Record{}, fmt.Errorf("keyvault: store key of provider %q: %w", provider, err)
	}
	rec.Sealed = nil
	return rec, v.changed(ctx, provider)
}

// Delete removes provider's stored key (the environment's, if any, applies
// again), drops it here and announces the change. A missing key yields an
// error matching store.ErrNotFound.
func (v *Vault) Delete(ctx context.Context, provider string) error {
	if err := v.store.DeleteProviderKey(ctx, provider); err != nil {
		return fmt.Errorf("keyvault: delete key of provider %q: %w", provider, err)
	}
	return v.changed(ctx, provider)
}

// List returns the stored keys, ordered by provider, masked only (Sealed is
// nil).
func (v *Vault) List(ctx context.Context) ([]Record, error) {
	recs, err := v.store.ListProviderKeys(ctx)
	if err != nil {
		return nil, fmt.Errorf("keyvault: list keys: %w", err)
	}
	for i := range recs {
		recs[i].Sealed = nil
	}
	return recs, nil
}

// changed evicts provider here and announces it. The change is already
// stored, so the announcement outlives a cancelled ctx.
func (v *Vault) changed(ctx context.Context, provider string) error {
	v.mu.Lock()
	v.evictLocked(provider)
	v.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), publishTimeout)
	defer cancel()
	if err := v.bus.Publish(ctx, Channel, []byte(provider)); err != nil {
		return fmt.Errorf("%w (others keep their cached key for up to %s): %w", ErrNotPublished, CacheTTL, err)
	}
	return nil
}

// Run applies the changes announced on Channel, by any process, to this
// Vault's cache until ctx ends, and returns nil then. When a subscription
// fails or ends (a message may have been lost) it drops the cache and
// subscribes again after store.FollowRetry; until it has, Key reads the
// store on every call, so a change announced meanwhile, which no
// subscription hears, is seen at once. Call it once per Vault.
func (v *Vault) Run(ctx context.Context) error {
	v.mu.Lock()
	if v.running {
		v.mu.Unlock()
		return errors.New("keyvault: Run is already running")
	}
	v.running = true
	v.mu.Unlock()
	defer func() {
		v.mu.Lock()
		v.running = false
		v.mu.Unlock()
	}()
	for {
		v.round(ctx)
		v.mu.Lock()
		v.pending, v.endRound = nil, nil
		v.dropAllLocked() // a change may have been missed
		v.mu.Unlock()
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(store.FollowRetry):
		}
	}
}

// round follows Channel with two subscriptions, pending (see Vault),
// received only under v.mu, and the one Follow makes, which wakes Run,
// until ctx ends or either fails or ends.
func (v *Vault) round(ctx context.Context) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	pending, err := v.bus.Subscribe(ctx, Channel)
	if err != nil {
		return
	}
	defer pending.Close()
	defer func() { // before pending closes: no Key trusts a round that ended
		v.mu.Lock()
		v.following = false
		v.mu.Unlock()
	}()
	go v.checkPending(ctx)
	_ = store.Follow(ctx, v.bus, Channel, store.FollowHooks{
		Subscribed: func() {
			v.mu.Lock()
			if cap(pending.C()) > 0 { // an unbuffered channel never holds a message for Key to see
				v.pending = pending.C()
			}
			v.endRound = cancel
			v.following = true
			v.dropAllLocked() // entries cached before we listened may have missed a change
			v.mu.Unlock()
		},
		Message: func(msg []byte) {
			v.mu.Lock()
			v.applyPendingLocked()
			v.evictLocked(string(msg))
			v.mu.Unlock()
		},
		Lost: func(err error) error { return err }, // ends the round
	})
}

// checkPending applies pending every store.FollowRetry until ctx ends, so
// that its end is noticed (and ends the round) without a message or a miss.
func (v *Vault) checkPending(ctx context.Context) {
	tick := time.NewTicker(store.FollowRetry)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			v.mu.Lock()
			v.applyPendingLocked()
			v.mu.Unlock()
		}
	}
}

// applyPendingLocked applies every message waiting in v.pending; when
// pending has ended it drops the cache and ends the round.
func (v *Vault) applyPendingLocked() {
	if v.pending == nil {
		return
	}
	// A message lost (a full buffer) ends the subscription
	// (store.Subscription): the end below drops the cache.
	for {
		select {
		case msg, ok := <-v.pending:
			if !ok {
				v.pending, v.following = nil, false
				v.dropAllLocked()
				if v.endRound != nil {
					v.endRound()
				}
				return
			}
			v.evictLocked(string(msg))
		default:
			return
		}
	}
}

// evictLocked forgets provider's cached key and any load of it in flight.
func (v *Vault) evictLocked(provider string) {
	if provider == "" {
		v.dropAllLocked()
		return
	}
	delete(v.cache, provider)
	delete(v.calls, provider)
}

func (v *Vault) dropAllLocked() {
	clear(v.cache)
	clear(v.calls)
}

// String returns a fixed text: a Vault holds clear keys and never prints them.
func (*Vault) String() string { return "keyvault.Vault" }

// GoString returns the same fixed text as String.
func (v *Vault) GoString() string { return v.String() }

// Format writes the fixed text of String for every verb.
func (v *Vault) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, v.String()) }

// LogValue returns the fixed text of String for log/slog.
func (v *Vault) LogValue() slog.Value { return slog.StringValue(v.String()) }

var (
	_ fmt.Formatter  = (*Vault)(nil)
	_ fmt.Stringer   = (*Vault)(nil)
	_ fmt.GoStringer = (*Vault)(nil)
	_ slog.LogValuer = (*Vault)(nil)
)
