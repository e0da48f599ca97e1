// Package upstream owns the one HTTP client svc uses to reach providers: a
// tuned connection pool, a time limit on response headers (never on a whole
// stream), bounded body reads, and the mapping of transport failures to error
// kinds (timeout → 504, connection failure → 502, caller gone → 499).
// Credentials and signing live in upstream/cred.
//
// proxy and wire import upstream. Provider adapters never do: they are pure
// translation and never open a connection.
package upstream

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Options configure a Client.
type Options struct {
	// HeaderTimeout bounds the wait for the provider's response headers.
	HeaderTimeout time.Duration
	// MaxResponseBytes bounds a non-streamed response body.
	MaxResponseBytes int64
	// MaxConnsPerHost bounds idle connections kept per provider host.
	MaxIdleConnsPerHost int
	// Transport selects the HTTP client: TransportStd (the default,
	// net/http's Transport, HTTP/2 where offered) or TransportFastHTTP
	// (HTTP/1.1 written and read in the calling goroutine; see
	// fastTransport). Any other value means TransportStd; configuration
	// (SVC_UPSTREAM_TRANSPORT) validates it.
	Transport string

	// tlsConfig, when set, is the TLS configuration (tests trust their
	// server with it).
	tlsConfig *tls.Config
	// dial, when set, replaces the dialer (tests resolve names with it).
	dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// The transports Options.Transport selects.
const (
	TransportStd      = "std"
	TransportFastHTTP = "fasthttp"
)

// Client sends requests to providers.
type Client struct {
	hc  *http.Client
	opt Options
}

// New returns a Client with svc's transport settings.
func New(opt Options) *Client {
	if opt.HeaderTimeout <= 0 {
		opt.HeaderTimeout = 300 * time.Second
	}
	if opt.MaxResponseBytes <= 0 {
		opt.MaxResponseBytes = 64 << 20
	}
	if opt.MaxIdleConnsPerHost <= 0 {
		opt.MaxIdleConnsPerHost = 512
	}
	dial := opt.dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dial,
		TLSClientConfig:       opt.tlsConfig.Clone(),
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          4 * opt.MaxIdleConnsPerHost,
		MaxIdleConnsPerHost:   opt.MaxIdleConnsPerHost,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		ResponseHeaderTimeout: opt.HeaderTimeout,
		WriteBufferSize:       32 << 10,
		ReadBufferSize:        32 << 10,
	}
	var rt http.RoundTripper = tr
	switch opt.Transport {
	case TransportFastHTTP:
		rt = newFastTransport(opt, dial, http.ProxyFromEnvironment, tr)
	}
	return &Client{opt: opt, hc: &http.Client{
		Transport: rt,
		// Never follow redirects to another host with our credentials.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Do sends req. A transport failure is returned as an *apierr.Error whose kind
// says what happened; an HTTP error status is not an error here.
func (c *Client) Do(req *http.Request) (*http.Response, error) {
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, TransportError(req.Context(), err)
	}
	return resp, nil
}

// ReadBody reads a non-streamed body up to the size limit and closes it.
func (c *Client) ReadBody(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, c.opt.MaxResponseBytes+1))
	if err != nil {
		return nil, TransportError(resp.Request.Context(), err)
	}
	if int64(len(b)) > c.opt.MaxResponseBytes {
		return nil, apierr.Newf(apierr.UpstreamError, "upstream_too_large", "the provider's answer exceeds %d bytes", c.opt.MaxResponseBytes)
	}
	return b, nil
}

// TransportError classifies a failure to talk to a provider.
func TransportError(ctx context.Context, err error) error {
	var ne net.Error
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return apierr.Wrap(apierr.ClientClosed, "client_closed", "the client closed the request", err)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(ctx.Err(), context.DeadlineExceeded):
		return apierr.Wrap(apierr.UpstreamTimeout, "upstream_timeout", "the provider did not answer in time", err)
	case errors.As(err, &ne) && ne.Timeout():
		return apierr.Wrap(apierr.UpstreamTimeout, "upstream_timeout", "the provider did not answer in time", err)
	}
	return apierr.Wrap(apierr.UpstreamError, "upstream_unreachable", fmt.Sprintf("could not reach the provider (%s)", failureClass(err)), err)
}

// failureClass names a connection failure without echoing addresses.
func failureClass(err error) string {
	var oe *net.OpError
	var de *net.DNSError
	switch {
	case errors.As(err, &de):
		return "name resolution failed"
	case errors.As(err, &oe) && oe.Op == "dial":
		return "connection refused or unreachable"
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed"
	}
	return "connection failed"
}
