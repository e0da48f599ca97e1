package wire

import (
	"context"
	"runtime/debug"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/svc-gateway/svc/internal/tracing"
)

// tracerShutdown bounds the last export of spans when the process stops.
const tracerShutdown = 5 * time.Second

// Tracer is the tracer of the proxy's spans, or nil when tracing is off
// (no OTEL_EXPORTER_OTLP_ENDPOINT / _TRACES_ENDPOINT): the proxy then adds
// nothing to a request. Built once; its spans are flushed when the process
// stops, after the components that start them. A tracing setup that fails
// (an OTLP protocol svc does not speak) is logged and svc runs without
// traces: observability never stops the gateway.
func (s *System) Tracer() trace.Tracer {
	t, _ := s.tracer.get(func() (trace.Tracer, error) {
		tp, shutdown, err := tracing.Setup(s.ctx, tracing.Options{ServiceVersion: moduleVersion(), Log: s.Log})
		if err != nil {
			s.Log.Error("tracing is off", "err", err)
			return nil, nil
		}
		t := tracing.Tracer(tp)
		if t == nil {
			return nil, nil
		}
		s.onClose(func() {
			ctx, cancel := context.WithTimeout(context.Background(), tracerShutdown)
			defer cancel()
			if err := shutdown(ctx); err != nil {
				s.Log.Warn("tracing: last spans not exported", "err", err)
			}
		})
		s.Log.Info("tracing on: spans exported over OTLP/HTTP")
		return t, nil
	})
	return t
}

// moduleVersion is svc's module version from the build information ("" in
// a development build).
func moduleVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok || bi.Main.Version == "(devel)" {
		return ""
	}
	return bi.Main.Version
}
