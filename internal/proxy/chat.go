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

// callChat is the innermost stage: one call to the resolved provider.
func (p *Proxy) callChat(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
	prov, ok := p.d.Registry.Lookup(x.Provider)
	if !ok {
		return nil, apierr.Newf(apierr.Unavailable, "no_provider", "provider %q is not configured", x.Provider)
	}
	target := prov.Deployment(x.UpstreamModel)
	req, err := prov.Adapter.NewChatRequest(ctx, target, provider.ChatCall{Req: x.Chat, Raw: x.Body})
	if err != nil {
		return nil, err
	}
	resp, start, err := p.send(ctx, x, prov, req)
	if err != nil {
		return nil, err
	}
	if x.Stream {
		x.FirstByte = time.Now()
		info := &provider.StreamInfo{HideUsage: x.Chat.StreamOptions == nil || !x.Chat.StreamOptions.IncludeUsage}
		if _, ok := prov.Adapter.(provider.ModelNamer); ok {
			info.Model = x.UpstreamModel
		}
		s := prov.Adapter.DecodeChatStream(resp.Body, info)
		s = pipeline.Observe(s, nil, func(error) {
			x.Upstream = time.Since(start)
			x.Usage, x.ResponseModel = info.Usage, info.Model
			x.Cost = p.cost(prov.Name, x.UpstreamModel, info.Model, &info.Usage)
		})
		return &pipeline.Response{Status: http.StatusOK, Stream: s, Header: http.Header{"Content-Type": {"text/event-stream"}}}, nil
	}
	raw, err := p.receive(x, resp, start)
	if err != nil {
		return nil, err
	}
	decode := prov.Adapter.DecodeChat
	if n, ok := prov.Adapter.(provider.ModelNamer); ok {
		decode = func(b []byte) ([]byte, llm.Usage, string, error) { return n.DecodeChatFor(x.UpstreamModel, b) }
	}
	out, usage, model, err := decode(raw)
	if err != nil {
		return nil, err
	}
	x.Usage, x.ResponseModel = usage, model
	x.Cost = p.cost(prov.Name, x.UpstreamModel, model, &usage)
	return &pipeline.Response{Status: http.StatusOK, Body: out, Header: http.Header{"Content-Type": {"application/json"}}}, nil
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
