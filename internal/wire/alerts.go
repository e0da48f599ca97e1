package wire

import (
	"time"

	"github.com/svc-gateway/svc/internal/alerts"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/auditchain"
)

// Alerts is the webhook notifier (SVC_ALERTS_ENABLED and the three
// webhook URLs), delivering while the process runs. Disabled, it accepts
// and drops.
func (s *System) Alerts() (*alerts.Notifier, error) {
	return s.alerts.get(func() (*alerts.Notifier, error) {
		kv, err := s.KV()
		if err != nil {
			return nil, err
		}
		a := s.Config.Alerts
		n, err := alerts.New(alerts.Options{Enabled: a.Enabled, Slack: a.SlackURL, Teams: a.TeamsURL,
			Discord: a.DiscordURL, Dedup: a.Dedup, Store: kv, Log: s.Log, Registerer: s.Metrics().Registry})
		if err != nil {
			return nil, err
		}
		s.runs("alerts", n.Run)
		return n, nil
	})
}

// watch turns the entries the bridge writes into ProviderFailure and
// SlowRequest alerts: only entries of requests that reached a provider
// count (cache hits and refusals before the call do not), and a failure
// is the provider's (5xx, or no answer).
func (s *System) watch(n *alerts.Notifier) func(audit.Record) {
	a := s.Config.Alerts
	w := alerts.NewWatch(n, alerts.WatchOptions{ErrorRate: a.ErrorRate, Window: a.Window, Slow: a.Slow})
	return func(r audit.Record) {
		if r.Provider == "" || r.CacheHit {
			return
		}
		ok := r.Status < 500
		if !ok && r.Status == 0 {
			ok = r.Success
		}
		w.Observe(alerts.Observation{Provider: r.Provider, Time: r.Timestamp, OK: ok,
			Latency: time.Duration(r.LatencyMS) * time.Millisecond, RequestID: r.RequestID})
	}
}

// Chain is the tamper-evident audit chain (SVC_AUDIT_CHAIN_KEY keys it).
func (s *System) Chain() (*auditchain.SQLStore, error) {
	db, err := s.SQL()
	if err != nil {
		return nil, err
	}
	return auditchain.NewSQLStore(db, auditchain.Options{Key: []byte(s.Config.AuditChainKey),
		Metrics: auditchain.NewMetrics(s.Metrics().Registry)}), nil
}
