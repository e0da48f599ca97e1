package compliance

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// ErrScanNotFound is returned for a scan_id no record holds.
var ErrScanNotFound = errors.New("compliance: scan not found")

// ScanRecord is what svc keeps of one scan for feedback and baselines:
// the scan's features (model.Encode), never its text.
type ScanRecord struct {
	ScanID    string
	Kind      string // "scan" or "intelligent"
	UserID    string
	OrgID     string
	Policy    string
	Caller    string
	At        time.Time
	RiskScore float64
	Level     Severity
	Action    Action
	// Types are the violations' types, lower case ("ssn", "prompt_injection").
	Types    []string
	Features []byte
}

// Records keeps scan records and baseline counts in SQL. Add queues (it
// never waits for the database); Run writes the queue in one transaction
// every flush interval and purges records past the retention. A record is
// found by Get as soon as it was added to this process, and by every
// process once written.
type Records struct {
	db        *sqlstore.DB
	log       *slog.Logger
	every     time.Duration
	retention time.Duration
	now       func() time.Time

	mu      sync.Mutex
	pending []ScanRecord
	counts  map[countKey]int64
	dropped int64
}

type countKey struct {
	org    string
	hour   int64
	metric string
}

// maxPending bounds the records waiting for the database: past it the
// oldest are dropped (and the number logged at the next flush) while the
// database is away.
const maxPending = 50_000

// RecordsOptions tune Records; zero values take the defaults.
type RecordsOptions struct {
	FlushEvery time.Duration // default 200 ms
	Retention  time.Duration // default 30 days
	Log        *slog.Logger
	Now        func() time.Time
}

// NewRecords returns the scan records over db.
func NewRecords(db *sqlstore.DB, o RecordsOptions) *Records {
	if o.FlushEvery <= 0 {
		o.FlushEvery = 200 * time.Millisecond
	}
	if o.Retention <= 0 {
		o.Retention = 30 * 24 * time.Hour
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Records{db: db, log: o.Log, every: o.FlushEvery, retention: o.Retention, now: o.Now, counts: map[countKey]int64{}}
}

// Add queues rec and counts it into its organisation's baseline.
func (r *Records) Add(rec ScanRecord) {
	hour := rec.At.Unix() / 3600 * 3600
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pending) >= maxPending {
		r.pending = r.pending[1:]
		r.dropped++
	}
	r.pending = append(r.pending, rec)
	r.count(rec.OrgID, hour, "scans")
	r.count(rec.OrgID, hour, "level:"+rec.Level.String())
	r.count(rec.OrgID, hour, "action:"+rec.Action.String())
	if len(rec.Types) > 0 {
		r.count(rec.OrgID, hour, "violations")
	}
	for _, t := range rec.Types {
		r.count(rec.OrgID, hour, "type:"+t)
	}
}

func (r *Records) count(org string, hour int64, metric string) {
	if len(r.counts) >= maxPending && r.counts[countKey{org, hour, metric}] == 0 {
		r.dropped++
		return
	}
	r.counts[countKey{org, hour, metric}]++
}

// Run flushes every interval and purges hourly until ctx ends, then
// flushes once more.
func (r *Records) Run(ctx context.Context) error {
	tick := time.NewTicker(r.every)
	defer tick.Stop()
	lastPurge := time.Time{}
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := r.Flush(fctx); err != nil {
				r.log.Warn("compliance records: last flush failed", "err", err)
			}
			return nil
		case <-tick.C:
		}
		if err := r.Flush(ctx); err != nil && ctx.Err() == nil {
			r.log.Warn("compliance records: flush failed (kept, retried)", "err", err)
		}
		if now := r.now(); now.Sub(lastPurge) >= time.Hour {
			lastPurge = now
			if err := r.Purge(ctx, now); err != nil && ctx.Err() == nil {
				r.log.Warn("compliance records: purge failed", "err", err)
			}
		}
	}
}

// Flush writes the queued records and counts in one transaction; on
// failure they stay queued.
func (r *Records) Flush(ctx context.Context) error {
	r.mu.Lock()
	recs, counts, dropped := r.pending, r.counts, r.dropped
	r.pending, r.counts, r.dropped = nil, map[countKey]int64{}, 0
	r.mu.Unlock()
	if dropped > 0 {
		r.log.Warn("compliance records: the queue was full while the database was away; records and baseline counts dropped", "dropped", dropped)
	}
	if len(recs) == 0 && len(counts) == 0 {
		return nil
	}
	err := r.write(ctx, recs, counts)
	if err != nil {
		r.requeue(recs, counts)
	}
	return err
}

// requeue puts back what a failed flush took, ahead of what came since.
func (r *Records) requeue(recs []ScanRecord, counts map[countKey]int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = append(recs, r.pending...)
	if over := len(r.pending) - maxPending; over > 0 {
		r.pending = r.pending[over:]
		r.dropped += int64(over)
	}
	for k, n := range counts {
		r.counts[k] += n
	}
}

// batchRows bounds one INSERT's rows (PostgreSQL allows 65,535
// parameters; 12 per row).
const batchRows = 500

func (r *Records) write(ctx context.Context, recs []ScanRecord, counts map[countKey]int64) error {
	tx, err := r.db.Begin(ctx)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	for i := 0; i < len(recs); i += batchRows {
		part := recs[i:min(len(recs), i+batchRows)]
		args := make([]any, 0, len(part)*12)
		for _, s := range part {
			if s.Features == nil {
				s.Features = []byte{}
			}
			args = append(args, s.ScanID, s.Kind, s.UserID, s.OrgID, s.Policy, s.Caller, sqlstore.Micros(s.At),
				s.RiskScore, s.Level.String(), s.Action.String(), strings.Join(s.Types, ","), s.Features)
		}
		q := `INSERT INTO compliance_scans (scan_id, kind, user_id, org_id, policy, caller, created_at, risk_score, risk_level, action, types, features) VALUES ` +
			sqlstore.Placeholders(len(part), "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)") + ` ON CONFLICT (scan_id) DO NOTHING`
		if _, err := tx.Exec(ctx, q, args...); err != nil {
			return fmt.Errorf("insert scan records: %w", err)
		}
	}
	for k, n := range counts {
		if _, err := tx.Exec(ctx, `INSERT INTO compliance_baseline (org_id, hour, metric, n) VALUES (?, ?, ?, ?)
			ON CONFLICT (org_id, hour, metric) DO UPDATE SET n = compliance_baseline.n + excluded.n`, k.org, k.hour, k.metric, n); err != nil {
			return fmt.Errorf("add baseline counts: %w", err)
		}
	}
	return tx.Commit()
}

// Get returns the record of scanID: from this process's queue, else SQL.
func (r *Records) Get(ctx context.Context, scanID string) (ScanRecord, error) {
	r.mu.Lock()
	for i := len(r.pending) - 1; i >= 0; i-- {
		if r.pending[i].ScanID == scanID {
			rec := r.pending[i]
			r.mu.Unlock()
			return rec, nil
		}
	}
	r.mu.Unlock()
	var (
		rec        ScanRecord
		at         int64
		level, act string
		types      string
	)
	err := r.db.QueryRow(ctx, `SELECT scan_id, kind, user_id, org_id, policy, caller, created_at, risk_score, risk_level, action, types, features
		FROM compliance_scans WHERE scan_id = ?`, scanID).Scan(&rec.ScanID, &rec.Kind, &rec.UserID, &rec.OrgID, &rec.Policy,
		&rec.Caller, &at, &rec.RiskScore, &level, &act, &types, &rec.Features)
	if errors.Is(err, sql.ErrNoRows) {
		return ScanRecord{}, ErrScanNotFound
	}
	if err != nil {
		return ScanRecord{}, err
	}
	rec.At = sqlstore.FromMicros(at)
	rec.Level, _ = ParseRiskLevel(level)
	rec.Action, _ = ParseAction(act)
	if types != "" {
		rec.Types = strings.Split(types, ",")
	}
	return rec, nil
}

// Purge deletes scan records older than the retention, and baseline
// counts older than the retention or 35 days, whichever is longer.
func (r *Records) Purge(ctx context.Context, now time.Time) error {
	if _, err := r.db.Exec(ctx, `DELETE FROM compliance_scans WHERE created_at < ?`, sqlstore.Micros(now.Add(-r.retention))); err != nil {
		return err
	}
	keep := max(r.retention, 35*24*time.Hour)
	_, err := r.db.Exec(ctx, `DELETE FROM compliance_baseline WHERE hour < ?`, now.Add(-keep).Unix())
	return err
}
