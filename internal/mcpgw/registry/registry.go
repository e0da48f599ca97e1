package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/egress"
	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/secret"
	"github.com/svc-gateway/svc/internal/store"
)

// DefaultReloadEvery is how often Run reloads every registration, so that a
// missed change notice heals.
const DefaultReloadEvery = 30 * time.Second

// Options are a Registry's parts and settings.
type Options struct {
	Store  Store          // required
	Sealer *secret.Sealer // required: seals and opens credentials
	// Bus announces changes to other processes; nil: they see them at the
	// next full reload only.
	Bus Bus
	// Egress checks base_url at registration (CheckURL); its AllowPrivate
	// admits internal addresses.
	Egress egress.Policy
	// Validate are the deployment's settings for mcpgw.Server.Validate.
	Validate mcpgw.ValidateOptions
	// ReloadEvery is the period of Run's full reload; 0 is
	// DefaultReloadEvery.
	ReloadEvery time.Duration
	Log         *slog.Logger     // nil: slog.Default()
	Now         func() time.Time // nil: time.Now
}

// Registry is the registered MCP servers: the admin operations, which write
// through the Store and announce each change, and the process's view of
// them, which the gateway reads on every call without touching SQL. Its
// methods are safe for concurrent use. Load (or Run) fills the view.
type Registry struct {
	store  Store
	sealer *secret.Sealer
	bus    Bus
	egress egress.Policy
	vopts  mcpgw.ValidateOptions
	every  time.Duration
	log    *slog.Logger
	now    func() time.Time

	snap atomic.Pointer[snapshot]
	// mu serialises the reads from the store that replace the snapshot, so
	// a later read (a newer state) is always applied after an earlier one.
	mu sync.Mutex

	hooksMu sync.RWMutex
	hooks   []func(id string)

	running atomic.Bool
}

// snapshot is an immutable view: entries by id and the servers in id order.
type snapshot struct {
	byID map[string]*entry
	list []*mcpgw.Server
}

// entry is one registration as loaded: the redacted server (never
// modified once published) and its sealed credential.
type entry struct {
	srv     *mcpgw.Server
	sealed  []byte
	version int64
}

// same reports whether e and o are the same row at the same version.
func (e *entry) same(o *entry) bool {
	return e.version == o.version && e.srv.CreatedAt.Equal(o.srv.CreatedAt)
}

// New returns a Registry over o.Store. Its view is empty until Load or Run.
func New(o Options) *Registry {
	if o.Store == nil || o.Sealer == nil {
		panic("registry: New needs a Store and a Sealer")
	}
	r := &Registry{
		store: o.Store, sealer: o.Sealer, bus: o.Bus, egress: o.Egress, vopts: o.Validate,
		every: o.ReloadEvery, log: o.Log, now: o.Now,
	}
	if r.every <= 0 {
		r.every = DefaultReloadEvery
	}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.now == nil {
		r.now = time.Now
	}
	r.snap.Store(&snapshot{byID: map[string]*entry{}})
	return r
}

// Server returns the registration of id as this process knows it, or an
// error matching store.ErrNotFound. The Server is shared and must not be
// modified; it carries no credential (see Credential) and env values are
// masked. A map read, no SQL, no allocation.
func (r *Registry) Server(_ context.Context, id string) (*mcpgw.Server, error) {
	if e, ok := r.snap.Load().byID[id]; ok {
		return e.srv, nil
	}
	return nil, store.ErrNotFound
}

// Servers returns every registration as this process knows it, ordered by
// id. The Servers are shared and must not be modified.
func (r *Registry) Servers(context.Context) ([]*mcpgw.Server, error) {
	return slices.Clone(r.snap.Load().list), nil
}

// Credential returns the upstream credential of server id: its auth_token
// ("" when none) and a stdio server's environment (nil when none), opened
// from this process's view (no SQL). Unknown: an error matching
// store.ErrNotFound. The values are secrets: never log them.
func (r *Registry) Credential(_ context.Context, id string) (token string, env map[string]string, err error) {
	e, ok := r.snap.Load().byID[id]
	if !ok {
		return "", nil, store.ErrNotFound
	}
	c, err := open(r.sealer, id, e.sealed)
	if err != nil {
		return "", nil, err
	}
	return c.AuthToken, c.Env, nil
}

// OnChange registers f, called with the id of every server whose
// registration this process's view added, changed or removed (after the
// view changed; by Run's goroutine or an admin call's). f must not block:
// it drops what the caller holds of the server (catalog entries, upstream
// sessions).
func (r *Registry) OnChange(f func(id string)) {
	r.hooksMu.Lock()
	r.hooks = append(r.hooks, f)
	r.hooksMu.Unlock()
}

func (r *Registry) notify(ids []string) {
	if len(ids) == 0 {
		return
	}
	r.hooksMu.RLock()
	hooks := r.hooks
	r.hooksMu.RUnlock()
	for _, id := range ids {
		for _, f := range hooks {
			f(id)
		}
	}
}

// Load reads every registration from the store and makes it the view.
// Rows that cannot be read are logged and keep their previous state.
func (r *Registry) Load(ctx context.Context) error {
	r.mu.Lock()
	recs, err := r.store.List(ctx)
	if err != nil {
		r.mu.Unlock()
		return fmt.Errorf("registry: load servers: %w", err)
	}
	old := r.snap.Load()
	byID := make(map[string]*entry, len(recs))
	var changed []string
	for i := range recs {
		e, err := load(&recs[i])
		if err != nil {
			r.log.Error("registry: a stored server cannot be read; keeping its previous state", "id", recs[i].ID, "err", err)
			if prev, ok := old.byID[recs[i].ID]; ok {
				byID[recs[i].ID] = prev
			}
			continue
		}
		byID[e.srv.ID] = e
		if prev, ok := old.byID[e.srv.ID]; !ok || !prev.same(e) {
			changed = append(changed, e.srv.ID)
		}
	}
	for id := range old.byID {
		if _, ok := byID[id]; !ok {
			changed = append(changed, id)
		}
	}
	r.snap.Store(newSnapshot(byID))
	r.mu.Unlock()
	slices.Sort(changed)
	r.notify(changed)
	return nil
}

// reload reads the registration of id from the store and puts it in the
// view (or removes it there).
func (r *Registry) reload(ctx context.Context, id string) error {
	if id == "" {
		return r.Load(ctx)
	}
	r.mu.Lock()
	rec, err := r.store.Get(ctx, id)
	var e *entry
	switch {
	case errors.Is(err, store.ErrNotFound):
	case err != nil:
		r.mu.Unlock()
		return err
	default:
		if e, err = load(&rec); err != nil {
			r.mu.Unlock()
			return err
		}
	}
	old := r.snap.Load()
	prev, had := old.byID[id]
	if (e == nil && !had) || (e != nil && had && prev.same(e)) {
		r.mu.Unlock()
		return nil
	}
	byID := maps.Clone(old.byID)
	if e == nil {
		delete(byID, id)
	} else {
		byID[id] = e
	}
	r.snap.Store(newSnapshot(byID))
	r.mu.Unlock()
	r.notify([]string{id})
	return nil
}

func load(rec *Record) (*entry, error) {
	s, err := decode(rec)
	if err != nil {
		return nil, err
	}
	return &entry{srv: s, sealed: rec.Sealed, version: rec.Version}, nil
}

func newSnapshot(byID map[string]*entry) *snapshot {
	list := make([]*mcpgw.Server, 0, len(byID))
	for _, e := range byID {
		list = append(list, e.srv)
	}
	slices.SortFunc(list, func(a, b *mcpgw.Server) int { return strings.Compare(a.ID, b.ID) })
	return &snapshot{byID: byID, list: list}
}

var _ mcpgw.Servers = (*Registry)(nil)
