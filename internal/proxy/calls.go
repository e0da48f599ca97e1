package proxy

import (
	"context"
	"net/http"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/provider"
)

// The callers of the routes: what differs between them is only how the
// upstream request is built and its answer read; sending, pricing and
// everything around it is the one call stage's.

var (
	jsonHeader = http.Header{"Content-Type": {"application/json"}}
	sseHeader  = http.Header{"Content-Type": {"text/event-stream"}}
)

// chatCall is /v1/chat/completions through the provider's chat adapter.
type chatCall struct{}

func (chatCall) request(ctx context.Context, x *pipeline.Exchange, prov *provider.Provider) (*http.Request, reader, error) {
	req, err := prov.Adapter.NewChatRequest(ctx, prov.Deployment(x.UpstreamModel), provider.ChatCall{Req: x.Chat, Raw: x.Body})
	if err != nil {
		return nil, nil, err
	}
	return req, func(x *pipeline.Exchange, resp *http.Response, body func() ([]byte, error)) (answer, error) {
		if x.Stream {
			s, info := chatStream(prov, x.UpstreamModel, resp, x.Chat.StreamOptions == nil || !x.Chat.StreamOptions.IncludeUsage)
			return answer{resp: &pipeline.Response{Status: http.StatusOK, Stream: s, Header: sseHeader.Clone()}, info: info}, nil
		}
		raw, err := body()
		if err != nil {
			return answer{}, err
		}
		out, usage, model, err := decodeChatAnswer(prov, x.UpstreamModel, raw)
		if err != nil {
			return answer{}, err
		}
		x.Usage, x.ResponseModel = usage, model
		return answer{resp: &pipeline.Response{Status: http.StatusOK, Body: out, Header: jsonHeader.Clone()}}, nil
	}, nil
}

// chatStream decodes a provider's chat stream with its adapter; info
// names model for adapters whose provider's events do not (ModelNamer),
// and hideUsage keeps usage-only chunks from the caller.
func chatStream(prov *provider.Provider, model string, resp *http.Response, hideUsage bool) (llm.Stream, *provider.StreamInfo) {
	info := &provider.StreamInfo{HideUsage: hideUsage}
	if _, ok := prov.Adapter.(provider.ModelNamer); ok {
		info.Model = model
	}
	return prov.Adapter.DecodeChatStream(resp.Body, info), info
}

// decodeChatAnswer decodes a provider's chat answer with its adapter, naming
// model where the provider's answer does not (ModelNamer).
func decodeChatAnswer(prov *provider.Provider, model string, raw []byte) ([]byte, llm.Usage, string, error) {
	if n, ok := prov.Adapter.(provider.ModelNamer); ok {
		return n.DecodeChatFor(model, raw)
	}
	return prov.Adapter.DecodeChat(raw)
}

// passthroughCall forwards an OpenAI-compatible endpoint's body to a
// provider that speaks it, with the model patched.
type passthroughCall struct {
	op        string // path after the base URL
	raw       bool   // the answer is a byte stream (audio), relayed as it arrives
	multipart bool   // the body is a multipart form (transcriptions)
}

func (c passthroughCall) request(ctx context.Context, x *pipeline.Exchange, prov *provider.Provider) (*http.Request, reader, error) {
	pt, ok := prov.Adapter.(provider.Passthrough)
	if !ok {
		return nil, nil, apierr.Newf(apierr.InvalidRequest, "unsupported_endpoint", "provider %s does not serve /v1/%s", prov.Name, c.op)
	}
	ct, body := "application/json", x.Body
	if c.multipart {
		var err error
		if body, ct, err = rewriteFormModel(x.Body, x.Inbound.Header.Get("Content-Type"), x.UpstreamModel); err != nil {
			return nil, nil, err
		}
	}
	req, err := pt.NewPassthroughRequest(ctx, prov.Deployment(x.UpstreamModel), provider.PassthroughCall{
		Op: c.op, ContentType: ct, Body: body, Model: x.Model, WantUsage: x.Stream,
	})
	if err != nil {
		return nil, nil, err
	}
	return req, func(x *pipeline.Exchange, resp *http.Response, body func() ([]byte, error)) (answer, error) {
		header := http.Header{"Content-Type": {resp.Header.Get("Content-Type")}}
		switch {
		case x.Stream:
			info := &provider.StreamInfo{HideUsage: !callerWantsUsage(x.Body)}
			s := prov.Adapter.DecodeChatStream(resp.Body, info)
			return answer{resp: &pipeline.Response{Status: http.StatusOK, Stream: s, Header: sseHeader.Clone()}, info: info}, nil
		case c.raw:
			return answer{resp: &pipeline.Response{Status: resp.StatusCode, Raw: resp.Body, Header: header}}, nil
		}
		out, err := body()
		if err != nil {
			return answer{}, err
		}
		if u, model, ok := usageOf(out); ok {
			x.Usage, x.ResponseModel = u, model
		}
		return answer{resp: &pipeline.Response{Status: resp.StatusCode, Body: out, Header: header}}, nil
	}, nil
}

// embeddingsCall translates /v1/embeddings for providers whose format
// differs from OpenAI's (Gemini, Vertex AI, Cohere, Bedrock), and forwards
// it to the others.
type embeddingsCall struct{}

func (embeddingsCall) request(ctx context.Context, x *pipeline.Exchange, prov *provider.Provider) (*http.Request, reader, error) {
	ea, ok := prov.Adapter.(provider.EmbeddingsAdapter)
	if !ok {
		return passthroughCall{op: "embeddings"}.request(ctx, x, prov)
	}
	r := *x.Embeddings
	r.Model = x.UpstreamModel
	return translated(ctx, x, prov, &r, ea.NewEmbeddingsRequest, ea.DecodeEmbeddings)
}

// rerankCall is /v1/rerank: translated for providers that rerank (Cohere),
// forwarded to OpenAI-compatible servers that serve /rerank (vLLM, Jina, …).
type rerankCall struct{}

func (rerankCall) request(ctx context.Context, x *pipeline.Exchange, prov *provider.Provider) (*http.Request, reader, error) {
	ra, ok := prov.Adapter.(provider.RerankAdapter)
	if !ok {
		return passthroughCall{op: "rerank"}.request(ctx, x, prov)
	}
	r := *x.Rerank
	r.Model = x.UpstreamModel
	return translated(ctx, x, prov, &r, ra.NewRerankRequest, ra.DecodeRerank)
}

// translated is the call of an endpoint an adapter translates: build the
// upstream request from r, and decode the answer to r into OpenAI's shape
// with its usage.
func translated[R any](ctx context.Context, x *pipeline.Exchange, prov *provider.Provider, r *R,
	build func(context.Context, provider.Deployment, *R) (*http.Request, error),
	decode func(*R, []byte) ([]byte, llm.Usage, error)) (*http.Request, reader, error) {
	req, err := build(ctx, prov.Deployment(x.UpstreamModel), r)
	if err != nil {
		return nil, nil, err
	}
	return req, func(x *pipeline.Exchange, _ *http.Response, body func() ([]byte, error)) (answer, error) {
		raw, err := body()
		if err != nil {
			return answer{}, err
		}
		out, usage, err := decode(r, raw)
		if err != nil {
			return answer{}, err
		}
		x.Usage = usage
		return answer{resp: &pipeline.Response{Status: http.StatusOK, Body: out, Header: jsonHeader.Clone()}}, nil
	}, nil
}

// nativeCall forwards a provider's own API untranslated (the /native and
// /ide prefixes), with the server-side key injected.
type nativeCall struct {
	method string
	op     string // path after /v1/
}

func (c nativeCall) request(ctx context.Context, x *pipeline.Exchange, prov *provider.Provider) (*http.Request, reader, error) {
	nat, ok := prov.Adapter.(provider.Native)
	if !ok {
		return nil, nil, noNativeAPI(x.Model, prov.Name)
	}
	req, err := nat.NewNativeRequest(ctx, prov.Deployment(x.UpstreamModel), provider.NativeCall{
		Method: c.method, Op: c.op, Query: x.Inbound.URL.RawQuery, Header: x.Inbound.Header, Body: x.Body, Model: x.Model,
	})
	if err != nil {
		return nil, nil, err
	}
	return req, func(x *pipeline.Exchange, resp *http.Response, body func() ([]byte, error)) (answer, error) {
		header := nativeHeaders(resp.Header)
		if x.Stream && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			info := &provider.StreamInfo{}
			s := nat.DecodeNativeStream(resp.Body, info)
			return answer{resp: &pipeline.Response{Status: resp.StatusCode, Stream: s, Header: header}, info: info}, nil
		}
		out, err := body()
		if err != nil {
			return answer{}, err
		}
		if c.op == "messages" {
			if u, model, err := nat.DecodeNative(out); err == nil {
				x.Usage, x.ResponseModel = u, model
			}
		}
		return answer{resp: &pipeline.Response{Status: resp.StatusCode, Body: out, Header: header}}, nil
	}, nil
}

// nativeHeaders are the provider answer's headers relayed to the caller.
func nativeHeaders(h http.Header) http.Header {
	out := http.Header{}
	for k, v := range h {
		lk := strings.ToLower(k)
		if lk == "content-type" || lk == "request-id" || strings.HasPrefix(lk, "anthropic-") {
			out[k] = v
		}
	}
	return out
}

func noNativeAPI(model, prov string) error {
	return apierr.Newf(apierr.InvalidRequest, "no_native_api",
		"model %q is served by provider %s, which has no native messages API; use /v1/chat/completions", model, prov)
}
