// Package tracing owns svc's OpenTelemetry tracing: the tracer provider
// (Setup: OTLP over HTTP when OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT is set, a no-op provider otherwise),
// the attribute names svc's spans carry (the GenAI semantic conventions'
// and svc's own, as constants here rather than a semconv package), the W3C
// trace context read from an inbound request and written on an upstream
// one, and the bounded prompt and completion text that SVC_TRACE_CONTENT
// adds as span events.
//
// wire sets it up and hands its tracer to the proxy, which starts the
// spans (one per request, stage and upstream call). It imports the
// OpenTelemetry API, SDK and OTLP/HTTP exporter, and apierr.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ScopeName names svc's tracer (the instrumentation scope of its spans).
const ScopeName = "github.com/svc-gateway/svc"

// DefaultServiceName is the resource's service.name when OTEL_SERVICE_NAME
// (or service.name in OTEL_RESOURCE_ATTRIBUTES) does not name one.
const DefaultServiceName = "svc"

// The standard OpenTelemetry variables Setup reads itself; the exporter
// and the SDK read the rest (OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT,
// _COMPRESSION, _CERTIFICATE, OTEL_TRACES_SAMPLER, OTEL_BSP_*,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES).
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvSDKDisabled    = "OTEL_SDK_DISABLED"
	EnvTracesExporter = "OTEL_TRACES_EXPORTER"
)

// Options configure Setup.
type Options struct {
	// ServiceVersion is the resource's service.version ("" for none).
	ServiceVersion string
	// Exporter, when set, replaces the OTLP exporter (tests); tracing is
	// then on whatever the environment says.
	Exporter sdktrace.SpanExporter
	// Log, when set, receives the SDK's errors (a collector that does not
	// answer); else the SDK logs them its own way.
	Log *slog.Logger
}

// Enabled reports whether the environment asks for traces: an OTLP
// endpoint is set, and neither OTEL_SDK_DISABLED=true nor
// OTEL_TRACES_EXPORTER=none turns them off.
func Enabled() bool {
	if strings.EqualFold(strings.TrimSpace(os.Getenv(EnvSDKDisabled)), "true") ||
		strings.EqualFold(strings.TrimSpace(os.Getenv(EnvTracesExporter)), "none") {
		return false
	}
	return strings.TrimSpace(os.Getenv(EnvTracesEndpoint)) != "" || strings.TrimSpace(os.Getenv(EnvEndpoint)) != ""
}

// Setup returns svc's tracer provider and the function that flushes and
// stops it. Without an endpoint (Enabled) and without opt.Exporter it is a
// no-op provider (Tracer then gives nil, and the proxy adds nothing to a
// request). Otherwise spans go through a batch span processor to the OTLP
// exporter over HTTP (protobuf), which reads its endpoint, headers,
// timeout, compression and certificate from the standard OTEL_EXPORTER_OTLP_*
// variables; the sampler is the SDK's (OTEL_TRACES_SAMPLER, default
// parent-based always-on), the service name OTEL_SERVICE_NAME, else "svc".
// Setup opens no connection: an unreachable collector shows as export
// errors, never as a failed request.
func Setup(ctx context.Context, opt Options) (trace.TracerProvider, func(context.Context) error, error) {
	exp := opt.Exporter
	if exp == nil {
		if !Enabled() {
			return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
		}
		if err := checkProtocol(); err != nil {
			return nil, nil, err
		}
		var err error
		if exp, err = otlptracehttp.New(ctx); err != nil {
			return nil, nil, fmt.Errorf("tracing: OTLP exporter: %w", err)
		}
	}
	res, err := newResource(ctx, opt.ServiceVersion)
	if err != nil {
		return nil, nil, err
	}
	if opt.Log != nil {
		log := opt.Log
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { log.Warn("tracing", "err", err) }))
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	return tp, tp.Shutdown, nil
}

// checkProtocol refuses an OTLP protocol other than HTTP with protobuf,
// the only one svc exports with, rather than sending what the collector
// does not expect.
func checkProtocol() error {
	for _, name := range []string{EnvTracesProtocol, EnvProtocol} {
		v := strings.TrimSpace(os.Getenv(name))
		if v == "" {
			continue
		}
		if v != "http/protobuf" {
			return fmt.Errorf("tracing: %s=%s: svc exports OTLP over HTTP with protobuf only (http/protobuf)", name, v)
		}
		return nil
	}
	return nil
}

// newResource describes this process: service.name (OTEL_SERVICE_NAME,
// else service.name in OTEL_RESOURCE_ATTRIBUTES, else "svc"),
// service.version, the rest of OTEL_RESOURCE_ATTRIBUTES, and the SDK's name
// and version. Later sources win.
func newResource(ctx context.Context, version string) (*resource.Resource, error) {
	attrs := []attribute.KeyValue{attribute.String("service.name", DefaultServiceName)}
	if version != "" {
		attrs = append(attrs, attribute.String("service.version", version))
	}
	res, err := resource.New(ctx, resource.WithAttributes(attrs...), resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return nil, fmt.Errorf("tracing: resource: %w", err)
	}
	return res, nil
}

// Tracer is the tracer svc's spans come from, or nil when tp is a no-op
// provider: a nil tracer tells the proxy to build its chains without spans,
// so tracing that is off costs a request nothing.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		return nil
	}
	if _, off := tp.(noop.TracerProvider); off {
		return nil
	}
	return tp.Tracer(ScopeName)
}
