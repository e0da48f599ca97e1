package access

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/store"
)

// Channel carries "<requester>\n<server id>" for a requester whose grants
// on a server changed; every process drops that cached set. A message it
// cannot read drops every cached set.
const Channel = "mcp:grants:changed"

// Bus carries grant changes between processes; Ping tells whether it is
// up (while it is not, changes may be lost, so cached sets are not
// trusted). store.KV implements it.
type Bus interface {
	store.Bus
	Ping(ctx context.Context) error
}

// Source reads the granted tools; SQLStore implements it.
type Source interface {
	GrantedTools(ctx context.Context, userID, serverID string) ([]string, error)
}

// DefaultTTL bounds how long a cached set is used when no change notice
// arrives (a lost notice, a dropped message).
const DefaultTTL = 10 * time.Second

// maxCached bounds the cache; when full it is emptied (cheap, rare).
const maxCached = 100_000

// loadTimeout bounds one shared load of a set (it outlives the caller that
// started it, whose context may end first).
const loadTimeout = 10 * time.Second

// Grants answers which tools a caller's approved access requests grant on
// a server, from an in-process cache per (requester, server) that expires
// after a TTL and is invalidated across processes over the bus. The cache
// is used only while Run follows the bus and the bus answers its pings;
// otherwise every question goes to the Source. Concurrent misses of one
// set share one load.
type Grants struct {
	src Source
	bus Bus
	// notices announces grant changes, again later when it cannot at once.
	notices *store.Announcer
	ttl     time.Duration
	now     func() time.Time
	log     *slog.Logger

	trust store.Trust // Run is subscribed to Channel and the bus answers
	loads singleflight.Group

	mu    sync.Mutex
	cache map[grantKey]grantEntry
	// epoch counts evictions: a load started before one does not fill the
	// cache (it may have read the state from before the change).
	epoch uint64

	hooksMu sync.RWMutex
	hooks   []func(userID, serverID string)
}

type grantKey struct{ user, server string }

type grantEntry struct {
	tools   []string // sorted, shared: never modified
	expires time.Time
}

// NewGrants returns grants read from src and kept coherent over bus; ttl
// bounds how long a set is cached (0: DefaultTTL; negative: no caching).
// Call Run for the cache to be used.
func NewGrants(src Source, bus Bus, ttl time.Duration, log *slog.Logger) *Grants {
	if ttl == 0 {
		ttl = DefaultTTL
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// A notice is retried for as long as another process may cache the
	// grants it names (the Announcer keeps a minimum).
	notices := &store.Announcer{Bus: bus, Channel: Channel, For: ttl, Log: log}
	return &Grants{src: src, bus: bus, ttl: ttl, now: time.Now, log: log, notices: notices, cache: map[grantKey]grantEntry{}}
}

// Granted reports whether an approved access request grants tool on
// serverID to p. It implements mcpgw.Grants.
func (g *Grants) Granted(ctx context.Context, p *identity.Principal, serverID, tool string) (bool, error) {
	tools, err := g.lookup(ctx, p, serverID)
	if err != nil {
		return false, err
	}
	_, ok := slices.BinarySearch(tools, tool)
	return ok, nil
}

// Tools is the set of tools p is granted on serverID, sorted (empty when
// none), for tools/list.
func (g *Grants) Tools(ctx context.Context, p *identity.Principal, serverID string) ([]string, error) {
	tools, err := g.lookup(ctx, p, serverID)
	if err != nil {
		return nil, err
	}
	return slices.Clone(tools), nil
}

func (g *Grants) lookup(ctx context.Context, p *identity.Principal, serverID string) ([]string, error) {
	if p == nil || p.Kind == identity.Anonymous || p.ID == "" || serverID == "" {
		return nil, nil
	}
	k := grantKey{user: p.Caller(), server: serverID}
	if !g.trusted() {
		tools, err := g.src.GrantedTools(ctx, k.user, k.server)
		if err != nil {
			return nil, unavailable(err)
		}
		return tools, nil
	}
	now := g.now()
	g.mu.Lock()
	e, ok := g.cache[k]
	epoch := g.epoch
	g.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.tools, nil
	}
	// The epoch is part of the flight's key: a caller after an eviction or
	// a flush never shares a load begun before it.
	ch := g.loads.DoChan(k.user+"\n"+k.server+"\n"+strconv.FormatUint(epoch, 10), func() (any, error) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), loadTimeout)
		defer cancel()
		tools, err := g.src.GrantedTools(lctx, k.user, k.server)
		if err != nil {
			return nil, err
		}
		g.fill(k, tools, epoch, now)
		return tools, nil
	})
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case res := <-ch:
		if res.Err != nil {
			return nil, unavailable(res.Err)
		}
		return res.Val.([]string), nil
	}
}

// fill caches tools for k unless an eviction happened since epoch was read
// or the cache is not to be trusted now.
func (g *Grants) fill(k grantKey, tools []string, epoch uint64, now time.Time) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.epoch != epoch || !g.trusted() {
		return
	}
	if len(g.cache) >= maxCached {
		clear(g.cache)
	}
	g.cache[k] = grantEntry{tools: tools, expires: now.Add(g.ttl)}
}

func (g *Grants) trusted() bool {
	return g.ttl > 0 && g.trust.Trusted()
}

func unavailable(err error) error {
	return apierr.Wrap(apierr.Unavailable, "store_unavailable", "tool grants unavailable", err)
}

// Changed drops the cached set of userID on serverID here and tells every
// other process to. A publish that fails is returned and tried again every
// second (store.Announcer); every process notices an outage of the bus
// within about a second and a half and stops trusting its cache until it
// is back (Run).
func (g *Grants) Changed(ctx context.Context, userID, serverID string) error {
	g.evict(grantKey{user: userID, server: serverID})
	if err := g.notices.Announce(ctx, userID+"\n"+serverID); err != nil {
		return fmt.Errorf("access: publish grant change (retried every second): %w", err)
	}
	return nil
}

func (g *Grants) evict(k grantKey) {
	g.mu.Lock()
	g.epoch++
	delete(g.cache, k)
	g.mu.Unlock()
	g.notify(k.user, k.server)
}

// flush drops every cached set and tells the change hooks.
func (g *Grants) flush() {
	g.drop()
	g.notify("", "")
}

func (g *Grants) drop() {
	g.mu.Lock()
	g.epoch++
	clear(g.cache)
	g.mu.Unlock()
}

// OnChange registers f, called after this process learnt that the grants
// of userID on serverID may have changed (a change made here or announced
// by another process), with both empty when any grant may have (the
// cached sets were all dropped). f must not block: it marks stale what
// the caller derived from the grants (the MCP sessions' tool lists).
func (g *Grants) OnChange(f func(userID, serverID string)) {
	g.hooksMu.Lock()
	g.hooks = append(g.hooks, f)
	g.hooksMu.Unlock()
}

func (g *Grants) notify(userID, serverID string) {
	g.hooksMu.RLock()
	hooks := g.hooks
	g.hooksMu.RUnlock()
	for _, f := range hooks {
		f(userID, serverID)
	}
}

// Run follows changes from every process until ctx ends, and returns nil
// then. While it is subscribed (and the bus answers its pings, every
// second) the cache is used; when the subscription fails it retries every
// second, the cache unused meanwhile; when the bus stops answering a ping
// the cache is emptied and unused until it answers again.
func (g *Grants) Run(ctx context.Context) error {
	return g.trust.Run(ctx, g.bus, Channel, store.TrustHooks{
		// When a subscription is made, entries cached before we listened
		// may have missed a change; on a flip of the bus, one made while
		// it was down.
		Flush:      g.flush,
		BusFlipped: g.busFlipped,
		Message:    g.changeNotice,
		Lost: func(err error) error {
			switch {
			case ctx.Err() != nil:
				g.drop() // shutting down: nothing to tell
			case errors.Is(err, store.ErrSubscriptionEnded):
				g.flush()
			default: // the cache stays unused until a subscription is made
				g.log.Warn("MCP grant change subscription failed; retrying", "err", err)
			}
			return nil
		},
	})
}

// changeNotice applies a message of Channel: it drops the set it names,
// or every set when it names none.
func (g *Grants) changeNotice(msg []byte) {
	user, server, ok := strings.Cut(string(msg), "\n")
	if !ok || user == "" || server == "" {
		g.flush()
		return
	}
	g.evict(grantKey{user: user, server: server})
}

// busFlipped logs an outage of the bus (the cache is emptied and unused
// until it ends) and its end.
func (g *Grants) busFlipped(down bool, err error) {
	if down {
		g.log.Warn("MCP grant change bus unreachable: reading grants from the database until it is back", "err", err)
	} else {
		g.log.Info("MCP grant change bus reachable again: grants cached again")
	}
}

var _ mcpgw.Grants = (*Grants)(nil)
