package proxy

import (
	"context"
	"net/http"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/provider"
)

// rerankEndpoint is POST /v1/rerank: translated for providers that rerank
// (Cohere), forwarded to OpenAI-compatible servers that serve /rerank (vLLM,
// Jina, …).
var rerankEndpoint = endpoint{kind: pipeline.Rerank, op: "rerank"}

func (p *Proxy) rerankHandler() http.HandlerFunc {
	decode := func(x *pipeline.Exchange) error {
		r, err := llm.DecodeRerankRequest(x.Body)
		if err != nil {
			return err
		}
		x.Model, x.Rerank = r.Model, r
		return nil
	}
	passthrough := p.callPassthrough(rerankEndpoint)
	h := pipeline.Chain(func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		prov, ok := p.d.Registry.Lookup(x.Provider)
		if !ok {
			return nil, apierr.Newf(apierr.Unavailable, "no_provider", "provider %q is not configured", x.Provider)
		}
		ra, ok := prov.Adapter.(provider.RerankAdapter)
		if !ok {
			return passthrough(ctx, x)
		}
		r := *x.Rerank
		r.Model = x.UpstreamModel
		return p.callRerank(ctx, x, prov, ra, &r)
	}, p.record, p.d.Keys.Stage(false), p.decodeWith(decode), p.planStage, p.limitStage, p.routeStage)
	return func(w http.ResponseWriter, r *http.Request) {
		x := newExchange(r, pipeline.Rerank)
		resp, err := h(r.Context(), x)
		p.write(w, x, resp, err, openAIDialect)
	}
}

func (p *Proxy) callRerank(ctx context.Context, x *pipeline.Exchange, prov *provider.Provider, ra provider.RerankAdapter, r *llm.RerankRequest) (*pipeline.Response, error) {
	req, err := ra.NewRerankRequest(ctx, prov.Deployment(x.UpstreamModel), r)
	if err != nil {
		return nil, err
	}
	resp, start, err := p.send(ctx, x, prov, req)
	if err != nil {
		return nil, err
	}
	body, err := p.receive(x, resp, start)
	if err != nil {
		return nil, err
	}
	out, usage, err := ra.DecodeRerank(r, body)
	if err != nil {
		return nil, err
	}
	x.Usage = usage
	x.Cost = p.cost(prov.Name, x.UpstreamModel, "", &usage)
	return &pipeline.Response{Status: http.StatusOK, Body: out, Header: http.Header{"Content-Type": {"application/json"}}}, nil
}
