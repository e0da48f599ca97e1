package upstream

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/mcpgw"
)

// httpClient is the pool's client with a's credential on every request and
// POST answers bounded.
func (p *Pool) httpClient(a *authorizer) (*http.Client, error) {
	if p.opts.Client == nil {
		return nil, errors.New("upstream: no HTTP client configured")
	}
	c := *p.opts.Client
	base := c.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &roundTripper{base: base, auth: a, limit: p.opts.MaxResultBytes + 64<<10}
	c.Timeout = 0 // the SSE streams are long-lived; calls carry their own deadline
	return &c, nil
}

// authorizer reads the registration's credential into the one that sets it
// on each request.
func (p *Pool) authorizer(ctx context.Context, s *mcpgw.Server) (*authorizer, error) {
	a := &authorizer{pool: p, server: s.ID, kind: s.AuthType, header: s.AuthHeaderName}
	if s.AuthType == mcpgw.AuthBearer || s.AuthType == mcpgw.AuthHeader {
		if p.opts.Credentials == nil {
			return nil, errors.New("upstream: no credential store")
		}
		tok, _, err := p.opts.Credentials.Credential(ctx, s.ID)
		if err != nil {
			return nil, fmt.Errorf("reading the credential of %q: %w", s.ID, err)
		}
		a.value = tok
		if s.AuthType == mcpgw.AuthBearer && tok != "" {
			a.value = "Bearer " + tok
		}
		a.secrets = []string{tok}
	}
	return a, nil
}

// authorizer sets the one credential svc sends a server, and remembers
// what it sent so answers can be cleaned of it.
type authorizer struct {
	pool   *Pool
	server string
	kind   string
	header string
	value  string // the header's value ("" sends none): the token, after "Bearer " for bearer
	// secrets are the credentials known when the session opened (the
	// token, a stdio server's environment values).
	secrets []string
	static  atomic.Pointer[apierr.Scrubber]
	// sent is the last OAuth access token applied, with its scrubber.
	sent atomic.Pointer[sentToken]
}

type sentToken struct {
	token string
	scrub *apierr.Scrubber
}

// scrubber cleans text of every credential this session has sent.
func (a *authorizer) scrubber() *apierr.Scrubber {
	if a == nil {
		return nil
	}
	if t := a.sent.Load(); t != nil {
		return t.scrub
	}
	if len(a.secrets) == 0 {
		return nil
	}
	if sc := a.static.Load(); sc != nil {
		return sc
	}
	sc := apierr.NewScrubber(a.secrets...)
	a.static.Store(sc)
	return sc
}

func (a *authorizer) apply(r *http.Request) error {
	r.Header.Del("Authorization")
	r.Header.Del("Cookie")
	switch a.kind {
	case mcpgw.AuthBearer:
		if a.value != "" {
			r.Header.Set("Authorization", a.value)
		}
	case mcpgw.AuthHeader:
		if a.value != "" {
			r.Header.Set(a.header, a.value)
		}
	case mcpgw.AuthOAuth:
		if a.pool.opts.Tokens == nil {
			return errors.New("upstream: OAuth is not configured")
		}
		tok, err := a.pool.opts.Tokens.AccessToken(r.Context(), a.server)
		if err != nil {
			return fmt.Errorf("the OAuth token of %q: %w", a.server, err)
		}
		r.Header.Set("Authorization", "Bearer "+tok)
		if t := a.sent.Load(); t == nil || t.token != tok {
			a.sent.Store(&sentToken{token: tok, scrub: apierr.NewScrubber(append([]string{tok}, a.secrets...)...)})
		}
	}
	return nil
}

type roundTripper struct {
	base  http.RoundTripper
	auth  *authorizer
	limit int64
	// owned: the requests are built for this round tripper alone and never
	// used again (the direct path's), so the credential is set on them as
	// they are, without a copy.
	owned bool
}

func (t *roundTripper) RoundTrip(r *http.Request) (*http.Response, error) {
	if !t.owned {
		r = r.Clone(r.Context())
	}
	if err := t.auth.apply(r); err != nil {
		return nil, err
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil || r.Method != http.MethodPost {
		return resp, err
	}
	resp.Body = &limitedBody{ReadCloser: resp.Body, left: t.limit, limit: t.limit}
	return resp, nil
}

// limitedBody fails a read past its limit instead of truncating silently.
type limitedBody struct {
	io.ReadCloser
	left, limit int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, &TooLargeError{Limit: b.limit}
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.ReadCloser.Read(p)
	b.left -= int64(n)
	return n, err
}

// resultSize is the bytes of a result's content, roughly as sent.
func resultSize(r *mcp.CallToolResult) int64 {
	var n int64
	for _, c := range r.Content {
		switch t := c.(type) {
		case *mcp.TextContent:
			n += int64(len(t.Text))
		case *mcp.ImageContent:
			n += int64(len(t.Data))
		case *mcp.AudioContent:
			n += int64(len(t.Data))
		case *mcp.EmbeddedResource:
			if t.Resource != nil {
				n += int64(len(t.Resource.Text) + len(t.Resource.Blob))
			}
		}
	}
	return n
}

// isConnectionError says whether err means the session is gone (so it is
// reopened), as opposed to the server's answer.
func isConnectionError(err error) bool {
	var ne net.Error
	return errors.Is(err, mcp.ErrConnectionClosed) || errors.As(err, &ne) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF)
}

var _ mcpgw.Upstream = (*Pool)(nil)
