package auth_test

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/svc-gateway/svc/internal/apierr"
	. "github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// heldStore answers a hash lookup only when the test lets it: what it read
// before a revocation comes back after it.
type heldStore struct {
	KeyStore
	read, proceed chan struct{}
}

func (h *heldStore) VirtualKeyByHash(ctx context.Context, hash string) (VirtualKey, error) {
	vk, err := h.KeyStore.VirtualKeyByHash(ctx, hash)
	if h.read != nil {
		h.read <- struct{}{}
		<-h.proceed
	}
	return vk, err
}

// TestRevokedWhileLookingUp: a lookup that read a key before its
// revocation, and answers after it, does not leave the key cached as
// valid: the next request is refused at once, not after the cache TTL.
func TestRevokedWhileLookingUp(t *testing.T) {
	ctx := context.Background()
	db, err := sqlstore.Open(ctx, "sqlite://"+filepath.Join(t.TempDir(), "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	kv := memkv.New()
	t.Cleanup(func() { kv.Close() })
	hs := &heldStore{KeyStore: NewSQLKeyStore(db)}
	k := NewKeys(hs, kv, time.Hour, slog.New(slog.NewTextHandler(io.Discard, nil)))
	vk, secret, err := k.Create(ctx, CreateParams{Alias: "a"})
	if err != nil {
		t.Fatal(err)
	}
	follow(t, k) // lookups are cached only while Run follows invalidations
	hs.read, hs.proceed = make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := k.Authenticate(ctx, Credentials{Bearer: secret})
		done <- err
	}()
	<-hs.read // the lookup has read the key, still valid
	if _, err := k.Revoke(ctx, vk.ID); err != nil {
		t.Fatal(err)
	}
	hs.proceed <- struct{}{}
	<-done // began before the revocation: its answer may be either
	hs.read = nil
	if _, err := k.Authenticate(ctx, Credentials{Bearer: secret}); err == nil {
		t.Fatal("a revoked key was accepted: the in-flight lookup cached it as valid")
	}
}

// firstHeld holds the first hash lookup until released and counts them all.
type firstHeld struct {
	KeyStore
	reads   atomic.Int64
	held    chan struct{} // closed when the first lookup has read
	release chan struct{}
}

func newFirstHeld(ks KeyStore) *firstHeld {
	return &firstHeld{KeyStore: ks, held: make(chan struct{}), release: make(chan struct{})}
}

func (f *firstHeld) VirtualKeyByHash(ctx context.Context, hash string) (VirtualKey, error) {
	vk, err := f.KeyStore.VirtualKeyByHash(ctx, hash)
	if f.reads.Add(1) == 1 {
		close(f.held)
		<-f.release
	}
	return vk, err
}

// waitHeld waits up to 5 s for the first lookup to be held.
func (f *firstHeld) waitHeld(t *testing.T) {
	t.Helper()
	select {
	case <-f.held:
	case <-time.After(5 * time.Second):
		t.Fatal("no lookup read the store within 5s")
	}
}

func newHeldKeys(t *testing.T) (*Keys, *firstHeld) {
	t.Helper()
	var fh *firstHeld
	k := keysOver(t, time.Hour, func(ks KeyStore) KeyStore { fh = newFirstHeld(ks); return fh })
	return k, fh
}

// TestConcurrentMissesShareARead: a burst of requests with a key no
// process has cached is one store read, not one per request (300 at once
// once took PostgreSQL past its connection limit).
func TestConcurrentMissesShareARead(t *testing.T) {
	k, fh := newHeldKeys(t)
	_, secret, err := k.Create(t.Context(), CreateParams{Alias: "burst"})
	if err != nil {
		t.Fatal(err)
	}
	follow(t, k)
	const n = 20
	var g errgroup.Group
	for range n {
		g.Go(func() error {
			_, err := k.Authenticate(t.Context(), Credentials{Bearer: secret})
			return err
		})
	}
	fh.waitHeld(t)
	// Let the others arrive while the first read is held (up to a
	// second): each either joins it or, arriving later, finds the key
	// cached. Without sharing, a second read comes at once.
	deadline := time.Now().Add(time.Second)
	for fh.reads.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	close(fh.release)
	if err := g.Wait(); err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if got := fh.reads.Load(); got != 1 {
		t.Errorf("%d concurrent lookups of one key read the store %d times, want 1", n, got)
	}
}

// TestMissAfterRevocationDoesNotJoin: a lookup that starts after a
// revocation does not share a read that began before it: it reads the
// store itself and is refused at once.
func TestMissAfterRevocationDoesNotJoin(t *testing.T) {
	k, fh := newHeldKeys(t)
	vk, secret, err := k.Create(t.Context(), CreateParams{Alias: "r"})
	if err != nil {
		t.Fatal(err)
	}
	follow(t, k)
	first := make(chan error, 1)
	go func() {
		_, err := k.Authenticate(t.Context(), Credentials{Bearer: secret})
		first <- err
	}()
	fh.waitHeld(t) // read the key, still valid, and held
	if _, err := k.Revoke(t.Context(), vk.ID); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	_, err = k.Authenticate(ctx, Credentials{Bearer: secret})
	close(fh.release)
	<-first // began before the revocation: its answer may be either
	if apierr.KindOf(err) != apierr.Unauthenticated {
		t.Fatalf("a lookup after the revocation: %v, want Unauthenticated (not the held read's answer)", err)
	}
}
