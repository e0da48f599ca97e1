package wire

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/svc-gateway/svc/internal/alerts"
	"github.com/svc-gateway/svc/internal/analytics"
	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/bridge"
	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/spool"
	"github.com/svc-gateway/svc/internal/store"
)

// The audit log's parts: the local spool every entry is appended to, the
// hot tier (Redis when shared, else the spool itself), the bridge that
// drains the hot tier into SQL, and the reader that merges both tiers.

// Spool is this process's local spool in the data dir, opened on first
// use; spools left by processes that died are adopted (their entries
// forwarded like this process's own).
func (s *System) Spool() (*spool.Spool, error) {
	return s.spool.get(func() (*spool.Spool, error) {
		if err := s.DataDir(); err != nil {
			return nil, err
		}
		parent := filepath.Join(s.Config.DataDir, "spool")
		opt := spool.Options{Key: audit.HotLogKey, MaxBytes: s.Config.LogSpillMaxBytes, Logger: s.Log}
		sp, err := spool.OpenDir(parent, opt)
		if err != nil {
			return nil, fmt.Errorf("audit spool in %s: %w", s.Config.DataDir, err)
		}
		s.adopt(parent, opt, sp)
		s.onClose(func() {
			if err := sp.Close(); err != nil {
				s.Log.Error("audit spool: close", "err", err)
			}
		})
		return sp, nil
	})
}

// adopt moves the entries of spools left by processes that died into sp
// (they reach the hot tier with sp's own), then removes them. A failure is
// logged: the orphan stays for the next start.
func (s *System) adopt(parent string, opt spool.Options, sp *spool.Spool) {
	orphans, err := spool.Orphans(parent, opt)
	if err != nil {
		s.Log.Warn("audit spool: orphans", "err", err)
	}
	ctx := s.ctx
	for _, o := range orphans {
		moved := 0
		for {
			n, err := audit.Move(ctx, o, "adopt", "adopt", sp, 512, 0)
			if err != nil || n == 0 {
				break
			}
			moved += n
		}
		if err := o.Remove(); err != nil {
			s.Log.Warn("audit spool: orphan not fully adopted; retried at the next start", "dir", o.Dir(), "moved", moved, "err", err)
			o.Close()
			continue
		}
		s.Log.Info("audit spool: adopted the entries of a process that stopped", "dir", o.Dir(), "entries", moved)
	}
}

// HotTier is the audit hot tier: the Redis stream when the KV store is
// Redis, else this process's spool (the embedded default, one process).
func (s *System) HotTier() (store.Streams, error) {
	return s.hot.get(func() (store.Streams, error) {
		if s.Config.RedisURL != "" {
			kv, err := s.KV()
			if err != nil {
				return nil, err
			}
			st, ok := kv.(store.Streams)
			if !ok {
				return nil, fmt.Errorf("KEYSTORE_REDIS_URL: the store has no streams")
			}
			return st, nil
		}
		return s.Spool()
	})
}

// Audit is the audit logger: entries to the spool at once, forwarded to the
// shared hot tier. In the embedded default the bridge drains the spool
// in-process. It flushes when the process ends, before the stores close.
func (s *System) Audit() (*audit.Logger, error) {
	return s.audit.get(func() (*audit.Logger, error) {
		if !s.Config.AuditEnabled {
			s.Log.Warn("audit is off (SVC_AUDIT_ENABLED=false): no VAS log entries are kept")
			return audit.NewLogger(s.Metrics(), s.Log, audit.Options{}), nil
		}
		sp, err := s.Spool()
		if err != nil {
			return nil, err
		}
		opt := audit.Options{Spool: sp, Consumer: s.consumer(), FlushInterval: s.Config.AuditFlushInterval}
		if s.Config.RedisURL != "" {
			if opt.Hot, err = s.HotTier(); err != nil {
				return nil, err
			}
		} else if _, err := s.Bridge(); err != nil {
			// Embedded: the spool is the hot tier; the bridge drains it here.
			return nil, err
		}
		l := audit.NewLogger(s.Metrics(), s.Log, opt)
		s.onClose(l.Close)
		return l, nil
	})
}

// consumer names this process in stream groups: the host and pid.
func (s *System) consumer() string {
	host, _ := os.Hostname()
	return host + "-" + strconv.Itoa(os.Getpid())
}

// LogReader reads the audit log over both tiers.
func (s *System) LogReader() (*audit.Reader, error) {
	db, err := s.SQL()
	if err != nil {
		return nil, err
	}
	hot, err := s.HotTier()
	if err != nil {
		return nil, err
	}
	return &audit.Reader{Store: audit.NewSQLStore(db), Hot: hot}, nil
}

// Bridge is the log bridge, draining the hot tier into SQL while the
// process runs.
func (s *System) Bridge() (*bridge.Bridge, error) {
	return s.bridge.get(func() (*bridge.Bridge, error) {
		db, err := s.SQL()
		if err != nil {
			return nil, err
		}
		hot, err := s.HotTier()
		if err != nil {
			return nil, err
		}
		n, err := s.Alerts()
		if err != nil {
			return nil, err
		}
		c := s.Config
		rollups := analytics.NewRollups(db)
		b := bridge.New(hot, audit.NewSQLStore(db), s.Metrics(), s.Log, bridge.Options{
			Rollups: rollups.Add,
			Purge: func(ctx context.Context, now time.Time) error {
				_, err := rollups.Purge(ctx, now, c.LogRetention)
				return err
			},
			Consumer: c.BridgeConsumer, Batch: c.BridgeBatch, ClaimIdle: c.BridgeClaimIdle,
			HotTTL: c.LogHotTTL, HotMaxEntries: c.LogHotMaxEntries, Retention: c.LogRetention,
			BacklogAlert: int64(c.BridgeBacklogAlert),
			Observe:      s.watch(n),
			OnBacklog: func(backlog int64, lag time.Duration) {
				s.Log.Warn("audit hot tier backlog past the threshold", "alert", "Custom", "backlog", backlog, "lag", lag)
				n.Send(alerts.Alert{Type: alerts.Custom, Subject: "bridge:backlog", Severity: alerts.Warning,
					Title:   "Audit log backlog",
					Message: fmt.Sprintf("%d audit entries wait in the hot tier; the oldest is %s old. Is the long-term database reachable?", backlog, lag.Round(time.Second)),
					Time:    time.Now()})
			},
		})
		s.runs("log-bridge", b.Run)
		return b, nil
	})
}

// backlog is the hot tier's count of entries not yet written, for the
// comprehensive health.
func (s *System) backlog(ctx context.Context) (int64, error) {
	hot, err := s.HotTier()
	if err != nil {
		return 0, err
	}
	info, err := hot.StreamInfo(ctx, audit.HotLogKey, audit.BridgeGroup)
	return info.Backlog(), err
}

func newBridge(s *System) (*app.Service, error) {
	var err error
	beats := part(&err, s.Heartbeat)
	admin := part(&err, s.AdminKey)
	b := part(&err, s.Bridge)
	reader := part(&err, s.LogReader)
	probes := part(&err, s.Probes)
	db := part(&err, s.SQL)
	if err != nil {
		return nil, err
	}
	srv, err := s.serve(config.Bridge, &bridge.API{Bridge: b, Reader: reader, Store: audit.NewSQLStore(db),
		AdminKey: admin, Probes: probes, Log: s.Log})
	if err != nil {
		return nil, err
	}
	beat := beats.Component(config.Bridge, func() map[string]any {
		st := b.Status()
		d := map[string]any{"lag_seconds": st.Hot.Lag(time.Now()).Seconds(), "backlog": st.Hot.Backlog(), "written": st.Written}
		if !st.LastWrite.IsZero() {
			d["last_write"] = st.LastWrite
		}
		return d
	})
	return &app.Service{Server: srv, Background: []app.Component{beat}}, nil
}
