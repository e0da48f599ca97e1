package tracing

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svc-gateway/svc/internal/apierr"
)

// clearEnv unsets every variable Setup and the exporter read.
func clearEnv(t *testing.T) {
	for _, name := range []string{EnvEndpoint, EnvTracesEndpoint, EnvProtocol, EnvTracesProtocol, EnvSDKDisabled, EnvTracesExporter,
		"OTEL_SERVICE_NAME", "OTEL_RESOURCE_ATTRIBUTES", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"} {
		t.Setenv(name, "")
	}
}

// TestSetupOff: without an endpoint, or with tracing disabled, Setup gives
// a no-op provider and Tracer gives nil.
func TestSetupOff(t *testing.T) {
	for _, tc := range []struct {
		name string
		env  map[string]string
	}{
		{"no endpoint", nil},
		{"sdk disabled", map[string]string{EnvEndpoint: "http://127.0.0.1:1", EnvSDKDisabled: "true"}},
		{"exporter none", map[string]string{EnvEndpoint: "http://127.0.0.1:1", EnvTracesExporter: "none"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clearEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			tp, shutdown, err := Setup(context.Background(), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if tr := Tracer(tp); tr != nil {
				t.Errorf("Tracer = %T, want nil when tracing is off", tr)
			}
			if err := shutdown(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestSetupRefusesOtherProtocols: svc speaks OTLP over HTTP with protobuf
// only; grpc or http/json is refused rather than sent wrong.
func TestSetupRefusesOtherProtocols(t *testing.T) {
	for _, name := range []string{EnvProtocol, EnvTracesProtocol} {
		clearEnv(t)
		t.Setenv(EnvEndpoint, "http://127.0.0.1:1")
		t.Setenv(name, "grpc")
		if _, _, err := Setup(context.Background(), Options{}); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=grpc: got %v, want a refusal naming it", name, err)
		}
	}
	clearEnv(t)
	t.Setenv(EnvEndpoint, "http://127.0.0.1:1")
	t.Setenv(EnvProtocol, "http/protobuf")
	_, shutdown, err := Setup(context.Background(), Options{})
	if err != nil {
		t.Fatalf("http/protobuf: %v", err)
	}
	_ = shutdown(context.Background())
}

// otlpServer keeps the OTLP/HTTP requests it receives.
type otlpServer struct {
	srv  *httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
	body [][]byte
}

func newOTLPServer(t *testing.T) *otlpServer {
	s := &otlpServer{}
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.reqs, s.body = append(s.reqs, r), append(s.body, b)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(s.srv.Close)
	return s
}

// TestSetupExports: the traces endpoint is used as given, the headers and
// the service name come from the standard variables, and the export is
// OTLP protobuf.
func TestSetupExports(t *testing.T) {
	col := newOTLPServer(t)
	clearEnv(t)
	t.Setenv(EnvTracesEndpoint, col.srv.URL+"/custom/traces")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "authorization=Bearer%20t0k")
	t.Setenv("OTEL_SERVICE_NAME", "gateway-eu")
	tp, shutdown, err := Setup(context.Background(), Options{ServiceVersion: "v1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	tr := Tracer(tp)
	if tr == nil {
		t.Fatal("Tracer is nil with an endpoint set")
	}
	_, span := StartServer(context.Background(), tr, http.Header{}, "chat gpt-4o", GenAIOperationName.String(OpChat))
	span.End()
	if err := shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	if len(col.reqs) != 1 {
		t.Fatalf("%d export requests, want 1", len(col.reqs))
	}
	r := col.reqs[0]
	if r.URL.Path != "/custom/traces" || r.Header.Get("Authorization") != "Bearer t0k" || r.Header.Get("Content-Type") != "application/x-protobuf" {
		t.Errorf("export: %s %s, authorization %q, content type %q", r.Method, r.URL.Path, r.Header.Get("Authorization"), r.Header.Get("Content-Type"))
	}
	var ex coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(col.body[0], &ex); err != nil {
		t.Fatal(err)
	}
	res := map[string]string{}
	for _, kv := range ex.ResourceSpans[0].GetResource().GetAttributes() {
		res[kv.Key] = kv.GetValue().GetStringValue()
	}
	if res["service.name"] != "gateway-eu" || res["service.version"] != "v1.2.3" {
		t.Errorf("resource %v, want service.name gateway-eu (OTEL_SERVICE_NAME) and version v1.2.3", res)
	}
	if got := ex.ResourceSpans[0].ScopeSpans[0].Spans[0].Name; got != "chat gpt-4o" {
		t.Errorf("exported span %q, want chat gpt-4o", got)
	}
}

// TestPropagation: Extract reads a caller's traceparent and tracestate,
// Inject writes the current span's; nothing without a span.
func TestPropagation(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("test")
	in := http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}, "Tracestate": {"a=1"}}
	ctx, server := StartServer(context.Background(), tr, in, "chat")
	ctx, client := StartClient(ctx, tr, "chat m")
	out := http.Header{}
	Inject(ctx, out)
	want := "00-4bf92f3577b34da6a3ce929d0e0e4736-" + client.SpanContext().SpanID().String() + "-01"
	if got := out.Get("traceparent"); got != want || out.Get("tracestate") != "a=1" {
		t.Errorf("injected %q, %q; want %q, a=1", got, out.Get("tracestate"), want)
	}
	client.End()
	server.End()
	empty := http.Header{}
	Inject(context.Background(), empty)
	if len(empty) != 0 {
		t.Errorf("Inject without a span wrote %v", empty)
	}
	// A malformed traceparent starts a new trace.
	_, fresh := StartServer(context.Background(), tr, http.Header{"Traceparent": {"00-zz-yy-01"}}, "chat")
	if fresh.SpanContext().TraceID().String() == "4bf92f3577b34da6a3ce929d0e0e4736" || !fresh.SpanContext().IsValid() {
		t.Errorf("span from a malformed traceparent: %v", fresh.SpanContext())
	}
	fresh.End()
}

// TestFail: error.type is the error's OpenAI-style type, the status is
// Error only when failed, and the cause never shows.
func TestFail(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("test")
	cause := errors.New("provider said: key sk-secret is invalid")
	for _, failed := range []bool{false, true} {
		_, span := tr.Start(context.Background(), "x")
		Fail(span, apierr.Wrap(apierr.UpstreamError, "upstream_error", "the provider failed", cause), failed)
		span.End()
	}
	got := rec.Ended()
	for i, sp := range got {
		a := map[attribute.Key]string{}
		for _, kv := range sp.Attributes() {
			a[kv.Key] = kv.Value.String()
		}
		if a[ErrorType] != "upstream_error" || a[SVCErrorCode] != "upstream_error" {
			t.Errorf("span %d attributes %v", i, a)
		}
		wantCode := codes.Unset
		if i == 1 {
			wantCode = codes.Error
		}
		if sp.Status().Code != wantCode || strings.Contains(sp.Status().Description, "sk-secret") {
			t.Errorf("span %d status %v, want %v without the cause", i, sp.Status(), wantCode)
		}
	}
}

func TestTruncate(t *testing.T) {
	for _, tc := range []struct {
		in      string
		n       int
		want    string
		wantCut bool
	}{
		{"hello", 10, "hello", false},
		{"hello", 5, "hello", false},
		{"hello", 3, "hel", true},
		{"héllo", 2, "h", true}, // é is two bytes: never half of it
		{"日本", 4, "日", true},
	} {
		got, cut := Truncate(tc.in, tc.n)
		if got != tc.want || cut != tc.wantCut || !utf8.ValidString(got) {
			t.Errorf("Truncate(%q, %d) = %q, %v; want %q, %v", tc.in, tc.n, got, cut, tc.want, tc.wantCut)
		}
	}
}

func TestProviderName(t *testing.T) {
	for svc, want := range map[string]string{"openai": "openai", "bedrock": "aws.bedrock", "vertex": "gcp.vertex_ai", "azure": "azure.ai.openai", "mylab": "mylab"} {
		if got := ProviderName(svc); got != want {
			t.Errorf("ProviderName(%q) = %q, want %q", svc, got, want)
		}
	}
}

func TestSpanName(t *testing.T) {
	if got := SpanName("chat", "gpt-4o"); got != "chat gpt-4o" {
		t.Errorf("got %q", got)
	}
	if got := SpanName("chat", ""); got != "chat" {
		t.Errorf("got %q", got)
	}
}

// TestContent: the event carries both texts, cut and marked when long.
func TestContent(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tr := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)).Tracer("test")
	_, span := tr.Start(context.Background(), "x", trace.WithSpanKind(trace.SpanKindServer))
	Content(span, "short prompt", strings.Repeat("a", ContentLimit+10))
	span.End()
	ev := rec.Ended()[0].Events()
	if len(ev) != 1 || ev[0].Name != EventContent {
		t.Fatalf("events %v", ev)
	}
	a := map[attribute.Key]attribute.Value{}
	for _, kv := range ev[0].Attributes {
		a[kv.Key] = kv.Value
	}
	if a[GenAIInputMessages].AsString() != "short prompt" || len(a[GenAIOutputMessages].AsString()) != ContentLimit || !a[SVCContentTruncated].AsBool() {
		t.Errorf("content event: input %q, output of %d bytes, truncated %v", a[GenAIInputMessages].AsString(), len(a[GenAIOutputMessages].AsString()), a[SVCContentTruncated].AsBool())
	}
}
