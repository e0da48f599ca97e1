package mgmt

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"time"

	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/health"
	"github.com/svc-gateway/svc/internal/heartbeat"
)

// Heartbeats is what GET /api/health/comprehensive needs of the fleet's
// heartbeats: this process's description and every component's last beat
// (heartbeat.Publisher).
type Heartbeats interface {
	Process() heartbeat.Process
	Read(ctx context.Context, since time.Time) ([]heartbeat.Beat, error)
}

// The comprehensive health's bounds and thresholds.
const (
	// pingTimeout bounds each store's ping; they run concurrently.
	pingTimeout = time.Second
	// gatherTimeout bounds reading the heartbeats, the backlog and the
	// providers' keys.
	gatherTimeout = 2 * time.Second
	// A provider whose error rate is over failingRate with at least
	// failingRequests requests in health.Window makes the status degraded.
	failingRate     = 0.5
	failingRequests = 20
	// bridgeComponent is the bridge's component name (SERVICE_TYPE).
	bridgeComponent = "bridge"
)

// The overall status values.
const (
	statusOK       = "ok"
	statusDegraded = "degraded"
	statusDown     = "down"
	bridgeAbsent   = "absent"
)

// healthReport is the answer of GET /api/health/comprehensive.
type healthReport struct {
	Status string `json:"status"`
	// Reasons say why the status is not ok, one line each.
	Reasons         []string               `json:"reasons"`
	Time            time.Time              `json:"time"`
	Process         *processInfo           `json:"process"`
	Components      []componentInfo        `json:"components"`
	ComponentsError string                 `json:"components_error,omitempty"`
	Stores          map[string]storeCheck  `json:"stores"`
	Bridge          bridgeInfo             `json:"bridge"`
	Providers       []providerHealthReport `json:"providers"`
	// WindowSeconds is how far back the providers' figures look.
	WindowSeconds int `json:"window_seconds"`
}

type processInfo struct {
	Instance   string    `json:"instance"`
	Host       string    `json:"host"`
	PID        int       `json:"pid"`
	Version    string    `json:"version,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	UptimeS    float64   `json:"uptime_s"`
	IntervalS  float64   `json:"heartbeat_interval_s"`
	Components []string  `json:"components"`
}

type componentInfo struct {
	Component string         `json:"component"`
	Instance  string         `json:"instance"`
	Host      string         `json:"host"`
	PID       int            `json:"pid"`
	Version   string         `json:"version,omitempty"`
	Self      bool           `json:"self"`
	Status    string         `json:"status"`
	StartedAt time.Time      `json:"started_at"`
	LastSeen  time.Time      `json:"last_seen"`
	AgeS      float64        `json:"age_s"`
	Details   map[string]any `json:"details,omitempty"`
}

type storeCheck struct {
	OK    bool    `json:"ok"`
	RTTMS float64 `json:"rtt_ms"`
	Error string  `json:"error,omitempty"`
}

type bridgeInfo struct {
	// Status is the freshest bridge beat's status (ok, stale, stopped), or
	// absent when no bridge has beaten within heartbeat.MaxAge.
	Status     string     `json:"status"`
	Instance   string     `json:"instance,omitempty"`
	LastSeen   *time.Time `json:"last_seen,omitempty"`
	LagSeconds *float64   `json:"lag_seconds"`
	Backlog    *int64     `json:"backlog"`
	LastWrite  any        `json:"last_write"`
}

type providerHealthReport struct {
	Name      string  `json:"name"`
	Enabled   bool    `json:"enabled"`
	Requests  int64   `json:"requests"`
	Errors    int64   `json:"errors"`
	ErrorRate float64 `json:"error_rate"`
	// P50MS and P95MS are the slowest model's (percentiles do not add up).
	P50MS    int64            `json:"p50_ms"`
	P95MS    int64            `json:"p95_ms"`
	InFlight int64            `json:"in_flight"`
	Models   []health.Figures `json:"models"`
}

// comprehensiveHealth answers GET /api/health/comprehensive: the stores'
// reachability and round trips, every component of the fleet from its last
// heartbeat, the bridge's lag, and each provider's recent error rate. The
// status is down (503) when a store does not answer, degraded when a
// component is stale, the bridge is missing while entries wait for it, or a
// provider fails; else ok.
func (a *API) comprehensiveHealth(w http.ResponseWriter, r *http.Request) error {
	now := a.d.Now()
	rep := healthReport{Time: now, Reasons: []string{}, Components: []componentInfo{},
		WindowSeconds: int(health.Window.Seconds())}
	var (
		beats    []heartbeat.Beat
		beatsErr error
		backlog  *int64
		enabled  map[string]bool
	)
	ctx, cancel := context.WithTimeout(r.Context(), gatherTimeout)
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() { rep.Stores = a.pingStores(ctx) })
	if a.d.Heartbeats != nil {
		wg.Go(func() { beats, beatsErr = a.d.Heartbeats.Read(ctx, now.Add(-heartbeat.MaxAge)) })
	}
	if a.d.Backlog != nil {
		wg.Go(func() {
			if n, err := a.d.Backlog(ctx); err == nil {
				backlog = &n
			}
		})
	}
	if a.d.Providers != nil {
		wg.Go(func() { enabled = a.d.Providers(ctx) })
	}
	wg.Wait()

	rep.describe(a.d.Heartbeats, beats, beatsErr, now)
	rep.bridge(beats, backlog, now)
	rep.Providers = a.providerHealth(enabled)
	rep.judge()
	status := http.StatusOK
	if rep.Status == statusDown {
		status = http.StatusServiceUnavailable
	}
	return writeJSON(w, status, rep)
}

// pingStores pings the stores of Probes ("kv", "sql") at once, each within
// pingTimeout; a missing probe is a failed check.
func (a *API) pingStores(ctx context.Context) map[string]storeCheck {
	names := []string{"kv", "sql"}
	out := make([]storeCheck, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() { out[i] = ping(ctx, a.d.Probes[name]) })
	}
	wg.Wait()
	m := make(map[string]storeCheck, len(names))
	for i, name := range names {
		m[name] = out[i]
	}
	return m
}

func ping(ctx context.Context, p app.Probe) storeCheck {
	if p == nil {
		return storeCheck{Error: "not configured"}
	}
	ctx, cancel := context.WithTimeout(ctx, pingTimeout)
	defer cancel()
	start := time.Now()
	err := p(ctx)
	c := storeCheck{OK: err == nil, RTTMS: float64(time.Since(start).Microseconds()) / 1000}
	switch {
	case err == nil:
	case errors.Is(err, context.DeadlineExceeded):
		c.Error = fmt.Sprintf("no answer within %s", pingTimeout)
	default:
		c.Error = err.Error()
	}
	return c
}

// describe fills the process and the components from the beats.
func (rep *healthReport) describe(hb Heartbeats, beats []heartbeat.Beat, err error, now time.Time) {
	if hb == nil {
		rep.ComponentsError = "heartbeats are not configured"
		return
	}
	p := hb.Process()
	rep.Process = &processInfo{Instance: p.Instance, Host: p.Host, PID: p.PID, Version: p.Version,
		StartedAt: p.StartedAt, UptimeS: seconds(now.Sub(p.StartedAt)), IntervalS: p.Interval.Seconds(),
		Components: p.Components}
	if rep.Process.Components == nil {
		rep.Process.Components = []string{}
	}
	if err != nil {
		rep.ComponentsError = "the heartbeats could not be read: " + err.Error()
		return
	}
	for _, b := range beats {
		rep.Components = append(rep.Components, componentInfo{Component: b.Component, Instance: b.Instance,
			Host: b.Host, PID: b.PID, Version: b.Version, Self: b.Instance == p.Instance, Status: b.Status(now),
			StartedAt: b.StartedAt, LastSeen: b.Time, AgeS: seconds(b.Age(now)), Details: b.Details})
	}
}

// bridge fills the bridge from its freshest beat; backlog, when known,
// is the hot tier's count of entries waiting for it.
func (rep *healthReport) bridge(beats []heartbeat.Beat, backlog *int64, now time.Time) {
	var fresh *heartbeat.Beat
	for i := range beats {
		if b := &beats[i]; b.Component == bridgeComponent && (fresh == nil || b.Time.After(fresh.Time)) {
			fresh = b
		}
	}
	rep.Bridge = bridgeInfo{Status: bridgeAbsent, Backlog: backlog}
	if fresh == nil {
		return
	}
	seen := fresh.Time
	rep.Bridge.Status, rep.Bridge.Instance, rep.Bridge.LastSeen = fresh.Status(now), fresh.Instance, &seen
	if lag, ok := fresh.Details["lag_seconds"].(float64); ok {
		rep.Bridge.LagSeconds = &lag
	}
	if n, ok := fresh.Details["backlog"].(float64); ok && backlog == nil {
		b := int64(n)
		rep.Bridge.Backlog = &b
	}
	rep.Bridge.LastWrite = fresh.Details["last_write"]
}

// providerHealth sums the tracker's figures per provider, for every
// provider that can serve (enabled) and every one with calls in the window.
func (a *API) providerHealth(enabled map[string]bool) []providerHealthReport {
	byName := map[string]*providerHealthReport{}
	get := func(name string) *providerHealthReport {
		p := byName[name]
		if p == nil {
			p = &providerHealthReport{Name: name, Enabled: enabled[name], Models: []health.Figures{}}
			byName[name] = p
		}
		return p
	}
	for name, on := range enabled {
		if on {
			get(name)
		}
	}
	if a.d.Health != nil {
		for _, f := range a.d.Health.All() {
			if f.Requests == 0 && f.InFlight == 0 {
				continue
			}
			p := get(f.Provider)
			p.Requests += f.Requests
			p.Errors += f.Errors
			p.InFlight += f.InFlight
			p.P50MS, p.P95MS = max(p.P50MS, f.P50MS), max(p.P95MS, f.P95MS)
			p.Models = append(p.Models, f)
		}
	}
	out := make([]providerHealthReport, 0, len(byName))
	for _, p := range byName {
		if p.Requests > 0 {
			p.ErrorRate = float64(p.Errors) / float64(p.Requests)
		}
		out = append(out, *p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// judge sets the status and its reasons.
func (rep *healthReport) judge() {
	down, degraded := false, false
	for _, name := range []string{"kv", "sql"} {
		if c := rep.Stores[name]; !c.OK {
			down = true
			rep.Reasons = append(rep.Reasons, fmt.Sprintf("%s: %s", name, c.Error))
		}
	}
	if rep.ComponentsError != "" && rep.Process != nil {
		degraded = true
		rep.Reasons = append(rep.Reasons, rep.ComponentsError)
	}
	for _, c := range rep.Components {
		if c.Status == heartbeat.StatusStale {
			degraded = true
			rep.Reasons = append(rep.Reasons, fmt.Sprintf("%s on %s: no heartbeat for %.0fs", c.Component, c.Instance, c.AgeS))
		}
	}
	if b := rep.Bridge; (b.Status == bridgeAbsent || b.Status == heartbeat.StatusStopped) && b.Backlog != nil && *b.Backlog > 0 {
		degraded = true
		rep.Reasons = append(rep.Reasons, fmt.Sprintf("bridge %s while %d entries wait for it", b.Status, *b.Backlog))
	}
	for _, p := range rep.Providers {
		if p.Requests >= failingRequests && p.ErrorRate > failingRate {
			degraded = true
			rep.Reasons = append(rep.Reasons, fmt.Sprintf("provider %s: error rate %.2f over %d requests", p.Name, p.ErrorRate, p.Requests))
		}
	}
	switch {
	case down:
		rep.Status = statusDown
	case degraded:
		rep.Status = statusDegraded
	default:
		rep.Status = statusOK
	}
}

// seconds is d in seconds, to the millisecond.
func seconds(d time.Duration) float64 { return float64(d.Milliseconds()) / 1000 }
