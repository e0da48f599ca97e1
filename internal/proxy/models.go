package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/keyvault"
	"github.com/svc-gateway/svc/internal/pricing"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/upstream"
)

// modelCache answers GET /v1/models from the price table, configured models
// and lists fetched from providers in the background, so the answer never
// waits on a provider.
type modelCache struct {
	reg     *provider.Registry
	res     *route.Resolver
	vault   KeySource
	client  *upstream.Client
	prices  *pricing.Table
	log     *slog.Logger
	fetched atomic.Pointer[map[string][]string] // provider → model ids
	// routing gives the configured aliases and chains, listed as models too.
	routing func() *route.Config
}

func newModelCache(reg *provider.Registry, res *route.Resolver, vault KeySource, client *upstream.Client, prices *pricing.Table, log *slog.Logger) *modelCache {
	return &modelCache{reg: reg, res: res, vault: vault, client: client, prices: prices, log: log}
}

type modelObject struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	OwnedBy string `json:"owned_by"`
}

// available reports whether p can serve requests: it has a key (stored or
// env), or needs none and is enabled or the default.
func (c *modelCache) available(ctx context.Context, p *provider.Provider) bool {
	_, err := c.vault.Key(ctx, p.Name)
	if err == nil {
		return true
	}
	if errors.Is(err, keyvault.ErrNoKey) && p.KeyOptional {
		return p.Enabled || p.Name == c.reg.Default()
	}
	return false
}

// build lists the models; with a non-empty allowed list, only those it
// permits (matched as auth.AllowsModel matches requests).
func (c *modelCache) build(ctx context.Context, allowed []string) []byte {
	fetched := map[string][]string{}
	if f := c.fetched.Load(); f != nil {
		fetched = *f
	}
	seen := map[string]bool{}
	data := []modelObject{}
	for _, name := range c.reg.Names() {
		p, _ := c.reg.Lookup(name)
		if !c.available(ctx, p) {
			continue
		}
		var ids []string
		ids = append(ids, p.Models...)
		ids = append(ids, fetched[name]...)
		if c.prices != nil {
			ids = append(ids, c.prices.Models(name)...)
		}
		for _, id := range ids {
			pub := c.res.PublicName(p, id)
			if seen[pub] {
				continue
			}
			seen[pub] = true
			data = append(data, modelObject{ID: pub, Object: "model", OwnedBy: name})
		}
	}
	if c.routing != nil {
		cfg := c.routing()
		for alias, target := range cfg.ModelMap {
			if !seen[alias] {
				seen[alias] = true
				owner, _, _ := strings.Cut(target, "/")
				data = append(data, modelObject{ID: alias, Object: "model", OwnedBy: owner})
			}
		}
		for _, ch := range cfg.Chains {
			if !seen[ch.Name] {
				seen[ch.Name] = true
				data = append(data, modelObject{ID: ch.Name, Object: "model", OwnedBy: "svc"})
			}
		}
	}
	if len(allowed) > 0 {
		kept := data[:0]
		for _, m := range data {
			if auth.AllowsModel(allowed, m.ID, c.upstreamName(m.ID)) {
				kept = append(kept, m)
			}
		}
		data = kept
	}
	sort.Slice(data, func(i, j int) bool { return data[i].ID < data[j].ID })
	b, _ := json.Marshal(map[string]any{"object": "list", "data": data})
	return b
}

// serveModels answers GET /v1/models: the models the caller's key may use.
func (p *Proxy) serveModels(w http.ResponseWriter, r *http.Request) {
	principal, err := p.d.Auth.Authenticate(r.Context(), auth.FromRequest(r, true))
	if err != nil {
		writeError(w, err)
		return
	}
	var allowed []string
	if p.d.Access != nil {
		if allowed, err = p.d.Access.Models(r.Context(), principal); err != nil {
			writeError(w, err)
			return
		}
	}
	b := p.models.build(r.Context(), allowed)
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(b)
}

// run refreshes the fetched lists now and every interval until ctx ends.
func (c *modelCache) run(ctx context.Context, every time.Duration) {
	for {
		c.refresh(ctx)
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
	}
}

func (c *modelCache) refresh(ctx context.Context) {
	out := map[string][]string{}
	for _, name := range c.reg.Names() {
		p, _ := c.reg.Lookup(name)
		lister, ok := p.Adapter.(provider.ModelLister)
		if !ok || !c.available(ctx, p) {
			continue
		}
		ids, err := c.fetch(ctx, p, lister)
		if err != nil {
			c.log.Debug("model list refresh failed", "provider", name, "err", err)
			if prev := c.fetched.Load(); prev != nil {
				out[name] = (*prev)[name]
			}
			continue
		}
		out[name] = ids
	}
	c.fetched.Store(&out)
}

func (c *modelCache) fetch(ctx context.Context, p *provider.Provider, l provider.ModelLister) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	key, err := c.vault.Key(ctx, p.Name)
	if err != nil && !errors.Is(err, keyvault.ErrNoKey) {
		return nil, err
	}
	req, err := l.NewModelsRequest(ctx, p.Deployment(""))
	if err != nil {
		return nil, err
	}
	if err := signerFor(p).Sign(req, key); err != nil {
		return nil, err
	}
	resp, err := c.client.Do(req)
	if err != nil {
		return nil, err
	}
	body, err := c.client.ReadBody(resp)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, errors.New(resp.Status)
	}
	return l.DecodeModels(body)
}

// upstreamName is a listed id without its provider prefix, as an
// allow-list entry may name it.
func (c *modelCache) upstreamName(id string) string {
	if name, rest, ok := strings.Cut(id, "/"); ok {
		if _, ok := c.reg.Lookup(name); ok {
			return rest
		}
	}
	return id
}
