package app

import (
	"log/slog"
	"net/http"
	"runtime/debug"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Recover turns a panic in h into a logged stack and, when nothing was
// written yet, an OpenAI-shaped 500, instead of a dropped connection.
func Recover(h http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tw := &trackingWriter{ResponseWriter: w}
		defer func() {
			v := recover()
			if v == nil {
				return
			}
			if v == http.ErrAbortHandler {
				panic(v)
			}
			log.Error("panic serving request", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			if !tw.wrote {
				apierr.Write(w, apierr.New(apierr.Internal, "internal_error", "internal error"))
			}
		}()
		h.ServeHTTP(tw, r)
	})
}

// trackingWriter records whether the header was written. It keeps Flush and
// the trailers of the underlying writer reachable through Unwrap.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) { t.wrote = true; t.ResponseWriter.WriteHeader(code) }

func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}

func (t *trackingWriter) Flush() {
	t.wrote = true
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }
