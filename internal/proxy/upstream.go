package proxy

import (
	"io"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/provider"
)

// upstreamStream is a provider's stream as the call stage hands it up the
// chain, in one wrapper: the exact key sent is scrubbed from its errors and
// from relayed error events; a stream cut by the shutdown ends with the
// shutdown's error; what passes is metered; and when it ends (cleanly, in
// error, or closed by the caller) the exchange gets its upstream time,
// usage (the provider's, else estimated) and cost, exactly once.
type upstreamStream struct {
	s     llm.Stream
	p     *Proxy
	x     *pipeline.Exchange
	prov  string
	key   string
	info  *provider.StreamInfo
	start time.Time
	reg   handle
	meter streamMeter
	ended bool
	err   error // the error the stream ended with, returned from then on
}

// upstream wraps s, the stream body reads, and registers body for Abort.
func (p *Proxy) upstream(x *pipeline.Exchange, prov, key string, s llm.Stream, info *provider.StreamInfo, body io.Closer, start time.Time) llm.Stream {
	return &upstreamStream{s: s, p: p, x: x, prov: prov, key: key, info: info, start: start, reg: p.running.add(body)}
}

func (u *upstreamStream) Next() (sse.Event, error) {
	if u.err != nil {
		return sse.Event{}, u.err
	}
	ev, err := u.s.Next()
	if err == nil {
		if ev.Event == "error" { // a native stream relays the provider's error events
			ev.Data = []byte(apierr.ScrubString(string(ev.Data), u.key))
		}
		u.meter.add(ev)
		return ev, nil
	}
	switch {
	case err == io.EOF:
	case u.p.aborting.Load():
		err = errShuttingDown
	default:
		err = apierr.Scrub(err, u.key)
	}
	u.err = err
	u.end()
	return sse.Event{}, err
}

func (u *upstreamStream) Close() error {
	err := u.s.Close()
	u.end()
	return err
}

// end records the stream's outcome on the exchange, once.
func (u *upstreamStream) end() {
	if u.ended {
		return
	}
	u.ended = true
	u.p.running.remove(u.reg)
	x := u.x
	x.Upstream = time.Since(u.start)
	if u.info != nil {
		x.Usage, x.ResponseModel = u.info.Usage, u.info.Model
	}
	if x.Usage.Total() == 0 {
		// Cut by the client before the provider's usage came, or a provider
		// that sends none: charge the prompt and what was streamed, estimated.
		x.Usage, x.UsageEstimated = estimatedUsage(x, &u.meter), true
	}
	x.Cost = u.p.cost(u.prov, x.UpstreamModel, x.ResponseModel, &x.Usage)
}
