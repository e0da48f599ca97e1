// Package wire builds a running svc process from a Config: it opens the stores,
// loads or generates the master and admin keys, builds the provider registry,
// and assembles the components SERVICE_TYPE selects. It is the only place that
// knows every concrete type; only cmd/ (and end-to-end tests) import it.
package wire

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/cache"
	"github.com/svc-gateway/svc/internal/cache/embed"
	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/health"
	"github.com/svc-gateway/svc/internal/keyvault"
	"github.com/svc-gateway/svc/internal/limit"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/mgmt"
	"github.com/svc-gateway/svc/internal/pricing"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/proxy"
	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/secret"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/rediskv"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/upstream"
)

// Process is a built svc process, ready to Run.
type Process struct {
	// ProxyAddr and ManagementAddr are the bound addresses (nil when the
	// component does not run here).
	ProxyAddr      net.Addr
	ManagementAddr net.Addr
	// AdminKey is the management key in force.
	AdminKey string

	servers    []app.Component
	background []app.Component
	closers    []func()
	log        *slog.Logger
}

// Options are process-level choices beyond Config.
type Options struct {
	Log *slog.Logger
	// Announce receives the one-time notice of a generated admin key.
	Announce io.Writer
}

// Build opens the stores and assembles the components of cfg. On error every
// resource opened so far is closed.
func Build(ctx context.Context, cfg *config.Config, opt Options) (p *Process, err error) {
	log := opt.Log
	if log == nil {
		log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	p = &Process{log: log}
	defer func() {
		if err != nil {
			p.close()
		}
	}()
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("SVC_DATA_DIR %s: %w", cfg.DataDir, err)
	}

	master, _, err := secret.LoadOrCreate(cfg.DataDir, cfg.MasterKey)
	if err != nil {
		return nil, fmt.Errorf("SVC_MASTER_KEY: %w", err)
	}
	p.AdminKey = cfg.AdminAPIKey
	if p.AdminKey == "" {
		key, created, err := secret.LoadOrCreateToken(cfg.DataDir, "admin_api_key", newAdminKey)
		if err != nil {
			return nil, fmt.Errorf("ADMIN_API_KEY: %w", err)
		}
		p.AdminKey = key
		if created && opt.Announce != nil {
			fmt.Fprintf(opt.Announce, "\nGenerated ADMIN_API_KEY (shown once; kept in %s, mode 0600):\n\n    %s\n\n",
				filepath.Join(cfg.DataDir, "admin_api_key"), key)
		}
	}

	dbURL := cfg.DatabaseURL
	if dbURL == "" {
		abs, err := filepath.Abs(cfg.SQLitePath())
		if err != nil {
			return nil, err
		}
		dbURL = "sqlite://" + abs
	}
	db, err := sqlstore.Open(ctx, dbURL)
	if err != nil {
		return nil, fmt.Errorf("DATABASE_URL: %w", err)
	}
	p.closers = append(p.closers, func() { db.Close() })

	var kv store.KV
	if cfg.RedisURL != "" {
		r, err := rediskv.Open(cfg.RedisURL, cfg.RedisPrefix)
		if err != nil {
			return nil, fmt.Errorf("KEYSTORE_REDIS_URL: %w", err)
		}
		if err := r.Ping(ctx); err != nil {
			r.Close()
			return nil, fmt.Errorf("KEYSTORE_REDIS_URL: %w", err)
		}
		kv = r
	} else {
		kv = memkv.New()
	}
	p.closers = append(p.closers, func() { kv.Close() })
	probes := map[string]app.Probe{"sql": db.Ping, "kv": kv.Ping}

	var logger *audit.Logger
	m := metrics.New(func() float64 {
		if logger == nil {
			return 0
		}
		return float64(logger.QueueLen())
	})
	logger = audit.NewLogger(db, kv, m, log, audit.Options{QueueSize: cfg.AuditQueueSize, FlushInterval: cfg.AuditFlushInterval, HotTTL: cfg.LogHotTTL, HotMaxEntries: cfg.LogHotMaxEntries})
	// The logger is closed after the servers drained (see Run), before the stores.
	p.closers = append([]func(){logger.Close}, p.closers...)

	keys := auth.NewKeys(db, kv, cfg.KeyCacheTTL, log)
	tracker := health.New(kv, log)
	reg := Registry(cfg)
	vault := keyvault.New(db, secret.NewSealer(master), kv, func(name string) string {
		if pr, ok := reg.Lookup(name); ok {
			return pr.EnvKey
		}
		return ""
	})
	live := route.NewLive(db, kv, log)
	if err := live.Load(ctx); err != nil {
		return nil, fmt.Errorf("routing config: %w", err)
	}
	// The alerts work will send these as webhooks; until then they are logged.
	spend := route.NewSpend(kv, live.Current, log).OnBudget(func(ev route.BudgetEvent) {
		log.Warn("BudgetThreshold", "alert", "BudgetThreshold", "provider", ev.Provider, "day", ev.Day,
			"budget_usd", ev.BudgetUSD, "spent_usd", ev.SpentUSD)
	})
	p.background = append(p.background, app.Func{N: "key-invalidation", F: keys.Run}, app.Func{N: "provider-key-invalidation", F: vault.Run},
		app.Func{N: "health", F: tracker.Run}, app.Func{N: "routing-config", F: live.Run}, app.Func{N: "provider-spend", F: spend.Run})
	var lastFailure func() *route.Failure
	prices, err := Prices(cfg.PricesFile)
	if err != nil {
		return nil, err
	}
	limiter := limit.New(kv, prices, limit.Options{HourlyRequests: int64(cfg.HourlyRequests), Log: log,
		// The alerts work will send these as webhooks; until then they are logged.
		OnBudget: func(ev limit.BudgetEvent) {
			log.Warn("BudgetThreshold", "alert", "BudgetThreshold", "key_id", ev.KeyID, "period", ev.Period,
				"cap_usd", ev.CapUSD, "spent_usd", ev.SpentUSD)
		},
		OnSpend: func(keyID string, spent float64) { m.VKeySpend.WithLabelValues(keyID).Set(spent) }})
	// Settlements still running finish before the stores close.
	p.closers = append([]func(){limiter.Settled}, p.closers...)

	if cfg.Has(config.Proxy) {
		resolver := route.NewResolver(reg).WithSources(route.Sources{
			Config: live.Current, Health: tracker, Prices: perToken{prices}, Budgets: spend,
		})
		// The cache's provider embedder calls through the proxy, made below.
		var embedVia func(ctx context.Context, texts []string) ([][]float32, error)
		sc, err := semanticCache(cfg.Cache, kv, m, log, func(ctx context.Context, texts []string) ([][]float32, error) {
			return embedVia(ctx, texts)
		})
		if err != nil {
			return nil, err
		}
		px := proxy.New(proxy.Deps{
			Keys: keys, Vault: vault, Registry: reg, Resolver: resolver, Spend: spend, Routing: live.Current,
			Limits: limiter, Cache: sc,
			Client: upstream.New(upstream.Options{HeaderTimeout: cfg.UpstreamTimeout, Transport: cfg.UpstreamTransport}),
			Prices: prices, Audit: logger, Metrics: m, Log: log, Health: tracker,
			MaxBodyBytes: cfg.MaxBodyBytes, Probes: probes,
		})
		srv, err := app.Listen(config.Proxy, cfg.Addr(cfg.ProxyPort), app.Recover(px.Handler(), log), cfg.ShutdownTimeout, log)
		if err != nil {
			return nil, err
		}
		p.closers = append(p.closers, func() { srv.Close() })
		p.ProxyAddr = srv.Addr()
		p.servers = append(p.servers, srv)
		p.background = append(p.background, app.Func{N: "model-refresh", F: px.Run})
		if sc != nil {
			embedVia = px.Embedder(cfg.Cache.EmbeddingModel)
			p.background = append(p.background, app.Func{N: "semantic-cache", F: sc.Run})
		}
		lastFailure = px.LastFailure
	}
	if cfg.Has(config.Management) {
		api := mgmt.New(mgmt.Deps{AdminKey: p.AdminKey, Keys: keys, Vault: vault, Logs: db, Health: tracker, Routing: live, Limits: limiter, LastFailure: lastFailure,
			Cache: cache.NewAdmin(kv), EnvKeys: envKeys(reg), Probes: probes, Log: log})
		srv, err := app.Listen(config.Management, cfg.Addr(cfg.ManagementPort), app.Recover(api.Handler(), log), cfg.ShutdownTimeout, log)
		if err != nil {
			return nil, err
		}
		p.closers = append(p.closers, func() { srv.Close() })
		p.ManagementAddr = srv.Addr()
		p.servers = append(p.servers, srv)
	}
	if cfg.PprofAddr != "" {
		srv, err := app.Listen("pprof", cfg.PprofAddr, app.PprofHandler(), cfg.ShutdownTimeout, log)
		if err != nil {
			return nil, err
		}
		p.closers = append(p.closers, func() { srv.Close() })
		p.servers = append(p.servers, srv)
	}
	return p, nil
}

// Run serves until ctx ends, drains the servers, stops the background work,
// flushes the audit log and closes the stores.
func (p *Process) Run(ctx context.Context) error {
	bgCtx, stopBG := context.WithCancel(context.Background())
	bgDone := make(chan error, 1)
	go func() { bgDone <- app.RunAll(bgCtx, p.background...) }()
	err := app.RunAll(ctx, p.servers...)
	stopBG()
	<-bgDone
	p.close()
	p.log.Info("stopped")
	return err
}

func (p *Process) close() {
	for _, c := range p.closers {
		c()
	}
	p.closers = nil
}

func envKeys(reg *provider.Registry) map[string]string {
	out := map[string]string{}
	for _, n := range reg.Names() {
		if p, _ := reg.Lookup(n); p.EnvKey != "" {
			out[n] = secret.Mask(p.EnvKey)
		}
	}
	return out
}

// Prices is the embedded price table with the overrides of file, if any.
func Prices(file string) (*pricing.Table, error) {
	t := pricing.Default()
	if file == "" {
		return t, nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("SVC_PRICES_FILE: %w", err)
	}
	defer f.Close()
	over, err := pricing.Load(f)
	if err != nil {
		return nil, fmt.Errorf("SVC_PRICES_FILE %s: %w", file, err)
	}
	return t.Merge(over), nil
}

func newAdminKey() (string, error) {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "svc-admin-" + hex.EncodeToString(b), nil
}

// perToken prices strategies compare: the mean of input and output price per
// million tokens.
type perToken struct{ t *pricing.Table }

func (p perToken) PerToken(provider, model string) (float64, bool) {
	price, ok := p.t.Lookup(provider, model)
	if !ok {
		return 0, false
	}
	return (price.Input + price.Output) / 2, true
}

// semanticCache builds the semantic cache from its settings, or nil when it
// is off. viaProxy embeds through svc's own providers; it is used when
// SEMANTIC_CACHE_EMBEDDING_MODEL names a model (batched and memoised).
func semanticCache(s config.CacheSettings, kv store.KV, m *metrics.Metrics, log *slog.Logger,
	viaProxy func(ctx context.Context, texts []string) ([][]float32, error)) (*cache.Cache, error) {
	if !s.Enabled {
		return nil, nil
	}
	l1 := s.L1Bytes
	if l1 == 0 {
		l1 = -1 // off
	}
	o := cache.Options{
		Threshold: s.Threshold, TTL: s.TTL, MaxTemperature: s.MaxTemperature, L1Bytes: l1,
		MaxEntries: s.MaxEntries, SharedNamespaces: s.SharedNamespaces, Metrics: m, Log: log,
	}
	if s.EmbeddingModel != "" {
		o.Embedder = embed.Memo(embed.Batch(embed.Func("provider:"+s.EmbeddingModel, 0, viaProxy), 64, 2*time.Millisecond), 10_000)
	}
	return cache.New(kv, o)
}
