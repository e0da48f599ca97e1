package auth_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	. "github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// subscribed waits until n subscriptions were made on b.
func subscribed(t *testing.T, b *storetest.EndableBus, n int) {
	t.Helper()
	storetest.Eventually(t, 5*time.Second, func() error {
		if got := b.Subscriptions(); got < n {
			return fmt.Errorf("%d subscriptions, want %d", got, n)
		}
		return nil
	})
}

var errBusDown = errors.New("bus down")

// twoProcesses are the proxy's key manager, following bus (its Run
// started: its first Subscribe waits on the gate), and the admin's, in
// another process sharing the database and publishing on adminBus, with
// a key the admin created. The cache TTL is an hour: a stale entry the
// proxy kept would let a revoked key in for the whole test.
type twoProcesses struct {
	proxy, admin *Keys
	lookups      *countingStore // the proxy's
	id, secret   string
}

func newTwoProcesses(t *testing.T, bus *storetest.EndableBus, adminBus Bus) *twoProcesses {
	t.Helper()
	db, err := sqlstore.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	p := &twoProcesses{lookups: &countingStore{KeyStore: NewSQLKeyStore(db)}}
	p.proxy = NewKeys(p.lookups, bus, time.Hour, quiet)
	p.admin = NewKeys(NewSQLKeyStore(db), adminBus, time.Hour, quiet)
	vk, secret, err := p.admin.Create(t.Context(), CreateParams{})
	if err != nil {
		t.Fatal(err)
	}
	p.id, p.secret = vk.ID, secret
	storetest.Background(t, p.proxy.Run)
	return p
}

// cache makes the proxy cache its lookup of the key: two lookups in a row,
// the second from the cache.
func (p *twoProcesses) cache(t *testing.T) {
	t.Helper()
	storetest.Eventually(t, 5*time.Second, func() error {
		if _, err := p.proxy.Authenticate(t.Context(), Credentials{Bearer: p.secret}); err != nil {
			t.Fatal(err)
		}
		n := p.lookups.lookups.Load()
		if _, err := p.proxy.Authenticate(t.Context(), Credentials{Bearer: p.secret}); err != nil {
			t.Fatal(err)
		}
		if p.lookups.lookups.Load() != n {
			return errors.New("the proxy does not cache the lookup")
		}
		return nil
	})
}

// revoke revokes the key in the admin's process.
func (p *twoProcesses) revoke(t *testing.T) {
	t.Helper()
	if _, err := p.admin.Revoke(t.Context(), p.id); err != nil {
		t.Fatal(err)
	}
}

// refused waits until the proxy refuses the key, for up to 5 s (the key
// cache's TTL is an hour: only a followed change gets there in time).
func (p *twoProcesses) refused(t *testing.T, what string) {
	t.Helper()
	storetest.Eventually(t, 5*time.Second, func() error {
		_, err := p.proxy.Authenticate(t.Context(), Credentials{Bearer: p.secret})
		if err != nil && apierr.KindOf(err) == apierr.Unauthenticated {
			return nil
		}
		return fmt.Errorf("%s: the revoked key is still accepted (err %v)", what, err)
	})
}

// gated is a gated bus over a fresh memkv, and another memkv: a bus the
// proxy does not hear.
func gated(t *testing.T) (*storetest.EndableBus, *memkv.KV) {
	bus, other := &storetest.EndableBus{KV: memkv.New(), Gate: make(chan error)}, memkv.New()
	t.Cleanup(func() { bus.KV.Close(); other.Close() })
	return bus, other
}

// TestRevocationNoticeFollowed: a revocation announced on the bus the
// proxy follows evicts its cached lookup.
func TestRevocationNoticeFollowed(t *testing.T) {
	bus, _ := gated(t)
	p := newTwoProcesses(t, bus, bus.KV)
	bus.Gate <- nil
	subscribed(t, bus, 1)
	p.cache(t)
	p.revoke(t)
	p.refused(t, "notice followed")
}

// TestNoCacheUntilSubscribed: until Run has subscribed, and while a
// Subscribe fails, nothing is cached (a notice would not be heard), so a
// revocation holds at once; once subscribed, lookups are cached; when the
// subscription ends a notice may have been lost, so the cache is emptied
// (a revocation the proxy could not hear holds at once) and unused.
func TestNoCacheUntilSubscribed(t *testing.T) {
	bus, other := gated(t)
	p := newTwoProcesses(t, bus, other)
	p.uncached(t, "before the subscription")
	bus.Gate <- errBusDown // the retry waits on the gate: not answered
	p.uncached(t, "after a failed Subscribe")
	bus.Gate <- nil
	subscribed(t, bus, 1)
	p.cache(t)
	p.revoke(t)
	bus.EndAll() // the next Subscribe waits on the gate: not answered
	p.refused(t, "subscription ended")
	p.uncached(t, "after the subscription ended")
}

// uncached checks that two lookups in a row both reach the store.
func (p *twoProcesses) uncached(t *testing.T, when string) {
	t.Helper()
	n := p.lookups.lookups.Load()
	for range 2 {
		_, _ = p.proxy.Authenticate(t.Context(), Credentials{Bearer: p.secret})
	}
	if got := p.lookups.lookups.Load() - n; got != 2 {
		t.Errorf("%s: %d of 2 lookups reached the store, want both (nothing cached)", when, got)
	}
}

// failingPublisher fails its first fails Publish calls, and counts the
// calls made since fail armed it.
type failingPublisher struct {
	Bus
	mu    sync.Mutex
	fails int
	calls int
}

func (b *failingPublisher) Publish(ctx context.Context, channel string, msg []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if b.fails > 0 {
		b.fails--
		return errBusDown
	}
	return b.Bus.Publish(ctx, channel, msg)
}

// fail makes the next n Publish calls fail, and starts counting calls.
func (b *failingPublisher) fail(n int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fails, b.calls = n, 0
}

// asked waits until Publish was called n times since fail, for up to within.
func (b *failingPublisher) asked(t *testing.T, n int, within time.Duration) {
	t.Helper()
	storetest.Eventually(t, within, func() error {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.calls < n {
			return fmt.Errorf("Publish called %d times since the bus failed, want %d (the notice is not retried)", b.calls, n)
		}
		return nil
	})
}

// TestRevocationNoticeRetried: a revocation whose notice could not be
// published is announced again until it is, and the proxy that cached the
// key hears it (here after two failed attempts, the notice published on
// the third, about 2*store.AnnounceRetry after the revocation: well inside
// the hour the proxy would cache it).
func TestRevocationNoticeRetried(t *testing.T) {
	bus, _ := gated(t)
	admin := &failingPublisher{Bus: bus.KV}
	p := newTwoProcesses(t, bus, admin)
	bus.Gate <- nil
	subscribed(t, bus, 1)
	p.cache(t)
	admin.fail(2)
	p.revoke(t)
	admin.asked(t, 3, 2*store.AnnounceRetry+3*time.Second)
	p.refused(t, "notice published on the third attempt")
}
