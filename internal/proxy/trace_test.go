package proxy

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/svc-gateway/svc/internal/limit"
	"github.com/svc-gateway/svc/internal/providertest"
	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/tracing"
)

// The caller's trace context in the tests.
const (
	callerTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan   = "00f067aa0ba902b7"
	callerParent = "00-" + callerTrace + "-" + callerSpan + "-01"
)

// tracedEnv is a proxy over the fake OpenAI upstream whose spans land in
// the returned recorder; content sets Deps.TraceContent.
func tracedEnv(t *testing.T, content bool, up string) (*env, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	e := newEnvWith(t, &route.Config{}, limit.Limits{RPM: 1000}, func(d *Deps) {
		d.Tracer, d.TraceContent = tracing.Tracer(tp), content
	}, providerAt("openai", "openai", up))
	return e, rec
}

// postTraced posts body to the chat route with the caller's traceparent.
func postTraced(t *testing.T, e *env, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/chat/completions", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", callerParent)
	req.Header.Set("tracestate", "vendor=caller")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// spanTree indexes ended spans.
type spanTree struct{ spans []sdktrace.ReadOnlySpan }

func (s spanTree) one(t *testing.T, name string, kind trace.SpanKind) sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, sp := range s.spans {
		if sp.Name() == name && sp.SpanKind() == kind {
			found = append(found, sp)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d spans %q of kind %v, want 1; spans: %v", len(found), name, kind, s.names())
	}
	return found[0]
}

func (s spanTree) names() []string {
	var out []string
	for _, sp := range s.spans {
		out = append(out, sp.SpanKind().String()+":"+sp.Name())
	}
	return out
}

// attrs is a span's attributes by name.
func attrs(sp sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value { return kvMap(sp.Attributes()) }

func kvMap(kvs []attribute.KeyValue) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range kvs {
		m[kv.Key] = kv.Value
	}
	return m
}

// TestTraceChat: a chat request is a server span whose parent is the
// caller's traceparent, with a span per stage nested as the chain runs and
// a client span for the upstream call, whose context the provider receives
// as traceparent; the GenAI attributes come from the exchange; no prompt
// or completion text is in any span.
func TestTraceChat(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithAPIKey("key-openai"), providertest.WithReply("the secret answer"))
	e, rec := tracedEnv(t, false, fake.URL())
	prompt := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"my private question"}]}`
	resp, body := postTraced(t, e, prompt)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	tree := spanTree{rec.Ended()}

	server := tree.one(t, "chat gpt-4o-mini", trace.SpanKindServer)
	if got := server.SpanContext().TraceID().String(); got != callerTrace {
		t.Errorf("server span's trace %s, want the caller's %s", got, callerTrace)
	}
	if got := server.Parent().SpanID().String(); got != callerSpan || !server.Parent().IsRemote() {
		t.Errorf("server span's parent %s (remote %v), want the caller's span %s", got, server.Parent().IsRemote(), callerSpan)
	}
	a := attrs(server)
	for k, want := range map[attribute.Key]any{
		tracing.GenAIOperationName:     "chat",
		tracing.GenAIProviderName:      "openai",
		tracing.GenAISystem:            "openai",
		tracing.GenAIRequestModel:      "gpt-4o-mini",
		tracing.SVCRequestID:           resp.Header.Get(hRequestID),
		tracing.HTTPRequestMethod:      "POST",
		tracing.HTTPRoute:              "/v1/chat/completions",
		tracing.HTTPResponseStatusCode: int64(200),
	} {
		if got := a[k].AsInterface(); got != want {
			t.Errorf("server span %s = %v, want %v", k, got, want)
		}
	}
	if a[tracing.GenAIResponseModel].AsString() == "" || a[tracing.GenAIUsageInputTokens].AsInt64() <= 0 ||
		a[tracing.GenAIUsageOutputTokens].AsInt64() <= 0 || a[tracing.SVCCostUSD].AsFloat64() <= 0 {
		t.Errorf("server span: response model %q, usage %d/%d, cost %v; want the answer's",
			a[tracing.GenAIResponseModel].AsString(), a[tracing.GenAIUsageInputTokens].AsInt64(),
			a[tracing.GenAIUsageOutputTokens].AsInt64(), a[tracing.SVCCostUSD].AsFloat64())
	}
	if _, ok := a[tracing.ErrorType]; ok || server.Status().Code == codes.Error {
		t.Errorf("server span of a 200: error.type %v, status %v", a[tracing.ErrorType], server.Status())
	}

	// One span per stage, each the child of the one before.
	parent := server.SpanContext().SpanID()
	var route sdktrace.ReadOnlySpan
	for _, name := range []string{"record", "auth", "decode", "plan", "limit", "route"} {
		sp := tree.one(t, name, trace.SpanKindInternal)
		if sp.Parent().SpanID() != parent || sp.SpanContext().TraceID().String() != callerTrace {
			t.Errorf("stage %s: parent %s, want %s", name, sp.Parent().SpanID(), parent)
		}
		parent, route = sp.SpanContext().SpanID(), sp
	}

	client := tree.one(t, "chat gpt-4o-mini", trace.SpanKindClient)
	if client.Parent().SpanID() != route.SpanContext().SpanID() {
		t.Errorf("client span's parent %s, want the route stage's %s", client.Parent().SpanID(), route.SpanContext().SpanID())
	}
	ca := attrs(client)
	if ca[tracing.GenAIProviderName].AsString() != "openai" || ca[tracing.GenAIRequestModel].AsString() != "gpt-4o-mini" ||
		ca[tracing.HTTPResponseStatusCode].AsInt64() != 200 || ca[tracing.GenAIUsageOutputTokens].AsInt64() <= 0 {
		t.Errorf("client span attributes %v", client.Attributes())
	}

	// The provider received the client span's context.
	h := fake.LastRequest().Header
	want := "00-" + callerTrace + "-" + client.SpanContext().SpanID().String() + "-01"
	if got := h.Get("traceparent"); got != want {
		t.Errorf("upstream traceparent %q, want %q", got, want)
	}
	if got := h.Get("tracestate"); got != "vendor=caller" {
		t.Errorf("upstream tracestate %q, want the caller's", got)
	}
	noText(t, tree, "my private question", "the secret answer")
}

// noText fails when any attribute or event of any span holds one of texts.
func noText(t *testing.T, tree spanTree, texts ...string) {
	t.Helper()
	for _, sp := range tree.spans {
		kvs := append([]attribute.KeyValue(nil), sp.Attributes()...)
		for _, ev := range sp.Events() {
			kvs = append(kvs, ev.Attributes...)
		}
		for _, kv := range kvs {
			for _, text := range texts {
				if strings.Contains(kv.Value.String(), text) {
					t.Errorf("span %s: %s holds %q", sp.Name(), kv.Key, text)
				}
			}
		}
	}
}

// contentEvent is the server span's content event's input and output.
func contentEvent(t *testing.T, sp sdktrace.ReadOnlySpan) (in, out string) {
	t.Helper()
	for _, ev := range sp.Events() {
		if ev.Name != tracing.EventContent {
			continue
		}
		for _, kv := range ev.Attributes {
			switch kv.Key {
			case tracing.GenAIInputMessages:
				in = kv.Value.AsString()
			case tracing.GenAIOutputMessages:
				out = kv.Value.AsString()
			}
		}
		return in, out
	}
	t.Fatalf("span %s has no %s event", sp.Name(), tracing.EventContent)
	return "", ""
}

// TestTraceContent: with SVC_TRACE_CONTENT the request span carries the
// prompt and the completion as an event, each bounded.
func TestTraceContent(t *testing.T) {
	long := strings.Repeat("é", tracing.ContentLimit) // twice the limit in bytes
	fake := providertest.NewOpenAI(t, providertest.WithAPIKey("key-openai"), providertest.WithReply("the answer "+long))
	e, rec := tracedEnv(t, true, fake.URL())
	resp, body := postTraced(t, e, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"my question"}]}`)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	server := spanTree{rec.Ended()}.one(t, "chat gpt-4o-mini", trace.SpanKindServer)
	in, out := contentEvent(t, server)
	if !strings.Contains(in, "my question") || !strings.Contains(out, "the answer é") {
		t.Errorf("content event: input %q, output %.40q…; want the prompt and the completion", in, out)
	}
	if len(out) > tracing.ContentLimit || !strings.HasSuffix(out, "é") {
		t.Errorf("output of %d bytes ending %q, want it cut to at most %d at a character boundary", len(out), out[len(out)-3:], tracing.ContentLimit)
	}
	for _, ev := range server.Events() {
		if ev.Name == tracing.EventContent && !kvMap(ev.Attributes)[tracing.SVCContentTruncated].AsBool() {
			t.Error("a cut content event is not marked svc.content.truncated")
		}
	}
}

// heldStream is an OpenAI-style upstream that streams one chunk, then
// waits until release is closed to send the rest with the usage.
type heldStream struct {
	srv     *httptest.Server
	release chan struct{}
	mu      sync.Mutex
	header  http.Header
}

func newHeldStream(t *testing.T) *heldStream {
	h := &heldStream{release: make(chan struct{})}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		h.header = r.Header.Clone()
		h.mu.Unlock()
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := func(s string) {
			_, _ = io.WriteString(w, "data: "+s+"\n\n")
			w.(http.Flusher).Flush()
		}
		chunk(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"role":"assistant","content":"stream"},"finish_reason":null}]}`)
		<-h.release
		chunk(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"ed reply"},"finish_reason":"stop"}]}`)
		chunk(`{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`)
		chunk("[DONE]")
	}))
	t.Cleanup(h.srv.Close)
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
	})
	return h
}

// TestTraceStream: a streamed answer's request and client spans end with
// the stream, not with its headers, and carry its usage.
func TestTraceStream(t *testing.T) {
	up := newHeldStream(t)
	e, rec := tracedEnv(t, true, up.srv.URL+"/v1")
	req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/chat/completions",
		strings.NewReader(`{"model":"gpt-4o-mini","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("traceparent", callerParent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	br := bufio.NewReader(resp.Body)
	if line, err := br.ReadString('\n'); err != nil || !strings.Contains(line, `"stream"`) {
		t.Fatalf("first event %q, %v", line, err)
	}
	// Headers and the first chunk are out; the stream is not over.
	for _, sp := range rec.Ended() {
		if sp.SpanKind() != trace.SpanKindInternal {
			t.Errorf("%v span %q ended while the stream was still flowing", sp.SpanKind(), sp.Name())
		}
	}
	close(up.release)
	rest, _ := io.ReadAll(br)
	if !strings.Contains(string(rest), "[DONE]") {
		t.Fatalf("stream did not end: %q", rest)
	}
	tree := spanTree{rec.Ended()}
	server := tree.one(t, "chat gpt-4o-mini", trace.SpanKindServer)
	client := tree.one(t, "chat gpt-4o-mini", trace.SpanKindClient)
	for _, sp := range []sdktrace.ReadOnlySpan{server, client} {
		a := attrs(sp)
		if a[tracing.GenAIUsageInputTokens].AsInt64() != 7 || a[tracing.GenAIUsageOutputTokens].AsInt64() != 3 {
			t.Errorf("%v span usage %d/%d, want the stream's 7/3", sp.SpanKind(), a[tracing.GenAIUsageInputTokens].AsInt64(), a[tracing.GenAIUsageOutputTokens].AsInt64())
		}
	}
	if _, out := contentEvent(t, server); out != "streamed reply" {
		t.Errorf("streamed completion in the content event %q, want %q", out, "streamed reply")
	}
	up.mu.Lock()
	got := up.header.Get("traceparent")
	up.mu.Unlock()
	if want := "00-" + callerTrace + "-" + client.SpanContext().SpanID().String() + "-01"; got != want {
		t.Errorf("upstream traceparent %q, want %q", got, want)
	}
}

// TestTraceRefused: a request refused before any call is one server span
// (and its stages) with the error's type and status, no client span; a
// caller's 4xx is not the server span's error status.
func TestTraceRefused(t *testing.T) {
	e, rec := tracedEnv(t, false, "http://127.0.0.1:1/v1")
	req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/chat/completions", strings.NewReader(chatBody("gpt-4o-mini")))
	req.Header.Set("Authorization", "Bearer sk-svc-wrong")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("status %d, want 401", resp.StatusCode)
	}
	tree := spanTree{rec.Ended()}
	server := tree.one(t, "chat", trace.SpanKindServer) // no model decoded
	a := attrs(server)
	if a[tracing.ErrorType].AsString() != "authentication_error" || a[tracing.HTTPResponseStatusCode].AsInt64() != 401 {
		t.Errorf("server span: error.type %q, status %d; want authentication_error, 401", a[tracing.ErrorType].AsString(), a[tracing.HTTPResponseStatusCode].AsInt64())
	}
	if server.Status().Code == codes.Error {
		t.Error("a 401 set the server span's status to Error")
	}
	for _, sp := range tree.spans {
		if sp.SpanKind() == trace.SpanKindClient {
			t.Errorf("client span %q for a refused request", sp.Name())
		}
	}
}

// TestTraceFallback: each attempt of a fallback chain is its own client
// span; the failed one is an error.
func TestTraceFallback(t *testing.T) {
	bad, good := newScripted(t, http.StatusInternalServerError), newScripted(t, http.StatusOK)
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	rc := &route.Config{Chains: []route.Chain{{Name: "pair", Targets: []route.Target{
		{Provider: "first", Model: "gpt-4o-mini"}, {Provider: "openai", Model: "gpt-4o-mini"}}, RetryOn: route.DefaultRetryOn, MaxRetries: 1}}}
	e := newEnvWith(t, rc, limit.Limits{}, func(d *Deps) { d.Tracer = tracing.Tracer(tp) },
		providerAt("openai", "openai", good.base()), providerAt("first", "openai", bad.base()))
	if resp, body := e.post(t, "/v1/chat/completions", chatBody("pair")); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	var attempts []string
	for _, sp := range rec.Ended() {
		if sp.SpanKind() != trace.SpanKindClient {
			continue
		}
		a := attrs(sp)
		attempts = append(attempts, a[tracing.SVCProvider].AsString()+":"+sp.Status().Code.String())
	}
	if want := "first:Error openai:Unset"; strings.Join(attempts, " ") != want {
		t.Errorf("client spans %v, want %s", attempts, want)
	}
}

// TestNoTracer: without a tracer nothing reaches the provider.
func TestNoTracer(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithAPIKey("key-openai"))
	e := newEnv(t, &route.Config{}, limit.Limits{}, providerAt("openai", "openai", fake.URL()))
	req, _ := http.NewRequest(http.MethodPost, e.url+"/v1/chat/completions", strings.NewReader(chatBody("gpt-4o-mini")))
	req.Header.Set("Authorization", "Bearer "+testKey)
	req.Header.Set("traceparent", callerParent)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if got := fake.LastRequest().Header.Get("traceparent"); got != "" {
		t.Errorf("upstream traceparent %q without a tracer, want none", got)
	}
}

// TestTraceExportOTLP: with OTEL_EXPORTER_OTLP_ENDPOINT set, tracing.Setup's
// provider exports a request's spans to the collector as OTLP/HTTP
// protobuf: POST /v1/traces, with OTEL_EXPORTER_OTLP_HEADERS, and with the request's server span and its GenAI
// attributes, under service.name svc.
func TestTraceExportOTLP(t *testing.T) {
	col := newCollector(t)
	t.Setenv(tracing.EnvEndpoint, col.srv.URL)
	t.Setenv("OTEL_SERVICE_NAME", "")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "")
	t.Setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-collector-key=k1")
	tp, shutdown, err := tracing.Setup(context.Background(), tracing.Options{})
	if err != nil {
		t.Fatal(err)
	}
	fake := providertest.NewOpenAI(t, providertest.WithAPIKey("key-openai"))
	e := newEnvWith(t, &route.Config{}, limit.Limits{}, func(d *Deps) { d.Tracer = tracing.Tracer(tp) },
		providerAt("openai", "openai", fake.URL()))
	if resp, body := postTraced(t, e, chatBody("gpt-4o-mini")); resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if err := shutdown(context.Background()); err != nil { // flushes the batch
		t.Fatal(err)
	}
	reqs := col.requests()
	if len(reqs) == 0 {
		t.Fatal("the collector received nothing")
	}
	var found bool
	for _, r := range reqs {
		if r.method != http.MethodPost || r.path != "/v1/traces" || r.contentType != "application/x-protobuf" {
			t.Errorf("collector got %s %s (%s), want POST /v1/traces application/x-protobuf", r.method, r.path, r.contentType)
		}
		if got := r.header.Get("X-Collector-Key"); got != "k1" {
			t.Errorf("collector got x-collector-key %q, want OTEL_EXPORTER_OTLP_HEADERS' k1", got)
		}
		var ex coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(r.body, &ex); err != nil {
			t.Fatalf("body is not an OTLP export request: %v", err)
		}
		for _, rs := range ex.ResourceSpans {
			service := ""
			for _, kv := range rs.GetResource().GetAttributes() {
				if kv.Key == "service.name" {
					service = kv.GetValue().GetStringValue()
				}
			}
			for _, ss := range rs.ScopeSpans {
				for _, sp := range ss.Spans {
					if sp.Name != "chat gpt-4o-mini" || sp.Kind != tracepb.Span_SPAN_KIND_SERVER {
						continue
					}
					found = true
					if service != tracing.DefaultServiceName {
						t.Errorf("service.name %q, want %q", service, tracing.DefaultServiceName)
					}
					if got := trace.TraceID(sp.TraceId).String(); got != callerTrace {
						t.Errorf("exported trace id %s, want the caller's %s", got, callerTrace)
					}
					model := ""
					for _, kv := range sp.Attributes {
						if kv.Key == string(tracing.GenAIRequestModel) {
							model = kv.GetValue().GetStringValue()
						}
					}
					if model != "gpt-4o-mini" {
						t.Errorf("exported gen_ai.request.model %q, want gpt-4o-mini", model)
					}
				}
			}
		}
	}
	if !found {
		t.Error("no server span \"chat gpt-4o-mini\" in the export")
	}
}

// collector is an OTLP/HTTP endpoint that keeps what it receives.
type collector struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []collected
}

type collected struct {
	method, path, contentType string
	header                    http.Header
	body                      []byte
}

func newCollector(t *testing.T) *collector {
	c := &collector{}
	c.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.got = append(c.got, collected{r.Method, r.URL.Path, r.Header.Get("Content-Type"), r.Header.Clone(), b})
		c.mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(c.srv.Close)
	return c
}

func (c *collector) requests() []collected {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]collected(nil), c.got...)
}
