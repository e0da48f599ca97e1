package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/tracing"
)

// Tracing (Deps.Tracer): a request is one span of kind server (internal
// for svc's own calls), its parent the caller's traceparent, named
// "{operation} {model}"; inside it one span per stage, nested as the
// stages are (each stage's span holds the rest of the chain); and inside
// the route stage one span of kind client per attempt (the call stage),
// whose context goes to the provider as traceparent. A span of a streamed
// answer ends when the stream does. Attributes come from the exchange when
// it ends; prompt and completion text only with Deps.TraceContent. Without
// a tracer the chain is built as it is, with nothing added.

// build is pipeline.Build for route r with its spans when the proxy traces.
// root is the kind of the request's span: server for a client's request
// (its traceparent read), internal for svc's own calls (the parent is the
// span in the context).
func (p *Proxy) build(r *routeSpec, inner pipeline.Handler, stages []pipeline.Stage, root trace.SpanKind) pipeline.Handler {
	t := p.d.Tracer
	if t == nil {
		return pipeline.Build(inner, p.d.Trace, stages...)
	}
	op := operation(r)
	if r.local == nil {
		inner = p.callSpan(op, inner)
	}
	traced := make([]pipeline.Stage, len(stages))
	for i, st := range stages {
		traced[i] = pipeline.Stage{Name: st.Name, Wrap: stageSpan(t, st)}
	}
	return p.requestSpan(r, op, root, pipeline.Build(inner, p.d.Trace, traced...))
}

// operation is route r's gen_ai.operation.name: the convention's where it
// has one, else the route's name.
func operation(r *routeSpec) string {
	switch r.endpoint {
	case pipeline.Chat, pipeline.NativeMessages, pipeline.Responses:
		if r.call != nil && r.name != "native-count-tokens" && r.name != "native-models" {
			return tracing.OpChat
		}
	case pipeline.Embeddings:
		return tracing.OpEmbeddings
	case pipeline.Completions:
		return tracing.OpTextCompletion
	}
	return r.name
}

// inject writes the call's span context on the upstream request.
func (p *Proxy) inject(ctx context.Context, req *http.Request) {
	if p.d.Tracer != nil {
		tracing.Inject(ctx, req.Header)
	}
}

// stageSpan wraps st so that its work, and the rest of the chain it
// calls, is one span.
func stageSpan(t trace.Tracer, st pipeline.Stage) pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		h := st.Wrap(next)
		return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
			ctx, span := tracing.StartStage(ctx, t, st.Name)
			resp, err := h(ctx, x)
			if err != nil {
				tracing.Fail(span, err, apierr.From(err).Status() >= 500)
			}
			span.End()
			return resp, err
		}
	}
}

// requestSpan wraps h, the route's chain, in the request's span.
func (p *Proxy) requestSpan(r *routeSpec, op string, kind trace.SpanKind, h pipeline.Handler) pipeline.Handler {
	t, content := p.d.Tracer, p.d.TraceContent
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		attrs := []attribute.KeyValue{tracing.GenAIOperationName.String(op), tracing.SVCRequestID.String(x.ID)}
		if kind == trace.SpanKindServer {
			ctx = tracing.Extract(ctx, x.Inbound.Header)
			attrs = append(attrs, tracing.HTTPRequestMethod.String(x.Inbound.Method), tracing.HTTPRoute.String(routePattern(r, x.Inbound)))
		}
		ctx, span := t.Start(ctx, op, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
		resp, err := h(ctx, x)
		if err != nil {
			endRequest(span, op, x, err, content, "")
			return nil, err
		}
		switch {
		case resp.Stream != nil:
			var out *textTail
			var onEvent pipeline.OnEvent
			if content {
				out = &textTail{chat: x.Endpoint == pipeline.Chat}
				onEvent = out.add
			}
			resp.Stream = pipeline.Observe(resp.Stream, onEvent, func(error) { endRequest(span, op, x, x.Err, content, out.String()) })
		case resp.Raw != nil:
			resp.Raw = pipeline.ObserveReader(resp.Raw, func(error) { endRequest(span, op, x, x.Err, content, "") })
		default:
			var out string
			if content {
				out = outputText(x, resp)
			}
			endRequest(span, op, x, nil, content, out)
		}
		return resp, nil
	}
}

// routePattern is the ServeMux pattern that matched req, without its
// method (http.route); r's first path when the request was not routed by
// a mux (svc's own calls).
func routePattern(r *routeSpec, req *http.Request) string {
	pat := req.Pattern
	if pat == "" && len(r.patterns) > 0 {
		pat = r.patterns[0]
	}
	if _, path, ok := strings.Cut(pat, " "); ok {
		return path
	}
	return pat
}

// endRequest sets the exchange's outcome on the request's span and ends
// it. err is the error answered (x.Err for a stream that failed).
func endRequest(span trace.Span, op string, x *pipeline.Exchange, err error, content bool, output string) {
	span.SetName(tracing.SpanName(op, x.Model))
	attrs := make([]attribute.KeyValue, 0, 16)
	attrs = append(attrs, tracing.HTTPResponseStatusCode.Int(x.Status), tracing.SVCStream.Bool(x.Stream))
	if x.Model != "" {
		attrs = append(attrs, tracing.GenAIRequestModel.String(x.Model))
	}
	if x.Provider != "" {
		attrs = append(attrs, tracing.Provider(x.Provider)...)
		attrs = append(attrs, tracing.SVCRoutingStrategy.String(x.RoutingStrategy))
	}
	attrs = outcome(attrs, x)
	if x.Cache != nil {
		attrs = append(attrs, tracing.SVCCacheTier.String(x.Cache.Tier))
	}
	span.SetAttributes(attrs...)
	if err == nil {
		err = x.Err
	}
	if err != nil {
		tracing.Fail(span, err, apierr.From(err).Status() >= 500)
	}
	if content {
		tracing.Content(span, inputText(x), output)
	}
	span.End()
}

// outcome appends what the answer said: the response model, usage, cost.
func outcome(attrs []attribute.KeyValue, x *pipeline.Exchange) []attribute.KeyValue {
	if x.ResponseModel != "" {
		attrs = append(attrs, tracing.GenAIResponseModel.String(x.ResponseModel))
	}
	if x.Usage.PromptTokens > 0 || x.Usage.CompletionTokens > 0 {
		attrs = append(attrs, tracing.GenAIUsageInputTokens.Int64(x.Usage.PromptTokens),
			tracing.GenAIUsageOutputTokens.Int64(x.Usage.CompletionTokens))
		if x.UsageEstimated {
			attrs = append(attrs, tracing.SVCUsageEstimated.Bool(true))
		}
	}
	return append(attrs, tracing.SVCCostUSD.Float64(x.Cost))
}

// callSpan wraps the call stage in a span of kind client: one call to the
// provider the route stage chose, its context the traceparent the
// provider receives (inject). It ends with the answer — for a stream, at
// its end — carrying the provider's status, model, usage and cost.
func (p *Proxy) callSpan(op string, call pipeline.Handler) pipeline.Handler {
	t := p.d.Tracer
	return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
		attrs := append(tracing.Provider(x.Provider),
			tracing.GenAIOperationName.String(op), tracing.SVCAttempt.Int(x.Attempt), tracing.SVCRequestID.String(x.ID))
		if x.UpstreamModel != "" {
			attrs = append(attrs, tracing.GenAIRequestModel.String(x.UpstreamModel))
		}
		ctx, span := tracing.StartClient(ctx, t, tracing.SpanName(op, x.UpstreamModel), attrs...)
		resp, err := call(ctx, x)
		if err != nil {
			endCall(span, x, err)
			return nil, err
		}
		switch {
		case resp.Stream != nil:
			resp.Stream = pipeline.Observe(resp.Stream, nil, func(err error) { endCall(span, x, err) })
		case resp.Raw != nil:
			resp.Raw = pipeline.ObserveReader(resp.Raw, func(err error) { endCall(span, x, err) })
		default:
			endCall(span, x, nil)
		}
		return resp, nil
	}
}

// endCall sets the call's outcome on its span and ends it.
func endCall(span trace.Span, x *pipeline.Exchange, err error) {
	attrs := make([]attribute.KeyValue, 0, 8)
	if x.UpstreamStatus != 0 {
		attrs = append(attrs, tracing.HTTPResponseStatusCode.Int(x.UpstreamStatus))
	}
	span.SetAttributes(outcome(attrs, x)...)
	if errors.Is(err, pipeline.ErrAbandoned) {
		err = apierr.Wrap(apierr.ClientClosed, "client_closed", "the client closed the stream", err)
	}
	if err != nil {
		// A provider's 4xx fails the call as much as its 5xx; the caller
		// going away does not.
		tracing.Fail(span, err, apierr.KindOf(err) != apierr.ClientClosed)
	}
	span.End()
}

// inputText is the prompt as the span event carries it: a chat request's
// messages (a Responses request's translated conversation), else the
// request body; nothing for a multipart form (audio).
func inputText(x *pipeline.Exchange) string {
	if x.Chat != nil {
		if b, err := json.Marshal(x.Chat.Messages); err == nil {
			return string(b)
		}
	}
	if x.Inbound == nil || strings.HasPrefix(x.Inbound.Header.Get("Content-Type"), "multipart/") {
		return ""
	}
	return string(x.Body)
}

// outputText is a body answer as the span event carries it: a chat
// completion's messages, else the body when it is JSON or text.
func outputText(x *pipeline.Exchange, resp *pipeline.Response) string {
	if x.Endpoint == pipeline.Chat {
		var a struct {
			Choices []struct {
				Message json.RawMessage `json:"message"`
			} `json:"choices"`
		}
		if json.Unmarshal(resp.Body, &a) == nil {
			msgs := make([]json.RawMessage, len(a.Choices))
			for i, c := range a.Choices {
				msgs[i] = c.Message
			}
			if b, err := json.Marshal(msgs); err == nil {
				return string(b)
			}
		}
	}
	ct := resp.Header.Get("Content-Type")
	if strings.HasPrefix(ct, "application/json") || strings.HasPrefix(ct, "text/") {
		return string(resp.Body)
	}
	return ""
}

// textTail collects a stream's text for the content event, up to just
// past tracing.ContentLimit (so the cut shows): a chat stream's delta
// contents, else each event's data on its own line. It keeps nothing past
// the limit, so memory per stream stays bounded.
type textTail struct {
	chat bool
	b    strings.Builder
}

func (t *textTail) add(ev sse.Event) {
	if t.b.Len() > tracing.ContentLimit {
		return
	}
	if !t.chat {
		t.write(string(ev.Data))
		t.write("\n")
		return
	}
	var c struct {
		Choices []struct {
			Delta struct {
				Content *string `json:"content"`
			} `json:"delta"`
		} `json:"choices"`
	}
	if json.Unmarshal(ev.Data, &c) != nil {
		return
	}
	for _, ch := range c.Choices {
		if ch.Delta.Content != nil {
			t.write(*ch.Delta.Content)
		}
	}
}

// write appends s up to one byte past the limit.
func (t *textTail) write(s string) {
	if room := tracing.ContentLimit + 1 - t.b.Len(); len(s) > room {
		s = s[:max(room, 0)]
	}
	t.b.WriteString(s)
}

// String is the text collected; "" for a nil tail (content off).
func (t *textTail) String() string {
	if t == nil {
		return ""
	}
	return t.b.String()
}
