package proxy

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/keyvault"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/pricing"
	"github.com/svc-gateway/svc/internal/provider"
)

// maxErrorBody bounds an upstream error body svc reads.
const maxErrorBody = 1 << 20

// caller is how a route calls a provider: it builds the upstream request
// for the exchange (an error when the provider cannot serve the route) and
// the reader of the provider's successful answer.
type caller interface {
	request(ctx context.Context, x *pipeline.Exchange, prov *provider.Provider) (*http.Request, reader, error)
}

// reader turns a provider's successful answer into the caller's. For a
// body (read with body()) it sets x.Usage and x.ResponseModel; for a
// stream it returns the StreamInfo the stream fills as it passes.
type reader func(x *pipeline.Exchange, resp *http.Response, body func() ([]byte, error)) (answer, error)

// answer is what a reader made of a provider's answer.
type answer struct {
	resp *pipeline.Response
	// info, for a stream, holds usage and model once it has ended.
	info *provider.StreamInfo
}

// call is the innermost stage of every route, written once: one call to
// the provider the route stage chose. It builds the request with the
// route's caller, signs and sends it (send), reads the answer with the
// caller's reader, and prices the usage — for a stream when it ends. The
// exact key it sent (and its encodings) is scrubbed from every error it
// returns and from every error a stream ends with, whatever the provider
// echoed, before anything relays, logs or records it.
func (p *Proxy) call(r *routeSpec) pipeline.Handler {
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		prov, ok := p.d.Registry.Lookup(x.Provider)
		if !ok {
			return nil, apierr.Newf(apierr.Unavailable, "no_provider", "provider %q is not configured", x.Provider)
		}
		key, err := p.providerKey(ctx, prov)
		if err != nil {
			return nil, err
		}
		resp, err := p.callWith(ctx, r, x, prov, key)
		if err != nil {
			return nil, apierr.Scrub(err, key)
		}
		return resp, nil
	}
}

// callWith makes the call of call with the provider key in hand.
func (p *Proxy) callWith(ctx context.Context, r *routeSpec, x *pipeline.Exchange, prov *provider.Provider, key string) (*pipeline.Response, error) {
	req, read, err := r.call.request(ctx, x, prov)
	if err != nil {
		return nil, err
	}
	resp, start, err := p.send(ctx, x, prov, req, key)
	if err != nil {
		return nil, err
	}
	x.FirstByte = time.Now()
	a, err := read(x, resp, func() ([]byte, error) { return p.receive(x, resp, start) })
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	out := a.resp
	switch {
	case out.Stream != nil:
		out.Stream = p.upstream(x, prov.Name, key, out.Stream, a.info, resp.Body, start)
	case out.Raw != nil:
		h := p.running.add(out.Raw)
		out.Raw = pipeline.ObserveReader(out.Raw, func(error) {
			p.running.remove(h)
			x.Upstream = time.Since(start)
		})
	default:
		x.Cost = p.cost(prov.Name, x.UpstreamModel, x.ResponseModel, &x.Usage)
	}
	return out, nil
}

// providerKey is the server-side key for prov: stored, else env.
func (p *Proxy) providerKey(ctx context.Context, prov *provider.Provider) (string, error) {
	key, err := p.d.Vault.Key(ctx, prov.Name)
	switch {
	case err == nil:
		return key, nil
	case errors.Is(err, keyvault.ErrNoKey) && prov.KeyOptional:
		return "", nil
	case errors.Is(err, keyvault.ErrNoKey):
		return "", apierr.Newf(apierr.Unavailable, "provider_not_configured",
			"provider %s has no API key: set %s_API_KEY or store one with POST /api/enterprise/keys", prov.Name, envName(prov.Name))
	}
	return "", apierr.Wrap(apierr.Unavailable, "key_store_unavailable", "the provider key store is unavailable", err)
}

// cost prices usage with the requested model, else the model the provider
// reported.
func (p *Proxy) cost(prov, model, reported string, u *llm.Usage) float64 {
	price, ok := p.d.Prices.Lookup(prov, model)
	if !ok && reported != "" {
		price, ok = p.d.Prices.Lookup(prov, reported)
	}
	if !ok {
		return 0
	}
	return price.Cost(pricing.Usage{
		PromptTokens:       u.PromptTokens,
		CompletionTokens:   u.CompletionTokens,
		CachedPromptTokens: u.Cached(),
		CacheWriteTokens:   u.CacheWrite(),
		ReasoningTokens:    u.Reasoning(),
	})
}

func envName(provider string) string {
	b := []byte(provider)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 32
		case c == '-':
			b[i] = '_'
		}
	}
	return string(b)
}

// signError: credentials that cannot be applied (a token endpoint down, a
// malformed service account) are the provider side's failure, not svc's.
func signError(provider string, err error) error {
	return apierr.Wrap(apierr.UpstreamError, "upstream_credentials", "could not obtain credentials for provider "+provider, err)
}
