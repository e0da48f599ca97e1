package auth_test

import (
	"context"
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

func newKeys(t *testing.T, ttl time.Duration) (*Keys, *countingStore) {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	cs := &countingStore{KeyStore: db}
	return NewKeys(cs, kv, ttl, slog.New(slog.NewTextHandler(io.Discard, nil))), cs
}

func TestAuthenticateCachesAndRevokes(t *testing.T) {
	ctx := context.Background()
	k, cs := newKeys(t, time.Minute)
	vk, secret, err := k.Create(ctx, CreateParams{Alias: "a", ModelRestrictions: []string{"gpt-4o"}, RPMLimit: 10})
	if err != nil {
		t.Fatal(err)
	}
	if vk.BudgetPeriod != "monthly" || vk.Hash == "" || len(secret) != len(KeyPrefix)+48 {
		t.Fatalf("created %+v %q", vk, secret)
	}
	for i := 0; i < 5; i++ {
		p, err := k.Authenticate(ctx, secret)
		if err != nil {
			t.Fatal(err)
		}
		if p.ID != vk.ID || p.Kind != identity.VirtualKey || p.RPMLimit != 10 {
			t.Fatalf("principal %+v", p)
		}
	}
	if n := cs.lookups.Load(); n != 1 {
		t.Errorf("store lookups = %d, want 1 (then cached)", n)
	}
	if _, err := k.Revoke(ctx, vk.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Authenticate(ctx, secret); apierr.KindOf(err) != apierr.Unauthenticated {
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
		if _, err := k.Authenticate(ctx, unknown); apierr.KindOf(err) != apierr.Unauthenticated {
			t.Fatalf("unknown key: %v", err)
		}
	}
	if n := cs.lookups.Load(); n != 1 {
		t.Errorf("lookups of an unknown key = %d, want 1 (negative cache)", n)
	}
	for _, bad := range []string{"", "Bearer", "sk-proj-x", KeyPrefix + string(make([]byte, 300))} {
		if _, err := k.Authenticate(ctx, bad); apierr.KindOf(err) != apierr.Unauthenticated {
			t.Errorf("Authenticate(%q) = %v", bad, err)
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
	k.Authenticate(ctx, secret)
	now = now.Add(2 * time.Minute)
	k.Authenticate(ctx, secret)
	if n := cs.lookups.Load(); n != 2 {
		t.Errorf("lookups = %d, want 2 (the entry expired)", n)
	}
}

func TestCreateValidation(t *testing.T) {
	cases := []CreateParams{
		{BudgetPeriod: "hourly"}, {MaxBudgetUSD: -1}, {RPMLimit: -1}, {TPMLimit: -1},
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
	p := &identity.Principal{Models: []string{"gpt-4o-mini", "groq/llama-3.3-70b", "claude-*"}}
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
		if got := AllowsModel(p, c.requested, c.upstream); got != c.want {
			t.Errorf("AllowsModel(%q, %q) = %v, want %v", c.requested, c.upstream, got, c.want)
		}
	}
	if !AllowsModel(&identity.Principal{}, "anything", "anything") {
		t.Error("an empty allow-list must allow every model")
	}
}

func TestPeriods(t *testing.T) {
	now := time.Date(2026, 11, 22, 15, 4, 5, 0, time.UTC) // a Sunday
	cases := []struct {
		period     string
		start, end time.Time
	}{
		{"daily", time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
		{"weekly", time.Date(2026, 11, 16, 0, 0, 0, 0, time.UTC), time.Date(2026, 11, 23, 0, 0, 0, 0, time.UTC)},
		{"monthly", time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		if s, e := PeriodStart(c.period, now), PeriodEnd(c.period, now); !s.Equal(c.start) || !e.Equal(c.end) {
			t.Errorf("%s: got %v–%v, want %v–%v", c.period, s, e, c.start, c.end)
		}
	}
}
