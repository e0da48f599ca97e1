package route

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/store"
)

// ChangedChannel is the KV channel on which a new routing config version is
// announced (the message is the version, in decimal).
const ChangedChannel = "route:changed"

// pollEvery is how often Run checks the stored version, so that a lost
// notification still converges within a second.
const pollEvery = time.Second

// updateAttempts bounds Update's retries on a version conflict.
const updateAttempts = 10

// Live holds the current routing configuration of this process and keeps it
// in step with the store: Update changes it everywhere, Run follows changes
// made by other processes.
type Live struct {
	store ConfigStore
	kv    store.Bus
	log   *slog.Logger

	cur atomic.Pointer[liveConfig]
	mu  sync.Mutex // serialises swaps so an older version never replaces a newer one
}

type liveConfig struct {
	cfg     Config
	version int64
}

// NewLive returns a Live over s that announces changes on the bus kv (which
// may be nil: then only polling propagates them). Until Load or Run has read
// the store, Current is the empty configuration.
func NewLive(s ConfigStore, kv store.Bus, log *slog.Logger) *Live {
	if log == nil {
		log = slog.Default()
	}
	l := &Live{store: s, kv: kv, log: log}
	l.cur.Store(&liveConfig{})
	return l
}

// Current is the configuration in force. It must not be modified. It takes
// no lock and allocates nothing: the hot path calls it per request.
func (l *Live) Current() *Config { return &l.cur.Load().cfg }

// Version is the version of Current (0 before anything was saved).
func (l *Live) Version() int64 { return l.cur.Load().version }

// Load reads the stored configuration and makes it current.
func (l *Live) Load(ctx context.Context) error {
	c, v, err := l.store.LoadRouting(ctx)
	if err != nil {
		return fmt.Errorf("route: load routing config: %w", err)
	}
	l.swap(c, v)
	return nil
}

// swap makes c current unless a newer version already is.
func (l *Live) swap(c Config, v int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if cur := l.cur.Load(); cur.version > v {
		return
	}
	l.cur.Store(&liveConfig{cfg: c, version: v})
}

// Update applies fn to the stored configuration, validates the result and
// saves it, retrying on a concurrent change; then makes it current and
// announces it on ChangedChannel. An error of fn is returned as is.
func (l *Live) Update(ctx context.Context, fn func(*Config) error) (Config, error) {
	for range updateAttempts {
		c, v, err := l.store.LoadRouting(ctx)
		if err != nil {
			return Config{}, apierr.Wrap(apierr.Unavailable, "store_unavailable", "could not read the routing configuration", err)
		}
		next := c.Clone()
		if err := fn(&next); err != nil {
			return Config{}, err
		}
		if err := next.Validate(); err != nil {
			return Config{}, err
		}
		nv, err := l.store.SaveRouting(ctx, next, v)
		if errors.Is(err, store.ErrConflict) {
			continue
		}
		if err != nil {
			return Config{}, apierr.Wrap(apierr.Unavailable, "store_unavailable", "could not save the routing configuration", err)
		}
		l.swap(next, nv)
		if l.kv != nil {
			if err := l.kv.Publish(ctx, ChangedChannel, []byte(strconv.FormatInt(nv, 10))); err != nil {
				// Stored: other processes converge by polling within a second.
				l.log.Warn("routing config saved but the change notice was not published", "version", nv, "err", err)
			}
		}
		return next.Clone(), nil
	}
	return Config{}, apierr.New(apierr.Conflict, "routing_config_busy",
		"the routing configuration kept changing concurrently; try again")
}

// Run follows changes until ctx ends: it reloads on every notice on
// ChangedChannel and polls the stored version every second. It returns nil
// when ctx ends.
func (l *Live) Run(ctx context.Context) error {
	if err := l.Load(ctx); err != nil && ctx.Err() == nil {
		l.log.Warn("routing config: initial load failed; retrying", "err", err)
	}
	if l.kv != nil {
		var wg sync.WaitGroup
		defer wg.Wait()
		wg.Go(func() { _ = store.Follow(ctx, l.kv, ChangedChannel, l.notices(ctx)) })
	}
	return store.Poll(ctx, pollEvery, l.refresh, func(err error) {
		l.log.Warn("routing config: reload failed", "err", err)
	})
}

// notices are the hooks of Run's follower: a notice of a version newer
// than the current one reloads (beside the poll: swap keeps the newest);
// a failed Subscribe is retried every pollEvery, the poll alone
// propagating changes meanwhile.
func (l *Live) notices(ctx context.Context) store.FollowHooks {
	return store.FollowHooks{
		Message: func(msg []byte) {
			if v, err := strconv.ParseInt(string(msg), 10, 64); err == nil && v <= l.Version() {
				return // ours, or already seen
			}
			if err := l.refresh(ctx); err != nil && ctx.Err() == nil {
				l.log.Warn("routing config: reload failed", "err", err)
			}
		},
		Lost: func(err error) error {
			if ctx.Err() == nil && !errors.Is(err, store.ErrSubscriptionEnded) {
				l.log.Warn("routing config: subscribe failed; polling only", "err", err)
			}
			return nil
		},
		Retry: pollEvery,
	}
}

// refresh reloads when the stored version differs from the current one.
func (l *Live) refresh(ctx context.Context) error {
	c, v, err := l.store.LoadRouting(ctx)
	if err != nil {
		return err
	}
	if v != l.Version() {
		l.swap(c, v)
	}
	return nil
}
