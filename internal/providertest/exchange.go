package providertest

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// controls is the behaviour of one response: the server's defaults with the
// request's X-Fake-* headers applied.
type controls struct {
	status          int
	reply           string
	chunks          int
	chunkDelay      time.Duration
	delay           time.Duration
	cutAfter        int
	cachedTokens    int
	reasoningTokens int
	toolCalls       bool
}

// exchange is the state of one request; pooled.
type exchange struct {
	ctl  controls
	cfg  *config
	lim  io.LimitedReader
	in   bytes.Buffer // request body
	body []byte       // in.Bytes()
	out  []byte       // scratch for the response
}

var exchanges = sync.Pool{New: func() any { return new(exchange) }}

// maxPooled is the largest buffer an exchange keeps for the next request.
const maxPooled = 64 << 10

func (x *exchange) end() {
	if x.in.Cap() > maxPooled {
		x.in = bytes.Buffer{}
	}
	if cap(x.out) > maxPooled {
		x.out = nil
	}
	x.in.Reset()
	x.body, x.out, x.cfg = nil, x.out[:0], nil
	exchanges.Put(x)
}

// begin does what every endpoint does first: count and read the request,
// record it, resolve its controls, wait X-Fake-Delay, check the API key and
// answer X-Fake-Echo-Key.
// When it reports false it has answered already; otherwise the caller must
// call x.end when done with it.
func (s *OpenAI) begin(w http.ResponseWriter, r *http.Request) (*exchange, bool) {
	s.count.Add(1)
	x := exchanges.Get().(*exchange)
	x.cfg = s.cfg.Load()
	x.lim = io.LimitedReader{R: r.Body, N: maxBody + 1}
	_, err := x.in.ReadFrom(&x.lim)
	x.lim.R = nil
	x.body = x.in.Bytes()
	if x.cfg.recordLimit > 0 {
		s.record(Recorded{
			Method:   r.Method,
			Path:     r.URL.Path,
			RawQuery: r.URL.RawQuery,
			Header:   r.Header.Clone(),
			Body:     bytes.Clone(x.body),
		})
	}
	if err != nil {
		x.end()
		abort() // the client went away or broke the body
	}
	if len(x.body) > maxBody {
		x.end()
		writeError(w, apiError{Status: http.StatusRequestEntityTooLarge, Message: errBodyTooLarge.Error(), Type: "invalid_request_error"})
		return nil, false
	}

	var bad apiError
	x.ctl, bad = resolve(x.cfg, r.Header)
	if !s.wait(r.Context(), x.ctl.delay) {
		x.end()
		abort()
	}
	if bad.Status != 0 {
		x.end()
		writeError(w, bad)
		return nil, false
	}
	if x.cfg.apiKey != "" {
		if key, ok := bearer(r.Header); !ok || key != x.cfg.apiKey {
			x.end()
			e := forcedError(http.StatusUnauthorized, "")
			if !ok {
				e.Message, e.Code = "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).", ""
			}
			writeError(w, e)
			return nil, false
		}
	}
	if st, ok := echoStatus(r.Header); !ok || st != 0 {
		x.end()
		if !ok {
			writeError(w, invalidRequest("", "", badEchoHeader(r.Header)))
			return nil, false
		}
		key := receivedKey(r)
		writeError(w, apiError{Status: st, Message: echoMessage(key), Type: "invalid_request_error", Param: key, Code: key})
		return nil, false
	}
	return x, true
}

// resolve applies the X-Fake-* headers of h to the defaults of c. A header it
// cannot parse gives a 400 error naming it.
func resolve(c *config, h http.Header) (controls, apiError) {
	ctl := controls{
		status:          c.status,
		reply:           c.reply,
		chunks:          c.chunks,
		chunkDelay:      c.chunkDelay,
		delay:           c.delay,
		cutAfter:        c.cutAfter,
		cachedTokens:    c.cachedTokens,
		reasoningTokens: c.reasoningTokens,
		toolCalls:       c.toolCalls,
	}
	var bad apiError
	intHeader := func(name string, dst *int, lo int) {
		v := h.Get(name)
		if v == "" {
			return
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < lo {
			bad = invalidRequest("", "", "providertest: bad "+name+" header "+strconv.Quote(v)+": want an integer >= "+strconv.Itoa(lo))
			return
		}
		*dst = n
	}
	durHeader := func(name string, dst *time.Duration) {
		v := h.Get(name)
		if v == "" {
			return
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			ms, err2 := strconv.Atoi(v) // a bare number is milliseconds
			d, err = time.Duration(ms)*time.Millisecond, err2
		}
		if err != nil || d < 0 {
			bad = invalidRequest("", "", "providertest: bad "+name+" header "+strconv.Quote(v)+": want a duration such as 20ms")
			return
		}
		*dst = d
	}
	intHeader(HeaderStatus, &ctl.status, 0)
	intHeader(HeaderChunks, &ctl.chunks, 1)
	intHeader(HeaderCutAfter, &ctl.cutAfter, 0)
	intHeader(HeaderCachedTokens, &ctl.cachedTokens, 0)
	intHeader(HeaderReasoningTokens, &ctl.reasoningTokens, 0)
	durHeader(HeaderDelay, &ctl.delay)
	durHeader(HeaderChunkDelay, &ctl.chunkDelay)
	if v := h.Get(HeaderToolCalls); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			bad = invalidRequest("", "", "providertest: bad "+HeaderToolCalls+" header "+strconv.Quote(v)+": want 1 or 0")
		}
		ctl.toolCalls = on
	}
	if v, ok := h[HeaderReply]; ok && len(v) > 0 {
		ctl.reply = v[0]
	}
	if ctl.status != 0 && (ctl.status < 400 || ctl.status > 599) {
		ctl.status = 0
	}
	return ctl, bad
}
