package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/provider"
)

// endpoint is an OpenAI-compatible route other than chat: how to validate its
// body, and the provider operation that serves it.
type endpoint struct {
	kind pipeline.Endpoint
	op   string // upstream path after the base URL
	// decode validates x.Body and sets x.Model and x.Stream.
	decode func(x *pipeline.Exchange) error
}

var endpoints = []endpoint{
	{pipeline.Embeddings, "embeddings", decodeEmbeddings},
	{pipeline.Completions, "completions", decodeCompletions},
	{pipeline.Images, "images/generations", decodeImages},
	{pipeline.Speech, "audio/speech", decodeSpeech},
	{pipeline.Transcriptions, "audio/transcriptions", decodeTranscription},
}

// passthroughHandler is the chain of one endpoint: the same record, auth and
// route stages as chat, its own decode, and a passthrough call.
func (p *Proxy) passthroughHandler(e endpoint) http.HandlerFunc {
	h := pipeline.Chain(p.callPassthrough(e),
		p.record,
		p.d.Keys.Stage(false),
		p.decodeWith(e.decode),
		p.planStage,
		p.limitStage,
		p.routeStage,
	)
	return func(w http.ResponseWriter, r *http.Request) {
		x := newExchange(r, e.kind)
		resp, err := h(r.Context(), x)
		p.write(w, x, resp, err, openAIDialect)
	}
}

func (p *Proxy) decodeWith(decode func(*pipeline.Exchange) error) pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
			if err := p.readBody(x); err != nil {
				return nil, err
			}
			if err := decode(x); err != nil {
				return nil, err
			}
			return next(ctx, x)
		}
	}
}

// callPassthrough forwards the body to a provider that speaks the endpoint.
func (p *Proxy) callPassthrough(e endpoint) pipeline.Handler {
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		prov, ok := p.d.Registry.Lookup(x.Provider)
		if !ok {
			return nil, apierr.Newf(apierr.Unavailable, "no_provider", "provider %q is not configured", x.Provider)
		}
		if ea, ok := prov.Adapter.(provider.EmbeddingsAdapter); ok && e.kind == pipeline.Embeddings {
			return p.callEmbeddings(ctx, x, prov, ea)
		}
		pt, ok := prov.Adapter.(provider.Passthrough)
		if !ok {
			return nil, apierr.Newf(apierr.InvalidRequest, "unsupported_endpoint", "provider %s does not serve /v1/%s", prov.Name, e.op)
		}
		ct := x.Inbound.Header.Get("Content-Type")
		body := x.Body
		if e.kind == pipeline.Transcriptions {
			var err error
			if body, ct, err = rewriteFormModel(x.Body, ct, x.UpstreamModel); err != nil {
				return nil, err
			}
		} else {
			ct = "application/json"
		}
		target := prov.Deployment(x.UpstreamModel)
		req, err := pt.NewPassthroughRequest(ctx, target, provider.PassthroughCall{
			Op: e.op, ContentType: ct, Body: body, Model: x.Model, WantUsage: x.Stream,
		})
		if err != nil {
			return nil, err
		}
		resp, start, err := p.send(ctx, x, prov, req)
		if err != nil {
			return nil, err
		}
		x.FirstByte = time.Now()
		header := http.Header{"Content-Type": {resp.Header.Get("Content-Type")}}
		switch {
		case x.Stream:
			info := &provider.StreamInfo{HideUsage: !callerWantsUsage(x.Body)}
			s := pipeline.Observe(prov.Adapter.DecodeChatStream(resp.Body, info), nil, func(error) {
				x.Upstream = time.Since(start)
				x.Usage, x.ResponseModel = info.Usage, info.Model
				x.Cost = p.cost(prov.Name, x.UpstreamModel, info.Model, &info.Usage)
			})
			return &pipeline.Response{Status: http.StatusOK, Stream: s, Header: http.Header{"Content-Type": {"text/event-stream"}}}, nil
		case e.kind == pipeline.Speech:
			raw := pipeline.ObserveReader(resp.Body, func(error) { x.Upstream = time.Since(start) })
			return &pipeline.Response{Status: resp.StatusCode, Raw: raw, Header: header}, nil
		}
		out, err := p.receive(x, resp, start)
		if err != nil {
			return nil, err
		}
		if u, model, ok := usageOf(out); ok {
			x.Usage, x.ResponseModel = u, model
			x.Cost = p.cost(prov.Name, x.UpstreamModel, model, &u)
		}
		return &pipeline.Response{Status: resp.StatusCode, Body: out, Header: header}, nil
	}
}

// lenient reads providers' answers (see provider/openai).
var lenient = jsonv2.JoinOptions(jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))

// usageOf reads model and usage from a JSON answer, in either naming:
// prompt/completion tokens (OpenAI) or input/output tokens (images, audio).
func usageOf(body []byte) (llm.Usage, string, bool) {
	var s struct {
		Model string `json:"model"`
		Usage *struct {
			PromptTokens     int64 `json:"prompt_tokens"`
			CompletionTokens int64 `json:"completion_tokens"`
			InputTokens      int64 `json:"input_tokens"`
			OutputTokens     int64 `json:"output_tokens"`
			TotalTokens      int64 `json:"total_tokens"`
		} `json:"usage"`
	}
	if len(body) == 0 || body[0] != '{' || jsonv2.Unmarshal(body, &s, lenient) != nil || s.Usage == nil {
		return llm.Usage{}, s.Model, false
	}
	u := llm.Usage{
		PromptTokens:     max(s.Usage.PromptTokens, s.Usage.InputTokens),
		CompletionTokens: max(s.Usage.CompletionTokens, s.Usage.OutputTokens),
		TotalTokens:      s.Usage.TotalTokens,
	}
	return u, s.Model, true
}

// callerWantsUsage reports whether a streamed body asked for usage itself.
func callerWantsUsage(body []byte) bool {
	var s struct {
		StreamOptions *llm.StreamOptions `json:"stream_options"`
	}
	return jsonbody.Unmarshal(body, &s) == nil && s.StreamOptions != nil && s.StreamOptions.IncludeUsage
}

// requireModel fails when model is empty.
func requireModel(model string) error {
	if strings.TrimSpace(model) == "" {
		return apierr.BadParam("model", "you must provide a model parameter")
	}
	return nil
}

func decodeEmbeddings(x *pipeline.Exchange) error {
	r, err := llm.DecodeEmbeddingsRequest(x.Body)
	if err != nil {
		return err
	}
	x.Model, x.Embeddings = r.Model, r
	return nil
}

func decodeCompletions(x *pipeline.Exchange) error {
	var r struct {
		Model  string          `json:"model"`
		Prompt json.RawMessage `json:"prompt"`
		Stream bool            `json:"stream"`
	}
	if err := jsonbody.Decode(x.Body, &r, false); err != nil {
		return err
	}
	if err := requireModel(r.Model); err != nil {
		return err
	}
	if p := bytes.TrimSpace(r.Prompt); len(p) == 0 || bytes.Equal(p, []byte("null")) {
		return apierr.BadParam("prompt", "prompt is required")
	}
	x.Model, x.Stream = r.Model, r.Stream
	return nil
}

// defaultImageModel is OpenAI's default when a body names no model.
const defaultImageModel = "dall-e-2"

func decodeImages(x *pipeline.Exchange) error {
	var r struct {
		Model  string `json:"model"`
		Prompt string `json:"prompt"`
		N      *int   `json:"n"`
	}
	if err := jsonbody.Decode(x.Body, &r, false); err != nil {
		return err
	}
	if strings.TrimSpace(r.Prompt) == "" {
		return apierr.BadParam("prompt", "prompt is required")
	}
	if r.N != nil && (*r.N < 1 || *r.N > 10) {
		return apierr.BadParam("n", "n must be between 1 and 10")
	}
	x.Model = r.Model
	if x.Model == "" {
		x.Model = defaultImageModel
	}
	return nil
}

func decodeSpeech(x *pipeline.Exchange) error {
	var r struct {
		Model string          `json:"model"`
		Input string          `json:"input"`
		Voice json.RawMessage `json:"voice"`
		Speed *float64        `json:"speed"`
	}
	if err := jsonbody.Decode(x.Body, &r, false); err != nil {
		return err
	}
	if err := requireModel(r.Model); err != nil {
		return err
	}
	switch {
	case r.Input == "":
		return apierr.BadParam("input", "input is required")
	case len(r.Input) > 4096*4:
		return apierr.BadParam("input", "input is too long")
	case len(bytes.TrimSpace(r.Voice)) == 0 || bytes.Equal(bytes.TrimSpace(r.Voice), []byte("null")):
		return apierr.BadParam("voice", "voice is required")
	case r.Speed != nil && (*r.Speed < 0.25 || *r.Speed > 4):
		return apierr.BadParam("speed", "speed must be between 0.25 and 4")
	}
	x.Model = r.Model
	return nil
}
