package proxy

import (
	"context"
	"errors"
	"io"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
)

// errShutdown is the cause an exchange's context ends with when the server
// ran out of drain time.
var errShutdown = errors.New("proxy: shutting down")

// shutdownError is the caller's error for an exchange cut by the shutdown,
// or nil when ctx did not end for that reason.
func shutdownError(ctx context.Context) error {
	if !errors.Is(context.Cause(ctx), errShutdown) {
		return nil
	}
	return apierr.Wrap(apierr.Unavailable, "shutting_down",
		"svc is shutting down: the request was still running when the drain time (SVC_SHUTDOWN_TIMEOUT) ran out; retry it", errShutdown)
}

// cutByShutdown reports the shutdown, instead of the read error it caused,
// as the error of a stream cut by it.
type cutByShutdown struct {
	llm.Stream
	ctx context.Context
}

func (s cutByShutdown) Next() (sse.Event, error) {
	ev, err := s.Stream.Next()
	if err != nil && !errors.Is(err, io.EOF) {
		if e := shutdownError(s.ctx); e != nil {
			return ev, e
		}
	}
	return ev, err
}
