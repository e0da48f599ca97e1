package wire

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/tracing"
)

// TestTracer: off without an endpoint (nil: the proxy adds nothing); with
// one, built once, and its spans exported when the System closes.
func TestTracer(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, name := range []string{tracing.EnvEndpoint, tracing.EnvTracesEndpoint, tracing.EnvProtocol, tracing.EnvTracesProtocol, tracing.EnvSDKDisabled, tracing.EnvTracesExporter} {
		t.Setenv(name, "")
	}
	off := newSystem(context.Background(), &config.Config{}, quiet, io.Discard)
	if tr := off.Tracer(); tr != nil {
		t.Errorf("Tracer without an endpoint = %T, want nil", tr)
	}
	off.close()

	var posts atomic.Int32
	col := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.URL.Path == "/v1/traces" {
			posts.Add(1)
		}
	}))
	defer col.Close()
	t.Setenv(tracing.EnvEndpoint, col.URL)
	on := newSystem(context.Background(), &config.Config{}, quiet, io.Discard)
	tr := on.Tracer()
	if tr == nil {
		t.Fatal("Tracer with an endpoint is nil")
	}
	if again := on.Tracer(); again != tr {
		t.Error("Tracer built twice")
	}
	_, span := tr.Start(context.Background(), "chat m")
	span.End()
	if posts.Load() != 0 {
		t.Fatal("exported before the batch was due or the System closed")
	}
	on.close()
	if posts.Load() != 1 {
		t.Errorf("%d exports after close, want the batch flushed once", posts.Load())
	}

	// A protocol svc does not speak: logged, and no tracer.
	t.Setenv(tracing.EnvProtocol, "grpc")
	bad := newSystem(context.Background(), &config.Config{}, quiet, io.Discard)
	if tr := bad.Tracer(); tr != nil {
		t.Errorf("Tracer with OTLP over gRPC = %T, want nil", tr)
	}
	bad.close()
}
