package proxy

import (
	"context"
	"net/http"

	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/provider"
)

// callEmbeddings translates /v1/embeddings for a provider whose format
// differs from OpenAI's (Gemini, Vertex AI, Cohere).
func (p *Proxy) callEmbeddings(ctx context.Context, x *pipeline.Exchange, prov *provider.Provider, ea provider.EmbeddingsAdapter) (*pipeline.Response, error) {
	r := *x.Embeddings
	r.Model = x.UpstreamModel
	req, err := ea.NewEmbeddingsRequest(ctx, prov.Deployment(x.UpstreamModel), &r)
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
	out, usage, err := ea.DecodeEmbeddings(&r, body)
	if err != nil {
		return nil, err
	}
	x.Usage = usage
	x.Cost = p.cost(prov.Name, x.UpstreamModel, "", &usage)
	return &pipeline.Response{Status: http.StatusOK, Body: out, Header: http.Header{"Content-Type": {"application/json"}}}, nil
}
