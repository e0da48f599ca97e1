package wire

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/svc-gateway/svc/internal/alerts"
	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/bridge"
	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/health"
	"github.com/svc-gateway/svc/internal/heartbeat"
	"github.com/svc-gateway/svc/internal/keyvault"
	"github.com/svc-gateway/svc/internal/limit"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/pricing"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/secret"
	"github.com/svc-gateway/svc/internal/spool"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/rediskv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/teams"
	"github.com/svc-gateway/svc/internal/upstream"
)

// System is what the components of one process share: the stores, the keys,
// the provider registry, health figures, limits, the audit log. Each part is
// built once, the first time a component asks for it, so a process builds
// only what its components use; a part with background work (following an
// invalidation channel, flushing counters) registers it when it is built,
// and a part that holds resources registers how to release them. The System
// is built on one goroutine (Build's); its parts are safe for concurrent use
// once built.
type System struct {
	Config *config.Config
	Log    *slog.Logger
	// announce receives the one-time notice of a generated admin key.
	announce io.Writer
	ctx      context.Context

	// background is the shared parts' work, run while any component runs.
	background []app.Component
	// closers release the parts, run last-built first (the audit log
	// flushes before the stores close).
	closers []func()

	dataDir    lazy[struct{}]
	master     lazy[secret.MasterKey]
	adminKey   lazy[string]
	sql        lazy[*sqlstore.DB]
	kv         lazy[store.KV]
	metrics    lazy[*metrics.Metrics]
	audit      lazy[*audit.Logger]
	spool      lazy[*spool.Spool]
	hot        lazy[store.Streams]
	bridge     lazy[*bridge.Bridge]
	alerts     lazy[*alerts.Notifier]
	keys       lazy[*auth.Keys]
	registry   lazy[*provider.Registry]
	vault      lazy[*keyvault.Vault]
	routing    lazy[*route.Live]
	health     lazy[*health.Tracker]
	spend      lazy[*route.Spend]
	prices     lazy[*pricing.Table]
	limiter    lazy[*limit.Limiter]
	client     lazy[*upstream.Client]
	tracer     lazy[trace.Tracer]
	failures   lazy[*route.Failures]
	known      lazy[func(provider, model string) bool]
	beats      lazy[*heartbeat.Publisher]
	compliance lazy[*Compliance]
	engine     lazy[*compliance.Engine]
	enforcer   lazy[*enforcer]
	signin     lazy[*signIn]
	teams      lazy[*teams.Directory]
}

// lazy is a part built on first use; a failed build is not retried.
type lazy[T any] struct {
	done bool
	v    T
	err  error
}

func (l *lazy[T]) get(build func() (T, error)) (T, error) {
	if !l.done {
		l.v, l.err = build()
		l.done = true
	}
	return l.v, l.err
}

func newSystem(ctx context.Context, cfg *config.Config, log *slog.Logger, announce io.Writer) *System {
	return &System{Config: cfg, Log: log, announce: announce, ctx: ctx}
}

// onClose registers f to run when the process ends, before the parts built
// earlier are released.
func (s *System) onClose(f func()) { s.closers = append(s.closers, f) }

// runs registers background work of a shared part.
func (s *System) runs(name string, f func(ctx context.Context) error) {
	s.background = append(s.background, app.Func{N: name, F: f})
}

// close releases every part, last-built first.
func (s *System) close() {
	for i := len(s.closers) - 1; i >= 0; i-- {
		s.closers[i]()
	}
	s.closers = nil
}

// DataDir makes sure SVC_DATA_DIR exists (mode 0700).
func (s *System) DataDir() error {
	_, err := s.dataDir.get(func() (struct{}, error) {
		if err := os.MkdirAll(s.Config.DataDir, 0o700); err != nil {
			return struct{}{}, fmt.Errorf("SVC_DATA_DIR %s: %w", s.Config.DataDir, err)
		}
		return struct{}{}, nil
	})
	return err
}

// MasterKey is the key that seals provider keys: SVC_MASTER_KEY, else one
// generated into the data dir.
func (s *System) MasterKey() (secret.MasterKey, error) {
	return s.master.get(func() (secret.MasterKey, error) {
		if err := s.DataDir(); err != nil {
			return secret.MasterKey{}, err
		}
		key, _, err := secret.LoadOrCreate(s.Config.DataDir, s.Config.MasterKey)
		if err != nil {
			return secret.MasterKey{}, fmt.Errorf("SVC_MASTER_KEY: %w", err)
		}
		return key, nil
	})
}

// AdminKey is the management key: ADMIN_API_KEY, else one generated into
// the data dir (announced once).
func (s *System) AdminKey() (string, error) {
	return s.adminKey.get(func() (string, error) {
		if s.Config.AdminAPIKey != "" {
			return s.Config.AdminAPIKey, nil
		}
		if err := s.DataDir(); err != nil {
			return "", err
		}
		key, created, err := secret.LoadOrCreateToken(s.Config.DataDir, "admin_api_key", newAdminKey)
		if err != nil {
			return "", fmt.Errorf("ADMIN_API_KEY: %w", err)
		}
		if created && s.announce != nil {
			fmt.Fprintf(s.announce, "\nGenerated ADMIN_API_KEY (shown once; kept in %s, mode 0600):\n\n    %s\n\n",
				filepath.Join(s.Config.DataDir, "admin_api_key"), key)
		}
		return key, nil
	})
}

// SQL is the record store: DATABASE_URL, else SQLite in the data dir.
func (s *System) SQL() (*sqlstore.DB, error) {
	return s.sql.get(func() (*sqlstore.DB, error) {
		url := s.Config.DatabaseURL
		if url == "" {
			if err := s.DataDir(); err != nil {
				return nil, err
			}
			abs, err := filepath.Abs(s.Config.SQLitePath())
			if err != nil {
				return nil, err
			}
			url = "sqlite://" + abs
		}
		db, err := sqlstore.OpenWith(s.ctx, url, sqlstore.Options{MaxConns: s.Config.DatabaseMaxConns})
		if err != nil {
			return nil, fmt.Errorf("DATABASE_URL: %w", err)
		}
		s.onClose(func() { db.Close() })
		return db, nil
	})
}

// KV is the hot-state store: Redis when KEYSTORE_REDIS_URL is set, else
// in-process, keeping the spend counters (durableKey) in SQL so that a
// restart does not reset them (it is built after SQL, so it closes, writing
// them, before SQL does).
func (s *System) KV() (store.KV, error) {
	return s.kv.get(func() (store.KV, error) {
		if s.Config.RedisURL == "" {
			db, err := s.SQL()
			if err != nil {
				return nil, err
			}
			kv, err := memkv.Open(s.ctx, memkv.Options{Durable: sqlstore.NewCounters(db), Keep: durableKey, Log: s.Log})
			if err != nil {
				return nil, fmt.Errorf("in-process KV: %w", err)
			}
			s.onClose(func() {
				if err := kv.Close(); err != nil {
					s.Log.Error("in-process KV: the last spend counters could not be written", "err", err)
				}
			})
			return kv, nil
		}
		r, err := rediskv.Open(s.Config.RedisURL, s.Config.RedisPrefix)
		if err != nil {
			return nil, fmt.Errorf("KEYSTORE_REDIS_URL: %w", err)
		}
		if err := r.Ping(s.ctx); err != nil {
			r.Close()
			return nil, fmt.Errorf("KEYSTORE_REDIS_URL: %w", err)
		}
		s.onClose(func() { r.Close() })
		return r, nil
	})
}

// durableKey reports whether a KV key holds a counter the in-process KV
// keeps across restarts: a principal's spend in its budget period,
// limit:{<kind>:<id>}:spend:<period>:<date> (internal/limit), and a
// provider's spend of a day, route:spend:<provider>:<day> (internal/route),
// with their ":alerted" markers. Redis deployments leave persistence to
// Redis.
func durableKey(key string) bool {
	return strings.HasPrefix(key, "route:spend:") ||
		strings.HasPrefix(key, "limit:{") && strings.Contains(key, "}:spend:")
}

// stores is SQL and KV together, which most parts need.
func (s *System) stores() (*sqlstore.DB, store.KV, error) {
	db, err := s.SQL()
	if err != nil {
		return nil, nil, err
	}
	kv, err := s.KV()
	if err != nil {
		return nil, nil, err
	}
	return db, kv, nil
}

// Probes are the readiness checks of every component: the stores.
func (s *System) Probes() (map[string]app.Probe, error) {
	db, kv, err := s.stores()
	if err != nil {
		return nil, err
	}
	return map[string]app.Probe{"sql": db.Ping, "kv": kv.Ping}, nil
}

// Metrics are the process's Prometheus collectors.
func (s *System) Metrics() *metrics.Metrics {
	m, _ := s.metrics.get(func() (*metrics.Metrics, error) {
		return metrics.New(func() float64 {
			if sp := s.spool.v; sp != nil {
				return float64(sp.Unacked())
			}
			return 0
		}), nil
	})
	return m
}

// Keys are the virtual keys, with their invalidation follower.
func (s *System) Keys() (*auth.Keys, error) {
	return s.keys.get(func() (*auth.Keys, error) {
		db, kv, err := s.stores()
		if err != nil {
			return nil, err
		}
		k := auth.NewKeys(auth.NewSQLKeyStore(db), kv, s.Config.KeyCacheTTL, s.Log)
		s.runs("key-invalidation", k.Run)
		return k, nil
	})
}

// Registry is the configured providers.
func (s *System) Registry() *provider.Registry {
	r, _ := s.registry.get(func() (*provider.Registry, error) { return Registry(s.Config), nil })
	return r
}

// Vault resolves provider keys (stored, else the environment), with its
// invalidation follower.
func (s *System) Vault() (*keyvault.Vault, error) {
	return s.vault.get(func() (*keyvault.Vault, error) {
		db, kv, err := s.stores()
		if err != nil {
			return nil, err
		}
		master, err := s.MasterKey()
		if err != nil {
			return nil, err
		}
		reg := s.Registry()
		v := keyvault.New(keyvault.NewSQLStore(db), secret.NewSealer(master), kv, func(name string) string {
			if pr, ok := reg.Lookup(name); ok {
				return pr.EnvKey
			}
			return ""
		})
		s.runs("provider-key-invalidation", v.Run)
		return v, nil
	})
}

// Routing is the live routing configuration, loaded now and followed after.
func (s *System) Routing() (*route.Live, error) {
	return s.routing.get(func() (*route.Live, error) {
		db, kv, err := s.stores()
		if err != nil {
			return nil, err
		}
		live := route.NewLive(route.NewSQLConfigStore(db), kv, s.Log)
		if err := live.Load(s.ctx); err != nil {
			return nil, fmt.Errorf("routing config: %w", err)
		}
		s.runs("routing-config", live.Run)
		return live, nil
	})
}

// Health is the fleet-wide provider health, flushed and read back each
// second; models svc does not know are counted as "other".
func (s *System) Health() (*health.Tracker, error) {
	return s.health.get(func() (*health.Tracker, error) {
		kv, err := s.KV()
		if err != nil {
			return nil, err
		}
		known, err := s.Known()
		if err != nil {
			return nil, err
		}
		t := health.New(kv, s.Log).Known(known)
		s.runs("health", t.Run)
		return t, nil
	})
}

// Known reports whether svc knows a provider's model: in the price table,
// among the provider's configured models, or a target or alias of the
// routing configuration. Metric labels and health series fold every other
// name a caller invents into "other", so their number stays bounded.
func (s *System) Known() (func(provider, model string) bool, error) {
	return s.known.get(func() (func(provider, model string) bool, error) {
		prices, err := s.Prices()
		if err != nil {
			return nil, err
		}
		live, err := s.Routing()
		if err != nil {
			return nil, err
		}
		return knownModels(s.Registry(), prices, live.Current), nil
	})
}

// Spend is the providers' daily spend, for provider budgets.
func (s *System) Spend() (*route.Spend, error) {
	return s.spend.get(func() (*route.Spend, error) {
		kv, err := s.KV()
		if err != nil {
			return nil, err
		}
		live, err := s.Routing()
		if err != nil {
			return nil, err
		}
		n, err := s.Alerts()
		if err != nil {
			return nil, err
		}
		log := s.Log
		sp := route.NewSpend(kv, live.Current, log).OnBudget(func(ev route.BudgetEvent) {
			log.Warn("BudgetThreshold", "alert", "BudgetThreshold", "provider", ev.Provider, "day", ev.Day,
				"budget_usd", ev.BudgetUSD, "spent_usd", ev.SpentUSD, "level", ev.Level)
			n.Send(alerts.NewProviderBudget(ev.Provider, ev.Day, ev.BudgetUSD, ev.SpentUSD, time.Now()))
		})
		s.runs("provider-spend", sp.Run)
		return sp, nil
	})
}

// Prices is the price table: the embedded one with SVC_PRICES_FILE's overrides.
func (s *System) Prices() (*pricing.Table, error) {
	return s.prices.get(func() (*pricing.Table, error) { return Prices(s.Config.PricesFile) })
}

// Limiter enforces the keys' limits; its settlements finish before the
// stores close.
func (s *System) Limiter() (*limit.Limiter, error) {
	return s.limiter.get(func() (*limit.Limiter, error) {
		kv, err := s.KV()
		if err != nil {
			return nil, err
		}
		prices, err := s.Prices()
		if err != nil {
			return nil, err
		}
		n, err := s.Alerts()
		if err != nil {
			return nil, err
		}
		log, m := s.Log, s.Metrics()
		l := limit.New(kv, prices, limit.Options{HourlyRequests: int64(s.Config.HourlyRequests), Log: log,
			OnBudget: func(ev limit.BudgetEvent) {
				log.Warn("BudgetThreshold", "alert", "BudgetThreshold", "key_id", ev.KeyID, "period", ev.Period,
					"cap_usd", ev.CapUSD, "spent_usd", ev.SpentUSD, "level", ev.Level)
				n.Send(alerts.NewKeyBudget(ev.KeyID, ev.Period, ev.CapUSD, ev.SpentUSD, time.Now()))
			},
			MeterSpend: true})
		s.runs("spend-meter", l.Run)
		keys, err := s.Keys()
		if err != nil {
			return nil, err
		}
		m.VKeySpend.SetSource(func() map[string]float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			return l.Spends(ctx)
		}, func(id string) string {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			if vk, err := keys.Record(ctx, id); err == nil {
				return vk.MaskedKey
			}
			return ""
		})
		s.onClose(l.Settled)
		return l, nil
	})
}

// Upstream is the HTTP client to providers.
func (s *System) Upstream() *upstream.Client {
	c, _ := s.client.get(func() (*upstream.Client, error) {
		return upstream.New(upstream.Options{HeaderTimeout: s.Config.UpstreamTimeout, Transport: s.Config.UpstreamTransport}), nil
	})
	return c
}

// Failures keeps the fleet's last failed upstream attempt, for the routing
// status: noted by proxies, written to the KV store once a second.
func (s *System) Failures() (*route.Failures, error) {
	return s.failures.get(func() (*route.Failures, error) {
		kv, err := s.KV()
		if err != nil {
			return nil, err
		}
		f := route.NewFailures(kv, s.Log)
		s.runs("routing-failures", f.Run)
		return f, nil
	})
}

func newAdminKey() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "svc-admin-" + hex.EncodeToString(b), nil
}
