package registry_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/mcpgw/registry"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// run runs r until the test ends (it does not wait: subscribedBus.wait
// does, where a test needs Run to follow the bus).
func run(t *testing.T, r *registry.Registry) {
	t.Helper()
	storetest.Background(t, r.Run)
}

// hook records OnChange ids.
type hook struct {
	mu  sync.Mutex
	ids []string
}

func (h *hook) add(id string) { h.mu.Lock(); h.ids = append(h.ids, id); h.mu.Unlock() }

func (h *hook) seen(id string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, x := range h.ids {
		if x == id {
			n++
		}
	}
	return n
}

func nameOf(r *registry.Registry, id string) string {
	s, err := r.Server(context.Background(), id)
	if err != nil {
		return ""
	}
	return s.Name
}

func gone(r *registry.Registry, id string) bool {
	_, err := r.Server(context.Background(), id)
	return errors.Is(err, store.ErrNotFound)
}

// exerciseSync: a change made through one Registry reaches another over
// the same SQL and bus within a second, by the bus (the full reload is an
// hour away).
func exerciseSync(t *testing.T, db *sqlstore.DB, busA, busB registry.Bus) {
	ctx := t.Context()
	hourly := func(o *registry.Options) { o.ReloadEvery = time.Hour }
	var (
		a, b *registry.Registry
		hb   hook
	)
	subA, subB := subscribed(busA), subscribed(busB)
	a, b = newRegistry(db, subA, hourly), newRegistry(db, subB, hourly)
	b.OnChange(hb.add)
	run(t, a)
	run(t, b)
	subA.wait(t) // both follow the bus now: no notice is missed
	subB.wait(t)

	s := bearer("github")
	if _, err := a.Create(ctx, s); err != nil {
		t.Fatalf("Create = %v", err)
	}
	storetest.Until(t, time.Second, "B sees A's create", func() bool { return nameOf(b, "github") == s.Name })
	if tok, _, err := b.Credential(ctx, "github"); err != nil || tok != secretToken {
		t.Errorf("B's Credential = %q, %v; want the token", tok, err)
	}
	s.Name = "renamed"
	if _, err := a.Update(ctx, "github", s); err != nil {
		t.Fatalf("Update = %v", err)
	}
	storetest.Until(t, time.Second, "B sees A's update", func() bool { return nameOf(b, "github") == "renamed" })
	if _, err := b.Update(ctx, "github", mcpgw.Server{Name: "by B", BaseURL: s.BaseURL}); err != nil {
		t.Fatalf("B's Update = %v", err)
	}
	storetest.Until(t, time.Second, "A sees B's update", func() bool { return nameOf(a, "github") == "by B" })
	if err := a.Delete(ctx, "github"); err != nil {
		t.Fatalf("Delete = %v", err)
	}
	storetest.Until(t, time.Second, "B sees A's delete", func() bool { return gone(b, "github") })
	storetest.Until(t, time.Second, "B's OnChange", func() bool { return hb.seen("github") >= 4 })
}

func TestSyncMemKV(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		bus := memkv.New()
		exerciseSync(t, db, bus, bus)
	})
}

func TestSyncRedis(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		bus := storetest.RedisKV(t)
		exerciseSync(t, db, bus, bus)
	})
}

// TestFullReloadHeals: a change no notice announced (written to the store
// directly) is seen at the next full reload.
func TestFullReloadHeals(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		writer := newRegistry(db, nil, nil) // announces to nobody
		r := newRegistry(db, memkv.New(), func(o *registry.Options) { o.ReloadEvery = 2 * time.Second })
		run(t, r)
		if _, err := writer.Create(t.Context(), bearer("quiet")); err != nil {
			t.Fatalf("Create = %v", err)
		}
		storetest.Until(t, 4*time.Second, "full reload", func() bool { return nameOf(r, "quiet") != "" })
		if err := writer.Delete(t.Context(), "quiet"); err != nil {
			t.Fatalf("Delete = %v", err)
		}
		storetest.Until(t, 4*time.Second, "full reload of a delete", func() bool { return gone(r, "quiet") })
	})
}

// flakyBus is a memkv bus that can be down: Ping and Subscribe fail, and
// its subscriptions end.
type flakyBus struct {
	*memkv.KV
	down atomic.Bool
	mu   sync.Mutex
	subs []store.Subscription
}

func (f *flakyBus) Ping(ctx context.Context) error {
	if f.down.Load() {
		return errors.New("down")
	}
	return f.KV.Ping(ctx)
}

func (f *flakyBus) Subscribe(ctx context.Context, channel string) (store.Subscription, error) {
	if f.down.Load() {
		return nil, errors.New("down")
	}
	s, err := f.KV.Subscribe(ctx, channel)
	if err == nil {
		f.mu.Lock()
		f.subs = append(f.subs, s)
		f.mu.Unlock()
	}
	return s, err
}

func (f *flakyBus) setDown(down bool, closeSubs bool) {
	f.down.Store(down)
	if closeSubs {
		f.mu.Lock()
		for _, s := range f.subs {
			_ = s.Close()
		}
		f.subs = nil
		f.mu.Unlock()
	}
}

// TestBusRecoveryHeals: after the bus comes back, the view reloads at once,
// not at the next full reload.
func TestBusRecoveryHeals(t *testing.T) {
	for _, closeSubs := range []bool{false, true} {
		name := "pings fail"
		if closeSubs {
			name = "subscription ends"
		}
		t.Run(name, func(t *testing.T) {
			db := storetest.OpenSQL(t, storetest.SQLBackends[0].URL(t))
			bus := &flakyBus{KV: memkv.New()}
			r := newRegistry(db, bus, func(o *registry.Options) { o.ReloadEvery = time.Hour })
			run(t, r)
			time.Sleep(100 * time.Millisecond)
			bus.setDown(true, closeSubs)
			time.Sleep(1500 * time.Millisecond) // a tick sees it down
			writer := newRegistry(db, nil, nil)
			if _, err := writer.Create(t.Context(), bearer("missed")); err != nil {
				t.Fatalf("Create = %v", err)
			}
			time.Sleep(1200 * time.Millisecond)
			if !gone(r, "missed") {
				t.Fatal("the view changed while the bus was down and no reload was due: the test proves nothing")
			}
			bus.setDown(false, false)
			storetest.Until(t, 2500*time.Millisecond, "reload after the bus came back", func() bool { return nameOf(r, "missed") != "" })
		})
	}
}

// TestRunOnce: a second Run of the same Registry, while the first runs,
// is refused at once.
func TestRunOnce(t *testing.T) {
	db := storetest.OpenSQL(t, storetest.SQLBackends[0].URL(t))
	bus := &enteredBus{KV: memkv.New(), entered: make(chan struct{})}
	r := newRegistry(db, bus, nil)
	run(t, r)
	// Run subscribes first thing: once it has, it is running.
	select {
	case <-bus.entered:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not subscribe within 5s")
	}
	// A second Run that ran would return nil when its ctx ends.
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := r.Run(ctx); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second Run = %v, want the already-running error", err)
	}
}

// enteredBus is a memkv bus that closes entered at its first Subscribe.
type enteredBus struct {
	*memkv.KV
	once    sync.Once
	entered chan struct{}
}

func (b *enteredBus) Subscribe(ctx context.Context, channel string) (store.Subscription, error) {
	b.once.Do(func() { close(b.entered) })
	return b.KV.Subscribe(ctx, channel)
}

// subscribedBus is a bus that closes done once a Subscribe has succeeded.
type subscribedBus struct {
	registry.Bus
	once sync.Once
	done chan struct{}
}

func subscribed(b registry.Bus) *subscribedBus {
	return &subscribedBus{Bus: b, done: make(chan struct{})}
}

func (b *subscribedBus) Subscribe(ctx context.Context, channel string) (store.Subscription, error) {
	s, err := b.Bus.Subscribe(ctx, channel)
	if err == nil {
		b.once.Do(func() { close(b.done) })
	}
	return s, err
}

// Ping is the wrapped bus's (memkv and rediskv have one), so Run checks
// the bus as it would unwrapped.
func (b *subscribedBus) Ping(ctx context.Context) error {
	if p, ok := b.Bus.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	return nil
}

// wait waits up to 5 s for a Subscribe to have succeeded.
func (b *subscribedBus) wait(t *testing.T) {
	t.Helper()
	select {
	case <-b.done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not subscribe within 5s")
	}
}
