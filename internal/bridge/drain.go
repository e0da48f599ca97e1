// Package bridge is the hybrid log bridge: it drains the audit hot tier
// (a Redis stream shared by the proxies, or the embedded default's local
// spool) into the long-term SQL store in batches, acknowledging an entry
// only once the batch holding it committed, so a crash of the bridge or an
// outage of the database loses nothing and a redelivered batch writes
// nothing twice. It keeps the hot tier bounded (trimming only written
// entries), the long-term store's partitions and retention, and the
// analytics rollups (in the transaction that writes the entries); it
// reports its backlog and lag as metrics, raises an alert when the backlog
// passes a threshold, and serves /api/redis, /api/hybrid and the merged
// /api/vas/logs and /api/vas/metrics (http.go).
//
// Only wire imports bridge. It imports audit, store, metrics, apierr, app
// and auth.
package bridge

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// Writer is the long-term store as the bridge uses it.
type Writer interface {
	Write(ctx context.Context, recs []audit.Record, then audit.Inserted) (int, error)
	Maintain(ctx context.Context, now time.Time, retention time.Duration) (audit.Retention, error)
}

// Options configure a Bridge.
type Options struct {
	// Consumer is this bridge's name in the hot tier's consumer group;
	// stable across restarts, so a restarted bridge resumes its own
	// pending entries at once (default: the host name).
	Consumer string
	// Batch bounds the entries of one write (default 512).
	Batch int
	// Block is how long a read waits for new entries (default 200 ms).
	Block time.Duration
	// Linger is how long the bridge waits after a batch that was not full
	// before it reads again, so entries are written in batches rather than
	// one transaction per request (default 100 ms; negative: none).
	// Reads of the log see unwritten entries anyway.
	Linger time.Duration
	// ClaimIdle is how long an entry delivered to another bridge may stay
	// unacknowledged before this one takes it over (default 30 s).
	ClaimIdle time.Duration
	// HotTTL and HotMaxEntries bound the written entries the hot tier keeps.
	HotTTL        time.Duration
	HotMaxEntries int
	// Retention is how long the long-term store keeps entries (0: forever).
	Retention time.Duration
	// BacklogAlert is the backlog past which OnBacklog is called (once
	// per crossing; default 10,000).
	BacklogAlert int64
	// Rollups runs in each write's transaction with its new records.
	Rollups audit.Inserted
	// Observe sees each newly written record (alerts' provider watch).
	Observe func(audit.Record)
	// OnBacklog is called when the backlog passes BacklogAlert.
	OnBacklog func(backlog int64, lag time.Duration)
	// Maintain runs the retention and rollup purge (default: hourly).
	MaintainEvery time.Duration
	// Purge runs after Maintain (the rollups' purge); may be nil.
	Purge func(ctx context.Context, now time.Time) error
	Now   func() time.Time
}

// Bridge drains one hot tier into one long-term store.
type Bridge struct {
	hot store.Streams
	sql Writer
	m   *metrics.Metrics
	log *slog.Logger
	opt Options

	mu     sync.Mutex
	status Status
}

// Status is what the bridge last saw and did, for /api/hybrid and the
// heartbeat.
type Status struct {
	Consumer   string           `json:"consumer"`
	Hot        store.StreamInfo `json:"-"`
	HotChecked time.Time        `json:"hot_checked"`
	LastWrite  time.Time        `json:"last_write"`
	// Written and Redelivered count since start.
	Written     int64  `json:"written"`
	Redelivered int64  `json:"redelivered"`
	Unwritable  int64  `json:"unwritable"`
	LastError   string `json:"last_error,omitempty"`
	// alerted is set while the backlog is past the threshold.
	alerted bool
}

// New returns a bridge from hot into sql.
func New(hot store.Streams, sql Writer, m *metrics.Metrics, log *slog.Logger, opt Options) *Bridge {
	if opt.Consumer == "" {
		host, _ := os.Hostname()
		opt.Consumer = "bridge-" + host
	}
	if opt.Batch <= 0 {
		opt.Batch = 512
	}
	if opt.Block <= 0 {
		opt.Block = 200 * time.Millisecond
	}
	if opt.Linger == 0 {
		opt.Linger = 100 * time.Millisecond
	}
	if opt.ClaimIdle <= 0 {
		opt.ClaimIdle = 30 * time.Second
	}
	if opt.BacklogAlert <= 0 {
		opt.BacklogAlert = 10000
	}
	if opt.MaintainEvery <= 0 {
		opt.MaintainEvery = time.Hour
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	return &Bridge{hot: hot, sql: sql, m: m, log: log, opt: opt, status: Status{Consumer: opt.Consumer}}
}

// Status returns the bridge's last status.
func (b *Bridge) Status() Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status
}

// Run drains until ctx ends: reads a batch, writes it, acknowledges it;
// every few seconds it trims the hot tier and refreshes its figures, every
// MaintainEvery it applies the retention. A failed write is retried with
// backoff (up to 10 s), the entries staying pending in the hot tier.
func (b *Bridge) Run(ctx context.Context) error {
	b.maintain(ctx)
	lastCheck, lastMaintain := time.Time{}, b.opt.Now()
	backoff := 100 * time.Millisecond
	for ctx.Err() == nil {
		if now := b.opt.Now(); now.Sub(lastCheck) >= 2*time.Second {
			b.check(ctx)
			lastCheck = now
		}
		if now := b.opt.Now(); now.Sub(lastMaintain) >= b.opt.MaintainEvery {
			b.maintain(ctx)
			lastMaintain = now
		}
		n, err := b.DrainOnce(ctx)
		if err == nil {
			backoff = 100 * time.Millisecond
			if n > 0 && n < b.opt.Batch && b.opt.Linger > 0 {
				select {
				case <-ctx.Done():
				case <-time.After(b.opt.Linger):
				}
			}
			continue
		}
		if ctx.Err() != nil {
			break
		}
		b.log.Warn("bridge: batch not written; it stays pending and is retried", "err", err, "retry_in", backoff)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 10*time.Second)
	}
	return nil
}

// DrainOnce reads one batch (waiting up to Block for entries), writes it
// and acknowledges it, and returns how many entries it handled.
func (b *Bridge) DrainOnce(ctx context.Context) (int, error) {
	es, err := b.hot.StreamRead(ctx, audit.HotLogKey, audit.BridgeGroup, b.opt.Consumer, b.opt.Batch, b.opt.ClaimIdle, b.opt.Block)
	if err != nil {
		b.fail(err)
		return 0, err
	}
	if len(es) == 0 {
		return 0, nil
	}
	recs := make([]audit.Record, 0, len(es))
	ids := make([]string, len(es))
	var bad int64
	for i, e := range es {
		ids[i] = e.ID
		rec, err := audit.RecordFromJSON(e.Value)
		if err != nil {
			// It can never be written: acknowledged with the batch, and
			// its id and cause logged.
			b.log.Error("bridge: hot-tier entry not decodable; skipped", "id", e.ID, "err", err)
			bad++
			continue
		}
		recs = append(recs, rec)
	}
	var fresh []audit.Record
	then := func(ctx context.Context, tx *sqlstore.Tx, inserted []audit.Record) error {
		fresh = inserted
		if b.opt.Rollups != nil {
			return b.opt.Rollups(ctx, tx, inserted)
		}
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	n, err := b.sql.Write(wctx, recs, then)
	cancel()
	var de *audit.DataError
	if errors.As(err, &de) {
		b.log.Error("bridge: entries refused by the long-term store for their data",
			"escaped", de.Escaped, "not_stored", de.Rejected, "err", de.Err)
		bad += int64(len(de.Rejected))
		err = nil
	}
	if err != nil {
		b.fail(err)
		if b.m != nil {
			b.m.BridgeFailures.Inc()
		}
		return 0, err
	}
	b.wrote(int64(n), int64(len(recs)-n), bad)
	if b.opt.Observe != nil {
		for _, r := range fresh {
			b.opt.Observe(r)
		}
	}
	if err := b.hot.StreamAck(ctx, audit.HotLogKey, audit.BridgeGroup, ids...); err != nil {
		// Written but not acknowledged: delivered again, and skipped then.
		b.fail(err)
		return 0, err
	}
	return len(es), nil
}

func (b *Bridge) wrote(n, again, bad int64) {
	b.mu.Lock()
	b.status.LastWrite = b.opt.Now()
	b.status.Written += n
	b.status.Redelivered += again
	b.status.Unwritable += bad
	b.status.LastError = ""
	b.mu.Unlock()
	if b.m != nil {
		b.m.AuditWritten.Add(float64(n))
		b.m.AuditRedelivered.Add(float64(again))
		b.m.AuditUnwritable.Add(float64(bad))
	}
}

func (b *Bridge) fail(err error) {
	b.mu.Lock()
	b.status.LastError = err.Error()
	b.mu.Unlock()
}

// pruner is the optional ability of a hot tier to delete consumers that
// stopped (rediskv): bridges whose names changed at a restart.
type pruner interface {
	StreamPrune(ctx context.Context, key, group, keep string, idle time.Duration) (int64, error)
}

// pruneIdle is how long a consumer with nothing pending must have been
// silent before check deletes it.
const pruneIdle = 24 * time.Hour

// check trims the hot tier of written entries past its bounds, deletes
// consumers silent for pruneIdle with nothing pending, and refreshes the
// backlog figures, raising the backlog alert on a crossing.
func (b *Bridge) check(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if p, ok := b.hot.(pruner); ok {
		if n, err := p.StreamPrune(ctx, audit.HotLogKey, audit.BridgeGroup, b.opt.Consumer, pruneIdle); err != nil {
			b.log.Warn("bridge: pruning stopped consumers failed", "err", err)
		} else if n > 0 {
			b.log.Info("bridge: deleted consumers silent for a day with nothing pending", "consumers", n)
		}
	}
	if _, err := b.hot.StreamTrim(ctx, audit.HotLogKey, audit.BridgeGroup,
		store.LogLimit{MaxAge: b.opt.HotTTL, MaxLen: b.opt.HotMaxEntries}); err != nil {
		b.log.Warn("bridge: hot tier trim failed", "err", err)
	}
	info, err := b.hot.StreamInfo(ctx, audit.HotLogKey, audit.BridgeGroup)
	if err != nil {
		b.log.Warn("bridge: hot tier status failed", "err", err)
		return
	}
	now := b.opt.Now()
	lag := info.Lag(now)
	if b.m != nil {
		b.m.BridgeBacklog.Set(float64(info.Backlog()))
		b.m.BridgeLag.Set(lag.Seconds())
	}
	b.mu.Lock()
	b.status.Hot, b.status.HotChecked = info, now
	crossed := info.Backlog() > b.opt.BacklogAlert && !b.status.alerted
	b.status.alerted = info.Backlog() > b.opt.BacklogAlert
	b.mu.Unlock()
	if crossed && b.opt.OnBacklog != nil {
		b.opt.OnBacklog(info.Backlog(), lag)
	}
}

// maintain applies the long-term store's partitions and retention and the
// rollups' purge.
func (b *Bridge) maintain(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	now := b.opt.Now()
	out, err := b.sql.Maintain(ctx, now, b.opt.Retention)
	if err != nil {
		b.log.Warn("bridge: long-term store maintenance failed; retried next time", "err", err)
	} else if len(out.Created)+len(out.Dropped) > 0 || out.Deleted > 0 {
		b.log.Info("bridge: long-term store maintained", "created", out.Created, "dropped", out.Dropped, "deleted", out.Deleted)
	}
	if b.opt.Purge != nil {
		if err := b.opt.Purge(ctx, now); err != nil {
			b.log.Warn("bridge: rollup purge failed", "err", err)
		}
	}
}
