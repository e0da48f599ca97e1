package alerts

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/svc-gateway/svc/internal/store"
)

// Store is what the Notifier needs of the hot-state store (store.Counters'
// Reserve and store.Logs): a capped reservation, which only the first of
// the fleet's processes wins within a dedup period, and the bounded log of
// the fleet's sent alerts. memkv and rediskv implement it.
type Store interface {
	Reserve(ctx context.Context, key string, amount, cap int64, ttl time.Duration) (ok bool, total int64, err error)
	AppendLog(ctx context.Context, key string, lim store.LogLimit, values ...[]byte) error
	ReadLog(ctx context.Context, key string, since time.Time, limit int) ([][]byte, error)
}

// KV keys: the dedup markers (one per subject, hashed) and the log of sent
// alerts, bounded by logLimit.
const (
	dedupPrefix = "alerts:dedup:"
	logKey      = "alerts:sent"
)

// logLimit bounds the log of sent alerts: a week, and 500 records (each
// alert writes two: when it is dispatched and when every delivery ended),
// so the last 200 alerts GET /api/alerts may ask for are kept.
var logLimit = store.LogLimit{MaxAge: 7 * 24 * time.Hour, MaxLen: 500}

// storeTimeout bounds each store call of the Notifier.
const storeTimeout = 2 * time.Second

// Defaults of Options.
const (
	DefaultDedup     = 10 * time.Minute
	DefaultQueueSize = 1024
	DefaultWorkers   = 2
	DefaultTimeout   = 5 * time.Second
	DefaultAttempts  = 3
	DefaultBackoff   = time.Second
	// maxBackoff bounds a wait between attempts, Retry-After included.
	maxBackoff = 30 * time.Second
)

// Options configure a Notifier.
type Options struct {
	// Enabled (SVC_ALERTS_ENABLED): when false, Send drops every alert
	// silently, Recent answers ErrDisabled and Run only waits.
	Enabled bool
	// The incoming-webhook URLs (SVC_SLACK_WEBHOOK_URL,
	// SVC_TEAMS_WEBHOOK_URL, SVC_DISCORD_WEBHOOK_URL); "" leaves a platform
	// out. Each is checked with CheckWebhookURL.
	Slack, Teams, Discord string
	// Dedup (SVC_ALERT_DEDUP) is how long an alert's Subject stays quiet
	// across the fleet after it alerted (default 10m).
	Dedup time.Duration
	// QueueSize bounds the alerts waiting for dispatch, and the deliveries
	// waiting for each platform (default 1024 each); beyond it an alert or
	// a delivery is dropped (svc_alerts_dropped_total{reason="queue_full"}).
	QueueSize int
	// Workers is the number of deliveries in flight per platform (default
	// 2): a platform that hangs holds only its own.
	Workers int
	// Timeout bounds one delivery attempt (default 5s); Attempts is the
	// number of tries of a delivery (default 3), Backoff the wait before
	// the second (default 1s), doubling each time, at most 30s (a 429's
	// Retry-After is honoured up to that bound).
	Timeout  time.Duration
	Attempts int
	Backoff  time.Duration
	// Client sends the webhooks (default: a client that follows no
	// redirect; each attempt is bounded by Timeout through its context).
	Client *http.Client
	// Store deduplicates and keeps the log of sent alerts (required when
	// Enabled).
	Store Store
	// Log receives delivery failures (never a webhook URL); nil:
	// slog.Default().
	Log *slog.Logger
	// Registerer receives the svc_alerts_* metrics (nil: not registered).
	Registerer prometheus.Registerer
	// Now defaults to time.Now.
	Now func() time.Time
}

// ErrDisabled is returned by Recent when alerts are off.
var ErrDisabled = errors.New("alerts: alerts are disabled (SVC_ALERTS_ENABLED=false)")

// Notifier sends alerts to the configured platforms. Send never blocks;
// Run does the work. Its methods are safe on a nil *Notifier (alerts off).
type Notifier struct {
	enabled  bool
	store    Store
	dedup    time.Duration
	queue    chan Alert
	targets  []*target
	client   *http.Client
	timeout  time.Duration
	attempts int
	backoff  time.Duration
	workers  int
	log      *slog.Logger
	now      func() time.Time
	m        *metrics
	running  atomic.Bool
}

// target is one configured platform and its queue of deliveries.
type target struct {
	name string
	url  string
	jobs chan *delivery
}

// New returns a Notifier from o. It fails on an invalid webhook URL (the
// error names the setting, never the URL), a missing Store when enabled, or
// metrics already registered on o.Registerer.
func New(o Options) (*Notifier, error) {
	o = o.withDefaults()
	n := &Notifier{enabled: o.Enabled, store: o.Store, dedup: o.Dedup, queue: make(chan Alert, o.QueueSize),
		client: o.Client, timeout: o.Timeout, attempts: o.Attempts, backoff: o.Backoff, workers: o.Workers,
		log: o.Log, now: o.Now, m: newMetrics()}
	for _, p := range []struct{ name, setting, url string }{
		{Slack, "SVC_SLACK_WEBHOOK_URL", o.Slack},
		{Teams, "SVC_TEAMS_WEBHOOK_URL", o.Teams},
		{Discord, "SVC_DISCORD_WEBHOOK_URL", o.Discord},
	} {
		if err := CheckWebhookURL(p.setting, p.url); err != nil {
			return nil, err
		}
		if p.url != "" {
			n.targets = append(n.targets, &target{name: p.name, url: p.url, jobs: make(chan *delivery, o.QueueSize)})
		}
	}
	if o.Enabled && o.Store == nil {
		return nil, errors.New("alerts: a Store is required when alerts are enabled")
	}
	if o.Registerer != nil {
		if err := n.m.register(o.Registerer); err != nil {
			return nil, err
		}
	}
	return n, nil
}

func (o Options) withDefaults() Options {
	if o.Dedup <= 0 {
		o.Dedup = DefaultDedup
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.Client == nil {
		o.Client = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Enabled reports whether alerts are on (false for a nil Notifier).
func (n *Notifier) Enabled() bool { return n != nil && n.enabled }

// Platforms names the configured platforms, in the order slack, teams,
// discord.
func (n *Notifier) Platforms() []string {
	if n == nil {
		return nil
	}
	out := make([]string, len(n.targets))
	for i, t := range n.targets {
		out[i] = t.name
	}
	return out
}

// Send queues a for delivery and reports whether it was queued. It never
// blocks: when the queue is full the alert is dropped and counted
// (svc_alerts_dropped_total{reason="queue_full"}). An alert without a Time
// gets the current time; dedup and delivery happen in Run.
func (n *Notifier) Send(a Alert) bool {
	if n == nil || !n.enabled {
		return false
	}
	if a.Time.IsZero() {
		a.Time = n.now()
	}
	select {
	case n.queue <- a:
		return true
	default:
		n.m.queueFull.Inc()
		return false
	}
}

// Run dispatches queued alerts and delivers them, one worker group per
// platform, until ctx ends; alerts still queued then are not sent. It may
// run once.
func (n *Notifier) Run(ctx context.Context) error {
	if n == nil || !n.enabled {
		<-ctx.Done()
		return nil
	}
	if !n.running.CompareAndSwap(false, true) {
		return errors.New("alerts: the Notifier is already running")
	}
	var wg sync.WaitGroup
	for _, t := range n.targets {
		for range n.workers {
			wg.Go(func() { n.deliverLoop(ctx, t) })
		}
	}
	wg.Go(func() { n.dispatchLoop(ctx) })
	wg.Wait()
	return nil
}

func (n *Notifier) dispatchLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case a := <-n.queue:
			n.dispatch(ctx, a)
		}
	}
}

// dispatch deduplicates a, records it as pending and hands one delivery to
// each platform's queue, never waiting for a platform.
func (n *Notifier) dispatch(ctx context.Context, a Alert) {
	a = normalize(a)
	if !n.first(ctx, a.Subject) {
		n.m.deduplicated.Inc()
		return
	}
	p := &pending{sent: Sent{Alert: a, Delivery: make([]Delivery, len(n.targets))}, left: len(n.targets)}
	for i, t := range n.targets {
		p.sent.Delivery[i] = Delivery{Platform: t.name, Status: StatusPending}
	}
	n.record(ctx, p.sent)
	for i, t := range n.targets {
		body, err := payload(t.name, a)
		if err != nil {
			n.m.dropped.WithLabelValues(reasonRejected).Inc()
			n.finish(ctx, p, i, Delivery{Status: StatusFailed, Error: "the payload could not be encoded"})
			continue
		}
		select {
		case t.jobs <- &delivery{p: p, i: i, body: body}:
		default:
			n.m.queueFull.Inc()
			n.finish(ctx, p, i, Delivery{Status: StatusDropped, Error: "the platform's delivery queue was full"})
		}
	}
}

// normalize fills what an alert built by hand may lack.
func normalize(a Alert) Alert {
	if a.ID == "" {
		a.ID = NewID()
	}
	if a.Type == "" {
		a.Type = Custom
	}
	if _, ok := ParseSeverity(string(a.Severity)); !ok {
		a.Severity = Warning
	}
	if a.Subject == "" {
		a.Subject = string(a.Type) + ":" + a.Title
	}
	return a
}

// first reports whether subject has not alerted within the dedup period
// anywhere in the fleet, and marks it. A store that does not answer lets
// the alert through: a duplicate is better than a lost alert.
func (n *Notifier) first(ctx context.Context, subject string) bool {
	ctx, cancel := context.WithTimeout(ctx, storeTimeout)
	defer cancel()
	ok, _, err := n.store.Reserve(ctx, dedupKey(subject), 1, 1, n.dedup)
	if err != nil {
		n.log.Warn("alerts: the dedup check failed; sending the alert anyway", "subject", subject, "err", err)
		return true
	}
	return ok
}

// dedupKey is the KV key marking subject (hashed: a subject is free text).
func dedupKey(subject string) string {
	sum := sha256.Sum256([]byte(subject))
	return dedupPrefix + hex.EncodeToString(sum[:16])
}

// Delivery statuses.
const (
	StatusPending = "pending" // queued or being tried
	StatusSent    = "sent"
	StatusFailed  = "failed"  // refused by the receiver, or every attempt failed
	StatusDropped = "dropped" // the platform's queue was full, or svc stopped
)

// Sent is an alert as the log keeps it: the alert and, per configured
// platform, the state of its delivery.
type Sent struct {
	Alert
	Delivery []Delivery `json:"delivery"`
}

// Delivery is the state of one alert's delivery to one platform. Error says
// why it failed, without the webhook URL.
type Delivery struct {
	Platform string `json:"platform"`
	Status   string `json:"status"`
	Attempts int    `json:"attempts"`
	Error    string `json:"error,omitempty"`
}

// pending is a dispatched alert whose deliveries are not all done.
type pending struct {
	mu   sync.Mutex
	sent Sent
	left int
}

// finish sets the outcome of delivery i of p; the last one records p.
func (n *Notifier) finish(ctx context.Context, p *pending, i int, d Delivery) {
	p.mu.Lock()
	d.Platform = p.sent.Delivery[i].Platform
	p.sent.Delivery[i] = d
	p.left--
	done := p.left == 0
	var snap Sent
	if done {
		snap = Sent{Alert: p.sent.Alert, Delivery: slices.Clone(p.sent.Delivery)}
	}
	p.mu.Unlock()
	if done {
		n.record(ctx, snap)
	}
}

// record appends s to the fleet's log of sent alerts. It outlives ctx's
// cancellation (a delivery ending at shutdown is still recorded) but not
// storeTimeout.
func (n *Notifier) record(ctx context.Context, s Sent) {
	b, err := json.Marshal(s)
	if err != nil {
		n.log.Warn("alerts: could not encode the alert record", "id", s.ID, "err", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	if err := n.store.AppendLog(ctx, logKey, logLimit, b); err != nil {
		n.log.Warn("alerts: could not record the alert", "id", s.ID, "err", err)
	}
}

// Recent returns up to limit of the fleet's last alerts, newest first, each
// with its latest delivery status.
func (n *Notifier) Recent(ctx context.Context, limit int) ([]Sent, error) {
	if n == nil || !n.enabled {
		return nil, ErrDisabled
	}
	raw, err := n.store.ReadLog(ctx, logKey, n.now().Add(-logLimit.MaxAge), 0)
	if err != nil {
		return nil, fmt.Errorf("alerts: read the log of sent alerts: %w", err)
	}
	var all []Sent
	at := map[string]int{}
	for _, b := range raw {
		var s Sent
		if json.Unmarshal(b, &s) != nil || s.ID == "" {
			continue
		}
		if i, ok := at[s.ID]; ok {
			all[i] = s // a later record of the same alert: its final status
			continue
		}
		at[s.ID] = len(all)
		all = append(all, s)
	}
	if limit > 0 && len(all) > limit {
		all = all[len(all)-limit:]
	}
	slices.Reverse(all)
	return all, nil
}
