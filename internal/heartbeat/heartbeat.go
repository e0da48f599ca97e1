// Package heartbeat owns the components' heartbeats: every process
// publishes, every Interval, one beat per component it runs (who, where,
// since when, and details the component supplies, such as the bridge's lag)
// into the KV log "heartbeats", and any process reads back the latest beat
// of every component of the fleet (Read), to tell which run and which have
// gone quiet (Stale).
//
// wire builds the one Publisher of a process and adds each component's beat
// to that component's background work; mgmt reads the beats for GET
// /api/health/comprehensive. heartbeat imports store and the standard
// library only.
package heartbeat

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// Key is the KV log the beats go to.
const Key = "heartbeats"

// DefaultInterval is how often a component beats when Options.Interval is
// not set (SVC_HEARTBEAT_INTERVAL).
const DefaultInterval = 5 * time.Second

// MaxAge is how long a beat stays in the log: a process that stopped
// without saying so is reported stale for this long, then forgotten.
const MaxAge = 2 * time.Minute

// StaleAfter is how many intervals may pass without a beat before a
// component is reported stale.
const StaleAfter = 3

// fleetSize is the number of processes, each running every component, the
// log's length is sized for.
const (
	fleetSize      = 100
	componentsEach = 6
)

// Log is what the heartbeats need of the KV store: its logs (memkv,
// rediskv).
type Log interface {
	AppendLog(ctx context.Context, key string, lim store.LogLimit, values ...[]byte) error
	ReadLog(ctx context.Context, key string, since time.Time, limit int) ([][]byte, error)
}

// Beat is one component's heartbeat: the value stored in the log, as JSON.
type Beat struct {
	Component string    `json:"component"`
	Instance  string    `json:"instance"`
	Host      string    `json:"host"`
	PID       int       `json:"pid"`
	Version   string    `json:"version,omitempty"`
	StartedAt time.Time `json:"started_at"`
	Time      time.Time `json:"time"`
	// IntervalMS is the publisher's interval, so a reader judges staleness
	// by the interval the component beats at, not its own.
	IntervalMS int64 `json:"interval_ms,omitempty"`
	// Stopped marks the last beat of a component that stopped gracefully: it
	// is gone, not stale.
	Stopped bool           `json:"stopped,omitempty"`
	Details map[string]any `json:"details,omitempty"`
}

// Status values of a beat.
const (
	StatusOK      = "ok"
	StatusStale   = "stale"
	StatusStopped = "stopped"
)

// Interval is the interval the beat's publisher beats at (DefaultInterval
// when the beat does not say).
func (b Beat) Interval() time.Duration {
	if b.IntervalMS <= 0 {
		return DefaultInterval
	}
	return time.Duration(b.IntervalMS) * time.Millisecond
}

// Age is how long ago the beat was sent, at now (never negative).
func (b Beat) Age(now time.Time) time.Duration { return max(now.Sub(b.Time), 0) }

// Stale reports whether, at now, the component has not beaten for more than
// StaleAfter intervals (a stopped component is not stale).
func (b Beat) Stale(now time.Time) bool {
	return !b.Stopped && b.Age(now) > StaleAfter*b.Interval()
}

// Status is StatusStopped, StatusStale or StatusOK at now.
func (b Beat) Status(now time.Time) string {
	switch {
	case b.Stopped:
		return StatusStopped
	case b.Stale(now):
		return StatusStale
	}
	return StatusOK
}

// Read returns the latest beat of every (component, instance) appended to
// kv's log at or after since, sorted by component then instance. Entries
// that are not beats are skipped.
func Read(ctx context.Context, kv Log, since time.Time) ([]Beat, error) {
	raw, err := kv.ReadLog(ctx, Key, since, 0)
	if err != nil {
		return nil, err
	}
	type id struct{ component, instance string }
	latest := map[id]Beat{}
	for _, v := range raw {
		var b Beat
		if json.Unmarshal(v, &b) != nil || b.Component == "" || b.Instance == "" {
			continue
		}
		k := id{b.Component, b.Instance}
		// The log is in append order; a beat's own time breaks a tie
		// between processes whose appends raced.
		if prev, ok := latest[k]; !ok || !b.Time.Before(prev.Time) {
			latest[k] = b
		}
	}
	out := make([]Beat, 0, len(latest))
	for _, b := range latest {
		out = append(out, b)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Component != out[j].Component {
			return out[i].Component < out[j].Component
		}
		return out[i].Instance < out[j].Instance
	})
	return out, nil
}

// Options configure a Publisher.
type Options struct {
	// Interval between beats (DefaultInterval when ≤ 0).
	Interval time.Duration
	// Version is the build's version, sent with every beat ("" for none).
	Version string
	// Instance names the process ("" for hostname-pid-random).
	Instance string
	// Now is the clock (time.Now when nil).
	Now func() time.Time
	Log *slog.Logger
}

// Publisher publishes the beats of one process's components.
type Publisher struct {
	kv       Log
	interval time.Duration
	version  string
	instance string
	host     string
	pid      int
	started  time.Time
	now      func() time.Time
	log      *slog.Logger

	mu         sync.Mutex
	components []string
}

// Process describes the publishing process.
type Process struct {
	Instance   string
	Host       string
	PID        int
	Version    string
	StartedAt  time.Time
	Interval   time.Duration
	Components []string // in the order they were added
}

// New returns the publisher of this process over kv; add its components
// with Component.
func New(kv Log, o Options) *Publisher {
	p := &Publisher{kv: kv, interval: o.Interval, version: o.Version, instance: o.Instance,
		pid: os.Getpid(), now: o.Now, log: o.Log}
	if p.interval <= 0 {
		p.interval = DefaultInterval
	}
	if p.now == nil {
		p.now = time.Now
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	p.host, _ = os.Hostname()
	if p.host == "" {
		p.host = "unknown"
	}
	if p.instance == "" {
		p.instance = p.host + "-" + strconv.Itoa(p.pid) + "-" + randomHex(3)
	}
	p.started = p.now()
	return p
}

// Process describes this process: its instance, start and the components
// added so far.
func (p *Publisher) Process() Process {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Process{Instance: p.instance, Host: p.host, PID: p.pid, Version: p.version, StartedAt: p.started,
		Interval: p.interval, Components: append([]string(nil), p.components...)}
}

// Read returns the latest beat of every component of the fleet appended at
// or after since (the package's Read on the publisher's store).
func (p *Publisher) Read(ctx context.Context, since time.Time) ([]Beat, error) {
	return Read(ctx, p.kv, since)
}

// Component adds the component name to the process and returns its beat,
// to run as the component's background work. details, if not nil, is
// called at every beat for the component's figures (JSON-encodable).
func (p *Publisher) Component(name string, details func() map[string]any) *Component {
	p.mu.Lock()
	p.components = append(p.components, name)
	p.mu.Unlock()
	return &Component{p: p, name: name, details: details}
}

// limit bounds the log: MaxAge, and a length that holds MaxAge of beats of
// fleetSize processes each running componentsEach components.
func (p *Publisher) limit() store.LogLimit {
	perComponent := int(MaxAge/p.interval) + 1
	return store.LogLimit{MaxAge: MaxAge, MaxLen: fleetSize * componentsEach * perComponent}
}

// Component is one component's heartbeat (an app.Component).
type Component struct {
	p       *Publisher
	name    string
	details func() map[string]any
}

// Name implements app.Component.
func (c *Component) Name() string { return "heartbeat-" + c.name }

// Beat publishes one beat now.
func (c *Component) Beat(ctx context.Context) error { return c.beat(ctx, false) }

func (c *Component) beat(ctx context.Context, stopped bool) error {
	p := c.p
	b := Beat{Component: c.name, Instance: p.instance, Host: p.host, PID: p.pid, Version: p.version,
		StartedAt: p.started, Time: p.now(), IntervalMS: p.interval.Milliseconds(), Stopped: stopped}
	if c.details != nil {
		b.Details = c.details()
	}
	v, err := json.Marshal(b)
	if err != nil {
		// Details that do not encode are dropped; the beat itself still counts.
		p.log.Warn("heartbeat details do not encode", "component", c.name, "err", err)
		b.Details = nil
		if v, err = json.Marshal(b); err != nil {
			return err
		}
	}
	return p.kv.AppendLog(ctx, Key, p.limit(), v)
}

// Run beats at once and then every interval until ctx ends; then it sends a
// last beat marking the component stopped. A failed beat is logged (once
// per run of failures) and retried at the next interval: the store being
// down must not stop the component.
func (c *Component) Run(ctx context.Context) error {
	tick := time.NewTicker(c.p.interval)
	defer tick.Stop()
	failing := false
	for {
		err := c.Beat(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			c.p.log.Warn("heartbeat failed", "component", c.name, "err", err)
			failing = true
		case err == nil && failing:
			c.p.log.Info("heartbeat resumed", "component", c.name)
			failing = false
		}
		select {
		case <-ctx.Done():
			sctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if err := c.beat(sctx, true); err != nil {
				c.p.log.Debug("last heartbeat failed", "component", c.name, "err", err)
			}
			return nil
		case <-tick.C:
		}
	}
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
