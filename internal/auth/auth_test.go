package auth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	. "github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// countingStore counts hash lookups of a real store.
type countingStore struct {
	KeyStore
	lookups atomic.Int64
}

func (c *countingStore) VirtualKeyByHash(ctx context.Context, h string) (VirtualKey, error) {
	c.lookups.Add(1)
	return c.KeyStore.VirtualKeyByHash(ctx, h)
}

// newKeys is a key manager over a fresh database, following
// invalidations on an in-process bus.
func newKeys(t *testing.T, ttl time.Duration) (*Keys, *countingStore) {
	t.Helper()
	k, cs := newKeysNotFollowing(t, ttl)
	follow(t, k)
	return k, cs
}

// newKeysNotFollowing is newKeys without its Run: it caches nothing.
func newKeysNotFollowing(t *testing.T, ttl time.Duration) (*Keys, *countingStore) {
	t.Helper()
	var cs *countingStore
	k := keysOver(t, ttl, func(ks KeyStore) KeyStore { cs = &countingStore{KeyStore: ks}; return cs })
	return k, cs
}

// keysOver is a key manager over a fresh database's key store as wrap
// returns it, on an in-process bus, not following it yet.
func keysOver(t *testing.T, ttl time.Duration, wrap func(KeyStore) KeyStore) *Keys {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	return NewKeys(wrap(NewSQLKeyStore(db)), kv, ttl, slog.New(slog.NewTextHandler(io.Discard, nil)))
}

// follow runs k.Run until the test ends and waits until it follows
// invalidations (lookups are cached only then).
func follow(t *testing.T, k *Keys) {
	t.Helper()
	storetest.Background(t, k.Run)
	storetest.Eventually(t, 5*time.Second, func() error {
		if !Following(k) {
			return errors.New("Run has not subscribed")
		}
		return nil
	})
}

func TestAuthenticateCachesAndRevokes(t *testing.T) {
	ctx := context.Background()
	k, cs := newKeysNotFollowing(t, time.Minute)
	vk, secret, err := k.Create(ctx, CreateParams{Alias: "a", ModelRestrictions: []string{"gpt-4o"}, RPMLimit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if vk.BudgetPeriod != "monthly" || vk.Hash == "" || len(secret) != len(KeyPrefix)+48 {
		t.Fatalf("created %+v %q", vk, secret)
	}
	follow(t, k) // after the creation's notice, which would evict the first lookup
	for i := 0; i < 5; i++ {
		p, err := k.Authenticate(ctx, Credentials{Bearer: secret})
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != vk.ID || p.Kind != identity.VirtualKey {
			t.Fatalf("principal %+v", p)
		}
	}
	if n := cs.lookups.Load(); n != 1 {
		t.Errorf("store lookups = %d, want 1 (then cached)", n)
	}
	if _, err := k.Revoke(ctx, vk.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Authenticate(ctx, Credentials{Bearer: secret}); apierr.KindOf(err) != apierr.Unauthenticated {
		t.Errorf("after revoke: %v, want Unauthenticated", err)
	}
	again, err := k.Revoke(ctx, secret)
	if err != nil || again.RevokedAt == nil {
		t.Errorf("revoke by secret again: %+v %v", again, err)
	}
}

func TestNegativeCacheAndCreateInvalidation(t *testing.T) {
	ctx := context.Background()
	k, cs := newKeys(t, time.Minute)
	unknown := KeyPrefix + "000000000000000000000000000000000000000000000000"
	for i := 0; i < 3; i++ {
		if _, err := k.Authenticate(ctx, Credentials{Bearer: unknown}); apierr.KindOf(err) != apierr.Unauthenticated {
			t.Fatalf("unknown key: %v", err)
		}
	}
	if n := cs.lookups.Load(); n != 1 {
		t.Errorf("lookups of an unknown key = %d, want 1 (negative cache)", n)
	}
	// Through a chain, every credential that is not a live key is a 401:
	// missing when there is none, invalid otherwise.
	for _, bad := range []struct{ token, code string }{
		{"", "missing_api_key"}, {"Bearer", "invalid_api_key"}, {"sk-proj-x", "invalid_api_key"},
		{KeyPrefix + string(make([]byte, 300)), "invalid_api_key"},
	} {
		_, err := Chain{k}.Authenticate(ctx, Credentials{Bearer: bad.token})
		if e := apierr.From(err); e.Kind != apierr.Unauthenticated || e.Code != bad.code {
			t.Errorf("Authenticate(%q) = %v, want 401 %s", bad.token, err, bad.code)
		}
	}
}

func TestCacheExpires(t *testing.T) {
	ctx := context.Background()
	k, cs := newKeys(t, time.Minute)
	now := time.Now()
	SetClock(k, func() time.Time { return now })
	_, secret, err := k.Create(ctx, CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	k.Authenticate(ctx, Credentials{Bearer: secret})
	now = now.Add(2 * time.Minute)
	k.Authenticate(ctx, Credentials{Bearer: secret})
	if n := cs.lookups.Load(); n != 2 {
		t.Errorf("lookups = %d, want 2 (the entry expired)", n)
	}
}

func TestCreateValidation(t *testing.T) {
	cases := []CreateParams{
		{BudgetPeriod: "hourly"}, {MaxBudgetUSD: -1}, {RPMLimit: -1}, {TPMLimit: -1},
		{MaxBudgetUSD: 0.0000001}, {MaxBudgetUSD: 2e9}, {RPMLimit: MaxRateLimit + 1}, {TPMLimit: MaxRateLimit + 1},
		{ModelRestrictions: []string{" "}}, {Alias: string(make([]byte, 201))},
	}
	for _, c := range cases {
		if err := c.Validate(); apierr.KindOf(err) != apierr.InvalidRequest {
			t.Errorf("Validate(%+v) = %v, want InvalidRequest", c, err)
		}
	}
	ok := CreateParams{BudgetPeriod: " Weekly ", ModelRestrictions: []string{" gpt-4o "}}
	if err := ok.Validate(); err != nil || ok.BudgetPeriod != "weekly" || ok.ModelRestrictions[0] != "gpt-4o" {
		t.Errorf("normalised %+v %v", ok, err)
	}
}

func TestAllowsModel(t *testing.T) {
	models := []string{"gpt-4o-mini", "groq/llama-3.3-70b", "claude-*"}
	cases := []struct {
		requested, upstream string
		want                bool
	}{
		{"gpt-4o-mini", "gpt-4o-mini", true},
		{"openai/gpt-4o-mini", "gpt-4o-mini", true},
		{"gpt-4o", "gpt-4o", false},
		{"groq/llama-3.3-70b", "llama-3.3-70b", true},
		{"claude-sonnet-4-5", "claude-sonnet-4-5", true},
		{"gpt-4o-mini-2024", "gpt-4o-mini-2024", false},
	}
	for _, c := range cases {
		if got := AllowsModel(models, c.requested, c.upstream); got != c.want {
			t.Errorf("AllowsModel(%q, %q) = %v, want %v", c.requested, c.upstream, got, c.want)
		}
	}
	if !AllowsModel(nil, "anything", "anything") {
		t.Error("an empty allow-list must allow every model")
	}
}

// TestRecordsNotInPrincipal: the principal says who calls; the key's model
// list comes from its record, through the lookup cache.
func TestRecordsNotInPrincipal(t *testing.T) {
	ctx := context.Background()
	k, _ := newKeys(t, time.Minute)
	vk, secret, err := k.Create(ctx, CreateParams{ModelRestrictions: []string{"gpt-4o"}, RPMLimit: 7})
	if err != nil {
		t.Fatal(err)
	}
	p, err := k.Authenticate(ctx, Credentials{Bearer: secret})
	if err != nil {
		t.Fatal(err)
	}
	models, err := k.Models(ctx, p)
	if err != nil || len(models) != 1 || models[0] != "gpt-4o" {
		t.Errorf("Models = %v, %v, want [gpt-4o]", models, err)
	}
	rec, err := k.Record(ctx, vk.ID)
	if err != nil || rec.RPMLimit != 7 {
		t.Errorf("Record = %+v, %v, want rpm 7", rec, err)
	}
	if _, err := k.Record(ctx, "vk_nope"); apierr.KindOf(err) != apierr.Unauthenticated {
		t.Errorf("Record of an unknown id = %v, want Unauthenticated", err)
	}
	if m, err := k.Models(ctx, Admin); err != nil || m != nil {
		t.Errorf("Models(admin) = %v, %v, want none", m, err)
	}
}

func TestChain(t *testing.T) {
	ctx := context.Background()
	k, _ := newKeys(t, time.Minute)
	_, secret, err := k.Create(ctx, CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	admin := AdminKey("svc-admin-0123456789abcdef")
	ch := Chain{admin, k}
	if p, err := ch.Authenticate(ctx, Credentials{Bearer: string(admin)}); err != nil || p.Kind != identity.Admin {
		t.Errorf("admin key: %+v, %v, want the admin principal", p, err)
	}
	if p, err := ch.Authenticate(ctx, Credentials{Bearer: secret}); err != nil || p.Kind != identity.VirtualKey {
		t.Errorf("virtual key after the admin authenticator: %+v, %v", p, err)
	}
	if p, err := ch.Authenticate(ctx, Credentials{APIKey: secret}); err != nil || p.Kind != identity.VirtualKey {
		t.Errorf("virtual key in x-api-key: %+v, %v", p, err)
	}
	// A key of the right kind that fails does not fall through.
	revoked := Chain{k, AuthenticatorFunc(func(context.Context, Credentials) (*identity.Principal, error) {
		return &identity.Principal{Kind: identity.User, ID: "fallthrough"}, nil
	})}
	if _, err := revoked.Authenticate(ctx, Credentials{Bearer: KeyPrefix + "00"}); apierr.KindOf(err) != apierr.Unauthenticated {
		t.Errorf("an unknown sk-svc- key fell through the chain: %v", err)
	}
	if _, err := ch.Authenticate(ctx, Credentials{Bearer: "svc-admin-0123456789abcdeX"}); apierr.KindOf(err) != apierr.Unauthenticated {
		t.Errorf("a wrong admin key: %v, want 401", err)
	}
}

// flakyBus is a bus whose Ping can be made to fail, as a Redis outage does.
type flakyBus struct {
	Bus
	down atomic.Bool
}

func (f *flakyBus) Ping(ctx context.Context) error {
	if f.down.Load() {
		return errors.New("bus down")
	}
	return f.Bus.Ping(ctx)
}

// TestBusDownBypassesCache: while the invalidation bus is down, a
// revocation made in another process (so never announced here) holds
// within store.WatchEvery+store.WatchTimeout, not after the cache TTL.
func TestBusDownBypassesCache(t *testing.T) {
	db, err := sqlstore.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	bus := &flakyBus{Bus: kv}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ks := NewSQLKeyStore(db)
	proxy := NewKeys(ks, bus, time.Hour, quiet)
	// The admin's process: same database, and a bus that loses the notice.
	other := memkv.New()
	t.Cleanup(func() { other.Close() })
	admin := NewKeys(ks, other, time.Hour, quiet)
	ctx := context.Background()
	// Lookups are cached only once Run follows (subscribing empties the
	// cache): wait for it, lest the lookup below not be cached at all.
	follow(t, proxy)

	vk, secret, err := admin.Create(ctx, CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := proxy.Authenticate(ctx, Credentials{Bearer: secret}); err != nil {
		t.Fatal(err)
	}
	bus.down.Store(true)
	if _, err := admin.Revoke(ctx, vk.ID); err != nil {
		t.Fatal(err)
	}
	storetest.Eventually(t, 3*time.Second, func() error {
		_, err := proxy.Authenticate(ctx, Credentials{Bearer: secret})
		if err != nil && apierr.KindOf(err) == apierr.Unauthenticated {
			return nil
		}
		return fmt.Errorf("the revoked key is still accepted after the bus went down (err %v)", err)
	})
}
