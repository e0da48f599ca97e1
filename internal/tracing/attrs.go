package tracing

import (
	"context"
	"net/http"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Attribute names of svc's spans: the OpenTelemetry GenAI and HTTP
// semantic conventions' (kept here as constants, as DESIGN.md says, not
// taken from a semconv package whose names move between releases) and
// svc's own under svc.*.
const (
	// GenAI semantic conventions.
	GenAIOperationName     = attribute.Key("gen_ai.operation.name")
	GenAIProviderName      = attribute.Key("gen_ai.provider.name")
	GenAISystem            = attribute.Key("gen_ai.system") // the older name of gen_ai.provider.name, for backends that read it
	GenAIRequestModel      = attribute.Key("gen_ai.request.model")
	GenAIResponseModel     = attribute.Key("gen_ai.response.model")
	GenAIUsageInputTokens  = attribute.Key("gen_ai.usage.input_tokens")
	GenAIUsageOutputTokens = attribute.Key("gen_ai.usage.output_tokens")
	GenAIInputMessages     = attribute.Key("gen_ai.input.messages")
	GenAIOutputMessages    = attribute.Key("gen_ai.output.messages")
	ErrorType              = attribute.Key("error.type")
	HTTPRequestMethod      = attribute.Key("http.request.method")
	HTTPRoute              = attribute.Key("http.route")
	HTTPResponseStatusCode = attribute.Key("http.response.status_code")
	SVCRequestID           = attribute.Key("svc.request_id")
	SVCCostUSD             = attribute.Key("svc.cost_usd")
	SVCCacheTier           = attribute.Key("svc.cache.tier")
	SVCProvider            = attribute.Key("svc.provider") // svc's name of the provider (gen_ai.provider.name is the convention's)
	SVCStage               = attribute.Key("svc.stage")
	SVCStream              = attribute.Key("svc.stream")
	SVCAttempt             = attribute.Key("svc.attempt")
	SVCRoutingStrategy     = attribute.Key("svc.routing.strategy")
	SVCUsageEstimated      = attribute.Key("svc.usage.estimated")
	SVCContentTruncated    = attribute.Key("svc.content.truncated")
	SVCUpstreamStatusCode  = attribute.Key("svc.upstream.status_code")
	SVCErrorCode           = attribute.Key("svc.error.code")
	// EventContent is the span event carrying gen_ai.input.messages and
	// gen_ai.output.messages (SVC_TRACE_CONTENT).
	EventContent = "gen_ai.client.inference.operation.details"
)

// ContentLimit bounds each of the prompt and the completion text a span
// event carries (bytes); longer text is cut at a character boundary and
// the event marked svc.content.truncated.
const ContentLimit = 16 << 10

// Operation names (gen_ai.operation.name) of the convention; svc's other
// routes use their own names.
const (
	OpChat           = "chat"
	OpEmbeddings     = "embeddings"
	OpTextCompletion = "text_completion"
)

// providerNames are the convention's gen_ai.provider.name values of svc's
// built-in providers whose svc name differs or that the convention names;
// any other provider is named as svc names it.
var providerNames = map[string]string{
	"azure":      "azure.ai.openai",
	"bedrock":    "aws.bedrock",
	"gemini":     "gcp.gemini",
	"vertex":     "gcp.vertex_ai",
	"mistral":    "mistral_ai",
	"xai":        "x_ai",
	"openai":     "openai",
	"anthropic":  "anthropic",
	"cohere":     "cohere",
	"groq":       "groq",
	"deepseek":   "deepseek",
	"perplexity": "perplexity",
}

// ProviderName is gen_ai.provider.name for svc's provider name.
func ProviderName(svcName string) string {
	if n, ok := providerNames[svcName]; ok {
		return n
	}
	return svcName
}

// Provider is the attributes naming a provider: the convention's
// gen_ai.provider.name and gen_ai.system, and svc.provider.
func Provider(svcName string) []attribute.KeyValue {
	n := ProviderName(svcName)
	return []attribute.KeyValue{GenAIProviderName.String(n), GenAISystem.String(n), SVCProvider.String(svcName)}
}

// propagator reads and writes W3C trace context (traceparent, tracestate).
var propagator = propagation.TraceContext{}

// Extract returns ctx with the remote span context of h's traceparent and
// tracestate, when they are valid; else ctx.
func Extract(ctx context.Context, h http.Header) context.Context {
	return propagator.Extract(ctx, propagation.HeaderCarrier(h))
}

// Inject writes ctx's span context to h as traceparent (and tracestate);
// nothing when ctx has none.
func Inject(ctx context.Context, h http.Header) {
	propagator.Inject(ctx, propagation.HeaderCarrier(h))
}

// StartServer starts the span of an inbound request, its parent the
// caller's traceparent in h (a new trace without one).
func StartServer(ctx context.Context, t trace.Tracer, h http.Header, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.Start(Extract(ctx, h), name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}

// StartStage starts the span of one stage of the request path.
func StartStage(ctx context.Context, t trace.Tracer, stage string) (context.Context, trace.Span) {
	return t.Start(ctx, stage, trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(SVCStage.String(stage)))
}

// StartClient starts the span of a call to a provider; its context is the
// one Inject writes on the upstream request.
func StartClient(ctx context.Context, t trace.Tracer, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return t.Start(ctx, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// SpanName is the convention's span name, "{operation} {model}", or the
// operation alone without a model.
func SpanName(op, model string) string {
	if model == "" {
		return op
	}
	return op + " " + model
}

// Fail records err on span: error.type (the error's OpenAI-style type, as
// an answer's body names it) and svc.error.code, and, when failed, the
// span's status Error with the client-safe message (never the cause, which
// may quote a provider's answer).
func Fail(span trace.Span, err error, failed bool) {
	e := apierr.From(err)
	span.SetAttributes(ErrorType.String(e.Kind.Type()))
	if e.Code != "" {
		span.SetAttributes(SVCErrorCode.String(e.Code))
	}
	if failed {
		span.SetStatus(codes.Error, e.Message)
	}
}

// Content adds the prompt and completion text to span as one event, each
// cut to ContentLimit. Only with SVC_TRACE_CONTENT: spans carry no text
// otherwise.
func Content(span trace.Span, input, output string) {
	in, cutIn := Truncate(input, ContentLimit)
	out, cutOut := Truncate(output, ContentLimit)
	attrs := []attribute.KeyValue{GenAIInputMessages.String(in), GenAIOutputMessages.String(out)}
	if cutIn || cutOut {
		attrs = append(attrs, SVCContentTruncated.Bool(true))
	}
	span.AddEvent(EventContent, trace.WithAttributes(attrs...))
}

// Truncate cuts s to at most n bytes at a character boundary; cut reports
// whether it did.
func Truncate(s string, n int) (string, bool) {
	if len(s) <= n {
		return s, false
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i], true
}
