// Package wire builds a running svc process from a Config. components.go is
// the component map: SERVICE_TYPE name → constructor. Each constructor takes
// the parts it needs from the System (system.go), which builds every shared
// part — stores, master and admin keys, provider registry, health, limits,
// audit log — once, on first use, with its background work and its release.
// Process runs the components and, when they have drained, releases the
// System. wire is the only place that knows every concrete type; only cmd/
// (and end-to-end tests) import it.
package wire

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/svc-gateway/svc/internal/app"
	"github.com/svc-gateway/svc/internal/cache"
	"github.com/svc-gateway/svc/internal/cache/embed"
	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/metrics"
	"github.com/svc-gateway/svc/internal/pricing"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/secret"
	"github.com/svc-gateway/svc/internal/store"
)

// Process is a built svc process, ready to Run.
type Process struct {
	// AdminKey is the management key in force ("" when no component here
	// needs it).
	AdminKey string

	sys   *System
	comps []app.Component
	addrs map[string]net.Addr
	log   *slog.Logger
}

// Options are process-level choices beyond Config.
type Options struct {
	Log *slog.Logger
	// Announce receives the one-time notice of a generated admin key.
	Announce io.Writer
}

// Build assembles the components cfg selects, from the component map over
// one System: each component asks the System for the parts it uses, which
// are built then. On error everything built so far is released and the
// error names the cause; nothing is left running.
func Build(ctx context.Context, cfg *config.Config, opt Options) (*Process, error) {
	log := opt.Log
	if log == nil {
		log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	}
	sys := newSystem(ctx, cfg, log, opt.Announce)
	p := &Process{sys: sys, addrs: map[string]net.Addr{}, log: log}
	for _, name := range cfg.Components {
		build, ok := components[name]
		if !ok {
			sys.close()
			return nil, fmt.Errorf("component %q is not available in this build", name)
		}
		svc, err := build(sys)
		if err != nil {
			sys.close()
			return nil, err
		}
		p.comps = append(p.comps, svc)
		p.addrs[name] = svc.Addr()
	}
	if sys.adminKey.done {
		p.AdminKey = sys.adminKey.v
	}
	if cfg.PprofAddr != "" {
		srv, err := app.Listen("pprof", cfg.PprofAddr, app.PprofHandler(), cfg.ShutdownTimeout, log)
		if err != nil {
			sys.close()
			return nil, err
		}
		sys.onClose(func() { srv.Close() })
		p.comps = append(p.comps, srv)
	}
	return p, nil
}

// Addr is the bound address of component name, or nil when it does not run
// in this process.
func (p *Process) Addr(name string) net.Addr { return p.addrs[name] }

// Run serves until ctx ends: the components drain their requests and
// streams and stop their own background work, then the shared background
// work stops, the audit log flushes and the stores close.
func (p *Process) Run(ctx context.Context) error {
	bgCtx, stopBG := context.WithCancel(context.Background())
	bgDone := make(chan error, 1)
	go func() { bgDone <- app.RunAll(bgCtx, p.sys.background...) }()
	err := app.RunAll(ctx, p.comps...)
	stopBG()
	<-bgDone
	p.sys.close()
	p.log.Info("stopped")
	return err
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
		MaxEntries: s.MaxEntries, SharedNamespaces: s.SharedNamespaces, Sharing: s.Scope, Metrics: m, Log: log,
	}
	if s.EmbeddingModel != "" {
		o.Embedder = embed.Memo(embed.Batch(embed.Func("provider:"+s.EmbeddingModel, 0, viaProxy), 64, 2*time.Millisecond), 10_000)
	}
	return cache.New(kv, o)
}
