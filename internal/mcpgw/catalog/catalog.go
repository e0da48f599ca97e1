package catalog

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/cache/embed"
	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/store"
)

// Lister lists a server's tools upstream (mcpgw.Upstream is one).
type Lister interface {
	ListTools(ctx context.Context, s *mcpgw.Server) ([]*mcp.Tool, error)
}

// Filter says whether a tool of a server is shown; nil shows every tool.
type Filter func(serverID, tool string) bool

func (f Filter) shows(serverID, tool string) bool { return f == nil || f(serverID, tool) }

// Defaults and limits.
const (
	DefaultRefreshTimeout = 30 * time.Second
	// MaxToolsPerServer is how many of a server's tools are kept.
	MaxToolsPerServer = mcpgw.MaxListLen
	// refreshParallel bounds RefreshAll's concurrent listings.
	refreshParallel = 4
	// maxErrorLen bounds a listing error as the catalog shows it.
	maxErrorLen = 300
)

// Options configure a Catalog; the zero value is the defaults.
type Options struct {
	// Embedder embeds tools and queries [embed.NewLocal()]: pass the
	// semantic cache's.
	Embedder embed.Embedder
	// Visible gives the handlers the caller's filter [every tool shown].
	Visible func(r *http.Request) Filter
	// RefreshTimeout bounds one server's listing and embedding [30s].
	RefreshTimeout time.Duration
	Log            *slog.Logger
	// Now is the clock (tests) [time.Now].
	Now func() time.Time
}

// Catalog holds the registered servers' tools and their embeddings. It is
// safe for concurrent use.
type Catalog struct {
	servers mcpgw.Servers
	lister  Lister
	emb     embed.Embedder
	o       Options

	mu      sync.RWMutex
	entries map[string]*serverEntry // by server id; an entry is never changed once published
	epoch   uint64                  // counts Remove calls
	removed map[string]uint64       // server id → epoch of its last Remove

	fmu     sync.Mutex
	flights map[string]*flight // by server id: the refresh running and the one waiting
}

// serverEntry is one server as indexed.
type serverEntry struct {
	id, name, description string
	tools                 []*indexedTool // sorted by name
	refreshedAt           time.Time      // last good listing (zero: none yet)
	err                   string         // last listing's error, "" when it succeeded
	errAt                 time.Time
}

// indexedTool is one tool and its embedding.
type indexedTool struct {
	tool      *mcp.Tool
	text      string // what was embedded
	vec       []float32
	model     string
	indexedAt time.Time
}

// New returns an empty Catalog over the registrations and the lister; call
// RefreshAll to fill it.
func New(servers mcpgw.Servers, lister Lister, o Options) *Catalog {
	if o.Embedder == nil {
		o.Embedder = embed.NewLocal()
	}
	if o.RefreshTimeout <= 0 {
		o.RefreshTimeout = DefaultRefreshTimeout
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Catalog{
		servers: servers, lister: lister, emb: o.Embedder, o: o,
		entries: map[string]*serverEntry{}, removed: map[string]uint64{}, flights: map[string]*flight{},
	}
}

// RefreshAll lists every registered server (refreshParallel at a time) and
// drops the servers no longer registered. It fails only when the
// registrations cannot be read; each server's failure is recorded in the
// catalog (the server keeps its last good tools) and returned joined.
func (c *Catalog) RefreshAll(ctx context.Context) error {
	servers, err := c.servers.Servers(ctx)
	if err != nil {
		return fmt.Errorf("catalog: read the registrations: %w", err)
	}
	keep := make(map[string]bool, len(servers))
	for _, s := range servers {
		keep[s.ID] = true
	}
	c.mu.RLock()
	var gone []string
	for id := range c.entries {
		if !keep[id] {
			gone = append(gone, id)
		}
	}
	c.mu.RUnlock()
	for _, id := range gone {
		c.Remove(id)
	}
	errs := make([]error, len(servers))
	sem := make(chan struct{}, refreshParallel)
	var wg sync.WaitGroup
	for i, s := range servers {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = c.Refresh(ctx, s.ID)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Remove drops a server's tools at once; a refresh of it still running is
// discarded.
func (c *Catalog) Remove(serverID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.entries, serverID)
	c.epoch++
	c.removed[serverID] = c.epoch
}

// flight is one refresh of a server, run once, awaited by any number.
type flight struct {
	done chan struct{}
	err  error
	next *flight // the follow-up run requested while this one runs
}

// Refresh lists one server's tools upstream and re-indexes them, waiting at
// most until ctx ends (the refresh itself goes on, bounded by
// RefreshTimeout). A server no longer registered is removed. Calls that come
// while a refresh of the server runs share one follow-up refresh.
func (c *Catalog) Refresh(ctx context.Context, serverID string) error {
	c.fmu.Lock()
	f := c.flights[serverID]
	switch {
	case f == nil:
		f = &flight{done: make(chan struct{})}
		c.flights[serverID] = f
		go c.run(context.WithoutCancel(ctx), serverID, f)
	case f.next != nil:
		f = f.next
	default:
		f.next = &flight{done: make(chan struct{})}
		f = f.next
	}
	c.fmu.Unlock()
	select {
	case <-f.done:
		return f.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// run runs f, then the follow-ups requested meanwhile, one after another.
func (c *Catalog) run(ctx context.Context, serverID string, f *flight) {
	for f != nil {
		f.err = c.refresh(ctx, serverID)
		close(f.done)
		c.fmu.Lock()
		if f = f.next; f != nil {
			c.flights[serverID] = f
		} else {
			delete(c.flights, serverID)
		}
		c.fmu.Unlock()
	}
}

// refresh lists and indexes one server and publishes the result.
func (c *Catalog) refresh(ctx context.Context, serverID string) error {
	ctx, cancel := context.WithTimeout(ctx, c.o.RefreshTimeout)
	defer cancel()
	c.mu.RLock()
	epoch, prev := c.epoch, c.entries[serverID]
	c.mu.RUnlock()

	s, err := c.servers.Server(ctx, serverID)
	if errors.Is(err, store.ErrNotFound) {
		c.Remove(serverID)
		return nil
	}
	if err != nil {
		return c.failed(serverID, nil, prev, epoch, fmt.Errorf("read the registration: %w", err))
	}
	tools, err := c.lister.ListTools(ctx, s)
	if err != nil {
		return c.failed(serverID, s, prev, epoch, fmt.Errorf("list tools: %w", err))
	}
	if len(tools) > MaxToolsPerServer {
		c.o.Log.Warn("catalog: a server lists more tools than the catalog keeps", "server", serverID, "tools", len(tools), "kept", MaxToolsPerServer)
	}
	indexed, err := c.index(ctx, tools, prev)
	if err != nil {
		return c.failed(serverID, s, prev, epoch, fmt.Errorf("embed tools: %w", err))
	}
	c.publish(&serverEntry{
		id: serverID, name: s.Name, description: s.Description,
		tools: indexed, refreshedAt: c.o.Now(),
	}, epoch)
	return nil
}

// failed records a failed refresh: the server keeps its last good tools,
// with the error and its time. The returned error is the cause.
func (c *Catalog) failed(serverID string, s *mcpgw.Server, prev *serverEntry, epoch uint64, cause error) error {
	e := &serverEntry{id: serverID, name: serverID}
	if prev != nil {
		cp := *prev
		e = &cp
	}
	if s != nil {
		e.name, e.description = s.Name, s.Description
	}
	e.err, e.errAt = clientMessage(cause, s), c.o.Now()
	c.publish(e, epoch)
	c.o.Log.Warn("catalog: refreshing a server's tools failed; it keeps its last good tools", "server", serverID, "err", cause)
	return fmt.Errorf("catalog: server %q: %w", serverID, cause)
}

// publish installs e unless the server was removed after epoch (a refresh
// that began before a Remove must not bring the server back).
func (c *Catalog) publish(e *serverEntry, epoch uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.removed[e.id]; ok {
		if r > epoch {
			return
		}
		delete(c.removed, e.id)
	}
	c.entries[e.id] = e
}

// clientMessage is an error as the catalog shows it: the server's own
// credential scrubbed, anything shaped like a secret redacted, at most
// maxErrorLen bytes cut on a character boundary.
func clientMessage(err error, s *mcpgw.Server) string {
	var token string
	if s != nil {
		token = s.AuthToken
	}
	msg := apierr.ScrubString(err.Error(), token)
	if len(msg) > maxErrorLen {
		cut := maxErrorLen
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	return msg
}
