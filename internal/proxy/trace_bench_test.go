package proxy

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace/noop"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/limit"
	"github.com/svc-gateway/svc/internal/providertest"
	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/tracing"
)

// discard drops audit entries (a benchmark would otherwise keep them all).
type discard struct{}

func (discard) Record(*audit.Entry) {}

// BenchmarkTracing is the proxy path of a chat completion (body and
// stream) against the fake upstream with tracing off (no tracer: what
// svc runs without OTEL_EXPORTER_OTLP_ENDPOINT), with the no-op tracer
// (for comparison), and on (the SDK with a batch processor into an
// in-memory exporter; content off and on).
func BenchmarkTracing(b *testing.B) {
	fake := providertest.NewOpenAI(b, providertest.WithAPIKey("key-openai"), providertest.WithRecording(0))
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp))
	b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	for _, mode := range []struct {
		name    string
		content bool
	}{
		{name: "off"},
		{name: "noop"},
		{name: "on"},
		{name: "on+content", content: true},
	} {
		for _, stream := range []bool{false, true} {
			name := mode.name + "/body"
			body := chatBody("gpt-4o-mini")
			if stream {
				name = mode.name + "/stream"
				body = `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hello"}]}`
			}
			b.Run(name, func(b *testing.B) {
				e := newEnvWith(b, &route.Config{}, limit.Limits{}, func(d *Deps) {
					d.Audit, d.Trace = discard{}, nil
					switch mode.name {
					case "noop":
						d.Tracer = noop.NewTracerProvider().Tracer("")
					case "on", "on+content":
						d.Tracer, d.TraceContent = tracing.Tracer(tp), mode.content
					}
				}, providerAt("openai", "openai", fake.URL()))
				h := e.p.Handler()
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+testKey)
					req.Header.Set("traceparent", callerParent)
					w := httptest.NewRecorder()
					h.ServeHTTP(w, req)
					if w.Code != http.StatusOK {
						b.Fatalf("status %d: %s", w.Code, w.Body)
					}
					if i++; i%1024 == 0 {
						exp.Reset()
					}
				}
			})
		}
	}
}
