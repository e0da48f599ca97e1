package proxy

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/llm/sse"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// Response headers of every proxied answer.
const (
	hProvider  = "X-Svc-Provider"
	hModel     = "X-Svc-Model"
	hRequestID = "X-Svc-Request-Id"
	hCallID    = "X-Svc-Call-Id"
	hLatency   = "X-Svc-Latency-Ms"
	hCost      = "X-Svc-Cost-Usd"
)

var doneData = []byte("[DONE]")

// dialect is how a route's clients expect errors and stream ends: OpenAI's
// shape on /v1, the provider's own on the native passthrough routes.
type dialect struct {
	writeError func(http.ResponseWriter, error)
	// errorEvent is a failed stream's last event; sent is the count of
	// events already written.
	errorEvent func(err error, sent int) sse.Event
	done       []byte // written as the last event of a clean stream; nil for none
}

var (
	openAIDialect = dialect{
		writeError: apierr.Write,
		errorEvent: func(err error, _ int) sse.Event { return sse.Event{Data: apierr.JSON(err)} },
		done:       doneData,
	}
	anthropicDialect = dialect{
		writeError: apierr.WriteAnthropic,
		errorEvent: func(err error, _ int) sse.Event { return sse.Event{Event: "error", Data: apierr.AnthropicJSON(err)} },
	}
)

// write answers the exchange: an error, a JSON body, or a relayed stream.
func (p *Proxy) write(w http.ResponseWriter, x *pipeline.Exchange, resp *pipeline.Response, err error, d dialect) {
	h := w.Header()
	for k, v := range x.Header {
		h[k] = v
	}
	h.Set(hRequestID, x.ID)
	h.Set(hCallID, x.ID)
	if x.Provider != "" {
		h.Set(hProvider, x.Provider)
	}
	if m := modelOf(x); m != "" {
		h.Set(hModel, headerValue(m))
	}
	if err != nil {
		h.Set(hLatency, millis(time.Since(x.Start)))
		h.Set(hCost, "0")
		d.writeError(w, err)
		return
	}
	for k, v := range resp.Header {
		h[k] = v
	}
	if resp.Raw != nil {
		p.relayRaw(w, x, resp)
		return
	}
	if resp.Stream == nil {
		h.Set(hLatency, millis(time.Since(x.Start)))
		h.Set(hCost, usd(x.Cost))
		h.Set("Content-Length", strconv.Itoa(len(resp.Body)))
		w.WriteHeader(resp.Status)
		_, _ = w.Write(resp.Body)
		return
	}
	p.relay(w, x, resp, d)
}

// relay writes a stream event by event, flushing each, and reports cost and
// total latency as trailers (they are known only at the end).
func (p *Proxy) relay(w http.ResponseWriter, x *pipeline.Exchange, resp *pipeline.Response, d dialect) {
	s := resp.Stream
	defer s.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("Trailer", hCost+", "+hLatency)
	// Known before the first byte: the time to it, and the estimated
	// cost; the trailers carry the total latency and the actual cost.
	h.Set(hLatency, millis(time.Since(x.Start)))
	h.Set(hCost, usd(p.estimatedCost(x)))
	w.WriteHeader(resp.Status)
	sw := sse.NewWriter(w)
	var err error
	clientGone, sent := false, 0
	for {
		var ev sse.Event
		ev, err = s.Next()
		if err != nil {
			break
		}
		var werr error
		if ev.Event == "" && ev.ID == "" {
			werr = sw.WriteData(ev.Data)
		} else {
			werr = sw.WriteEvent(ev)
		}
		if werr != nil {
			clientGone = true // Close below ends the upstream call
			break
		}
		sent++
	}
	switch {
	case clientGone || x.Inbound.Context().Err() != nil:
	case errors.Is(err, io.EOF):
		if d.done != nil {
			_ = sw.WriteData(d.done)
		}
	default:
		// A failure after the headers: tell the client in the stream.
		_ = sw.WriteEvent(d.errorEvent(err, sent))
	}
	_ = s.Close()
	h.Set(hCost, usd(x.Cost))
	h.Set(hLatency, millis(time.Since(x.Start)))
}

// estimatedCost is x's cost as estimated before the call: the limit
// stage's tokenizer estimate when it ran; else, cheaply, the prompt at a
// quarter of the body's bytes and the completion at the requested maximum,
// priced; 0 for a cache hit.
func (p *Proxy) estimatedCost(x *pipeline.Exchange) float64 {
	switch {
	case x.Cache != nil:
		return 0
	case x.EstimatedCost > 0:
		return x.EstimatedCost
	}
	var completion int64
	if x.Chat != nil {
		completion = x.Chat.MaxOutput()
	}
	u := llm.Usage{PromptTokens: int64(len(x.Body)+3) / 4, CompletionTokens: completion}
	return p.cost(x.Provider, x.UpstreamModel, "", &u)
}

// headerValue makes s, which the caller or a provider chose (a model
// name), safe as a header value: control bytes become '?', so a NUL or a
// line break can neither break the answer nor add a header.
func headerValue(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] < 0x20 || b[j] == 0x7f {
					b[j] = '?'
				}
			}
			return string(b)
		}
	}
	return s
}

func modelOf(x *pipeline.Exchange) string {
	if x.ResponseModel != "" {
		return x.ResponseModel
	}
	return x.UpstreamModel
}

func millis(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

func usd(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

func notFound(w http.ResponseWriter, r *http.Request) {
	apierr.Write(w, apierr.Newf(apierr.NotFound, "route_not_found", "no route for %s %s", r.Method, r.URL.Path))
}

func writeError(w http.ResponseWriter, err error) { apierr.Write(w, err) }

// relayRaw copies a binary stream (audio) to the client as it arrives,
// flushing each read, with cost and total latency as trailers.
func (p *Proxy) relayRaw(w http.ResponseWriter, x *pipeline.Exchange, resp *pipeline.Response) {
	defer resp.Raw.Close()
	h := w.Header()
	h.Set("Trailer", hCost+", "+hLatency)
	h.Set(hLatency, millis(time.Since(x.Start)))
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(resp.Status)
	rc := http.NewResponseController(w)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Raw.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				break
			}
			_ = rc.Flush()
		}
		if err != nil {
			break
		}
	}
	_ = resp.Raw.Close()
	h.Set(hCost, usd(x.Cost))
	h.Set(hLatency, millis(time.Since(x.Start)))
}
