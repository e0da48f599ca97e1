package upstream

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
)

// fastTransport is an http.RoundTripper that speaks HTTP/1.1 with fasthttp,
// writing the request and reading the answer in the calling goroutine: no
// writeLoop/readLoop hand-offs as in net/http's Transport, which cost about
// 25 µs a request on a loopback round trip.
//
// It keeps net/http's guarantees that svc relies on: the request's headers are
// written as given (names and values untouched, order of values kept), the
// answer's body streams, a cancelled context aborts the call while waiting
// for headers and while reading the body, the header timeout bounds only the
// wait for headers, and closing a body early closes its connection. It
// differs in what it does not do: no HTTP/2 (ALPN offers only http/1.1), no
// transparent gzip, and requests that the environment sends through a proxy
// (HTTP_PROXY, HTTPS_PROXY, NO_PROXY) are handed to the std transport.
// Connections are pooled per scheme and host, one fasthttp.HostClient each,
// created on first use.
type fastTransport struct {
	opt   Options
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	tls   *tls.Config
	proxy func(*http.Request) (*url.URL, error)
	std   http.RoundTripper // for requests sent through a proxy

	mu    sync.RWMutex
	hosts map[string]*fasthttp.HostClient // by scheme://host:port
}

// newFastTransport returns a fastTransport with opt's limits; std carries the
// requests that go through a proxy.
func newFastTransport(opt Options, dial func(context.Context, string, string) (net.Conn, error), proxy func(*http.Request) (*url.URL, error), std http.RoundTripper) *fastTransport {
	cfg := opt.tlsConfig.Clone()
	if cfg == nil {
		cfg = &tls.Config{}
	}
	cfg.NextProtos = []string{"http/1.1"}
	return &fastTransport{opt: opt, dial: dial, tls: cfg, proxy: proxy, std: std, hosts: map[string]*fasthttp.HostClient{}}
}

// errUnsupportedScheme is returned for a URL that is neither http nor https.
var errUnsupportedScheme = errors.New("unsupported URL scheme")

// aLongTimeAgo is a deadline in the past: setting it aborts blocked I/O.
var aLongTimeAgo = time.Unix(1, 0)

// maxAttempts bounds sends of one request over reused connections that turn
// out to be closed.
const maxAttempts = 3

// RoundTrip sends req over a pooled connection to its host.
func (t *fastTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || (req.URL.Scheme != "http" && req.URL.Scheme != "https") || req.URL.Host == "" {
		closeBody(req)
		return nil, fmt.Errorf("%w in %q", errUnsupportedScheme, req.URL)
	}
	if t.proxy != nil {
		if u, err := t.proxy(req); err != nil || u != nil {
			return t.std.RoundTrip(req)
		}
	}
	freq := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(freq)
	if err := buildRequest(freq, req); err != nil {
		return nil, err
	}
	hc := t.hostClient(req.URL)
	ctx := req.Context()
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cc, err := hc.AcquireConn(0, false)
		if err != nil {
			return nil, err
		}
		reused := !cc.LastUseTime().IsZero()
		if reused && !connAlive(cc.Conn()) {
			hc.CloseConn(cc)
			attempt--
			continue
		}
		g := &connGuard{conn: cc.Conn(), owned: true}
		resp, retry, err := t.exchange(ctx, hc, g, freq, req, func(reuse bool) {
			if reuse {
				hc.ReleaseConn(cc)
			} else {
				hc.CloseConn(cc)
			}
		})
		if err == nil {
			return resp, nil
		}
		if !retry || !reused || attempt >= maxAttempts || ctx.Err() != nil {
			return nil, err
		}
	}
}

// exchange writes freq on g's connection and reads the answer's headers. It
// reports whether a failure happened before the request was fully written,
// when sending it again on another connection is safe. done gives the
// connection back (to the pool when reuse is true) exactly once.
func (t *fastTransport) exchange(ctx context.Context, hc *fasthttp.HostClient, g *connGuard, freq *fasthttp.Request, req *http.Request, done func(reuse bool)) (*http.Response, bool, error) {
	conn := g.conn
	if err := conn.SetDeadline(time.Now().Add(t.opt.HeaderTimeout)); err != nil {
		done(false)
		return nil, true, err
	}
	stop := context.AfterFunc(ctx, g.cut)
	bw := hc.AcquireWriter(conn)
	err := freq.Write(bw)
	if err == nil {
		err = bw.Flush()
	}
	hc.ReleaseWriter(bw)
	if err != nil {
		stop()
		done(false)
		return nil, true, err
	}

	fresp := fasthttp.AcquireResponse()
	fresp.StreamBody = true
	fresp.Header.SetNoDefaultContentType(true)
	fresp.SkipBody = req.Method == http.MethodHead
	br := hc.AcquireReader(conn)
	// A limit of 1 byte makes fasthttp stream every body instead of reading
	// one of known length here, under the header deadline.
	if err := fresp.ReadLimitBody(br, 1); err != nil {
		stop()
		hc.ReleaseReader(br)
		fasthttp.ReleaseResponse(fresp)
		done(false)
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, false, err
	}
	if !stop() || g.isCut() {
		// The context ended while the headers arrived.
		hc.ReleaseReader(br)
		fasthttp.ReleaseResponse(fresp)
		done(false)
		return nil, false, context.Cause(ctx)
	}
	if err := conn.SetDeadline(time.Time{}); err != nil {
		hc.ReleaseReader(br)
		fasthttp.ReleaseResponse(fresp)
		done(false)
		return nil, false, err
	}

	resp := &http.Response{
		Status:        strconv.Itoa(fresp.StatusCode()) + " " + string(fresp.Header.StatusMessage()),
		StatusCode:    fresp.StatusCode(),
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        make(http.Header, fresp.Header.Len()),
		ContentLength: -1,
		Request:       req,
	}
	if !fresp.Header.IsHTTP11() {
		resp.Proto, resp.ProtoMinor = "HTTP/1.0", 0
	}
	for k, v := range fresp.Header.All() {
		resp.Header.Add(string(k), string(v))
	}
	cl := fresp.Header.ContentLength()
	if cl >= 0 {
		resp.ContentLength = int64(cl)
	}
	if cl == -1 {
		resp.TransferEncoding = []string{"chunked"}
	}
	// A body that ends when the connection closes (-2) leaves nothing to reuse.
	reuse := !freq.Header.ConnectionClose() && !fresp.ConnectionClose() && cl != -2
	resp.Close = !reuse
	stream := fresp.BodyStream()
	if stream == nil || fresp.SkipBody || cl == 0 {
		resp.Body = http.NoBody
		hc.ReleaseReader(br)
		fasthttp.ReleaseResponse(fresp)
		done(reuse)
		return resp, false, nil
	}
	b := &fastBody{guard: g, stream: stream, length: int64(cl), reuse: reuse, release: func(reuse bool) {
		hc.ReleaseReader(br)
		fasthttp.ReleaseResponse(fresp)
		done(reuse)
	}}
	b.stop = context.AfterFunc(ctx, g.cut)
	resp.Body = b
	return resp, false, nil
}

// hostClient returns the pool for u's scheme and host, creating it on first
// use.
func (t *fastTransport) hostClient(u *url.URL) *fasthttp.HostClient {
	host := u.Host
	if u.Port() == "" {
		port := "80"
		if u.Scheme == "https" {
			port = "443"
		}
		host = net.JoinHostPort(u.Hostname(), port)
	}
	key := u.Scheme + "://" + host
	t.mu.RLock()
	hc := t.hosts[key]
	t.mu.RUnlock()
	if hc != nil {
		return hc
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if hc := t.hosts[key]; hc != nil {
		return hc
	}
	isTLS := u.Scheme == "https"
	serverName := u.Hostname()
	hc = &fasthttp.HostClient{
		Addr:                          host,
		IsTLS:                         isTLS,
		Dial:                          func(addr string) (net.Conn, error) { return t.dialHost(addr, isTLS, serverName) },
		MaxConns:                      1 << 20, // no limit, as net/http's
		MaxIdleConnDuration:           90 * time.Second,
		ReadBufferSize:                32 << 10,
		WriteBufferSize:               32 << 10,
		DisableHeaderNamesNormalizing: true,
		DisablePathNormalizing:        true,
		NoDefaultUserAgentHeader:      true,
		ConnPoolStrategy:              fasthttp.LIFO,
	}
	t.hosts[key] = hc
	return hc
}

// dialHost opens a connection to addr, with TLS (verified, SNI serverName)
// when isTLS. fasthttp uses a connection that can Handshake as it is.
func (t *fastTransport) dialHost(addr string, isTLS bool, serverName string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	raw, err := t.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	conn := &eofConn{Conn: raw}
	if !isTLS {
		return conn, nil
	}
	cfg := t.tls
	if cfg.ServerName == "" {
		cfg = cfg.Clone()
		cfg.ServerName = serverName
	}
	tc := tls.Client(conn, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return tc, nil
}

// buildRequest copies req into freq: method, target, Host, headers as given
// and the body, read in full so that a send can be repeated on another
// connection. It closes req.Body.
func buildRequest(freq *fasthttp.Request, req *http.Request) error {
	h := &freq.Header
	h.DisableNormalizing()
	h.SetNoDefaultContentType(true)
	h.SetMethod(req.Method)
	h.SetRequestURI(req.URL.RequestURI())
	host := req.Host
	if host == "" {
		host = req.URL.Host
	}
	h.SetHost(host)
	if _, ok := req.Header["User-Agent"]; !ok {
		h.SetUserAgent("Go-http-client/1.1")
	}
	for k, vs := range req.Header {
		switch {
		case strings.EqualFold(k, "Host"), strings.EqualFold(k, "Content-Length"), strings.EqualFold(k, "Transfer-Encoding"):
			continue
		}
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	if req.Close {
		h.SetConnectionClose()
	}
	if req.Body == nil || req.Body == http.NoBody {
		return nil
	}
	defer req.Body.Close()
	w := freq.BodyWriter()
	if _, err := io.Copy(w, req.Body); err != nil {
		return fmt.Errorf("reading the request body: %w", err)
	}
	return nil
}

// closeBody closes req's body, as a RoundTripper must even when it fails.
func closeBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// connGuard lets a context's end abort I/O on a connection only while the
// request owns it, never after it went back to the pool.
type connGuard struct {
	mu     sync.Mutex
	conn   net.Conn
	owned  bool
	wasCut bool
}

// cut aborts blocked reads and writes on the connection if the request still
// owns it.
func (g *connGuard) cut() {
	g.mu.Lock()
	if g.owned {
		g.wasCut = true
		g.conn.SetDeadline(aLongTimeAgo)
	}
	g.mu.Unlock()
}

// isCut reports whether cut aborted the connection's I/O.
func (g *connGuard) isCut() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.wasCut
}

// disown ends the request's ownership and reports whether the connection is
// still usable (cut did not poison its deadlines).
func (g *connGuard) disown() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.owned = false
	return !g.wasCut
}

// fastBody streams an answer's body and gives its connection back when the
// body ends (to the pool) or is closed early (closed).
type fastBody struct {
	guard   *connGuard
	stream  io.Reader
	length  int64 // Content-Length, or -1 chunked, -2 until the connection closes
	read    int64
	stop    func() bool
	reuse   bool
	release func(reuse bool)

	mu   sync.Mutex // serialises Read and the release
	done bool
	err  error
}

// Read reads from the body stream.
func (b *fastBody) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		if b.err != nil {
			return 0, b.err
		}
		return 0, errReadOnClosedBody
	}
	n, err := b.stream.Read(p)
	b.read += int64(n)
	if err == io.EOF && b.truncated() {
		// fasthttp reports a body cut short as its end.
		err = io.ErrUnexpectedEOF
	}
	switch {
	case err == io.EOF:
		b.finish(b.reuse, io.EOF)
	case err != nil:
		b.finish(false, err)
	}
	return n, err
}

// truncated reports whether the body ended before its length said (or, when
// chunked, because the provider closed the connection before the last chunk).
func (b *fastBody) truncated() bool {
	switch {
	case b.length >= 0:
		return b.read < b.length
	case b.length == -1:
		return peerClosed(b.guard.conn)
	}
	return false
}

// Close gives the connection back: to the pool if the whole body was read,
// or its end is already buffered (a relay that stops at "data: [DONE]" has
// usually received the closing chunk too); closed otherwise, without waiting
// for the rest. It may be called while a Read is blocked.
func (b *fastBody) Close() error {
	b.guard.cut() // unblocks a Read; reads below see only buffered bytes
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return nil
	}
	eof := false
	if b.reuse {
		var buf [512]byte
		for range maxDrainReads {
			if _, err := b.stream.Read(buf[:]); err != nil {
				eof = err == io.EOF
				break
			}
		}
	}
	b.done = true
	b.err = errReadOnClosedBody
	stopped := b.stop()
	reuse := eof && stopped && b.guard.conn.SetDeadline(time.Time{}) == nil
	b.guard.disown()
	b.release(reuse)
	return nil
}

// maxDrainReads bounds the buffered bytes Close reads looking for the body's
// end (512 bytes a read).
const maxDrainReads = 8

// finish ends the body once; b.mu is held.
func (b *fastBody) finish(reuse bool, err error) {
	b.done = true
	b.err = err
	b.stop()
	if !b.guard.disown() {
		reuse = false
	}
	b.release(reuse)
}

// eofConn records whether the peer closed the connection: a chunked body
// that fasthttp ends because the connection ended was cut short.
type eofConn struct {
	net.Conn
	eof atomic.Bool
}

// Read reads from the connection, noting its end.
func (c *eofConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if err == io.EOF {
		c.eof.Store(true)
	}
	return n, err
}

// SyscallConn exposes the socket, for connAlive.
func (c *eofConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}

// peerClosed reports whether a read on conn met the peer's end.
func peerClosed(conn net.Conn) bool {
	if tc, ok := conn.(*tls.Conn); ok {
		conn = tc.NetConn()
	}
	ec, ok := conn.(*eofConn)
	return ok && ec.eof.Load()
}

// errReadOnClosedBody is what net/http returns too.
var errReadOnClosedBody = errors.New("http: read on closed response body")

var _ http.RoundTripper = (*fastTransport)(nil)
