package openapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxResponseBytes bounds the upstream bodies a call reads when
// Options.MaxResponseBytes is not set; MaxResponseBytes is the most it may
// be set to.
const (
	DefaultMaxResponseBytes = 1 << 20
	MaxResponseBytes        = 64 << 20
)

// maxInstructions bounds the server instructions taken from the document's
// description.
const maxInstructions = 2000

// Options says where a virtual server's tools send their calls and how.
type Options struct {
	// Name is the server's name (the registration's server_name); the
	// document's title when empty.
	Name string
	// BaseURL is where calls go: an absolute http or https URL whose path is
	// the prefix of every operation's path. The caller has vetted it.
	BaseURL string
	// IncludeMethods limits the tools to these methods (case-insensitive);
	// empty means all. See Document.Tools.
	IncludeMethods []string
	// Client sends the calls: the caller's SSRF-safe client, which also
	// decides about redirects. Required; http.DefaultClient is never used.
	Client *http.Client
	// Authorize adds the registration's credential to a request just before
	// it is sent, after everything the arguments set. May be nil. Its error
	// is logged (so it must not carry the credential), never shown to the
	// client.
	Authorize func(*http.Request) error
	// MaxResponseBytes bounds the upstream body read per call;
	// DefaultMaxResponseBytes when 0 or less, at most the package's
	// MaxResponseBytes.
	MaxResponseBytes int64
	// Logger receives the causes of failed calls (transport, Authorize),
	// with no URL. Nil discards them.
	Logger *slog.Logger
}

// NewServer returns an MCP server with one tool per included operation of
// d, each calling the operation at opts.BaseURL. Errors: ErrUnknownMethod and
// ErrNoOperations (from IncludeMethods), a *SpecError (a tool's schema over
// its bound), or an error about opts (no Client, a BaseURL that is not an
// absolute http(s) URL without credentials).
func NewServer(d *Document, opts Options) (*mcp.Server, error) {
	if d == nil {
		return nil, errors.New("openapi: nil document")
	}
	if opts.Client == nil {
		return nil, errors.New("openapi: Options.Client is required")
	}
	base, err := baseURL(opts.BaseURL)
	if err != nil {
		return nil, err
	}
	tools, err := d.build(opts.IncludeMethods)
	if err != nil {
		return nil, err
	}
	c := &caller{
		client:    opts.Client,
		authorize: opts.Authorize,
		base:      base,
		max:       opts.MaxResponseBytes,
		log:       opts.Logger,
	}
	if c.max <= 0 {
		c.max = DefaultMaxResponseBytes
	}
	c.max = min(c.max, MaxResponseBytes)
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	impl := &mcp.Implementation{Name: opts.Name, Version: "0"}
	if info := d.doc.Info; info != nil {
		impl.Title = oneLine(info.Title)
		if info.Version != "" {
			impl.Version = oneLine(info.Version)
		}
		if impl.Name == "" {
			impl.Name = sanitise(info.Title, maxNameLen)
		}
	}
	if impl.Name == "" {
		impl.Name = "openapi"
	}
	srv := mcp.NewServer(impl, &mcp.ServerOptions{
		Instructions: instructions(d),
		Logger:       opts.Logger,
	})
	for _, t := range tools {
		srv.AddTool(t.mcp, c.handler(t.mcp.Name, t.call))
	}
	return srv, nil
}

func baseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, errors.New("openapi: Options.BaseURL is not a URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("openapi: Options.BaseURL must be an http or https URL")
	case u.Host == "":
		return nil, errors.New("openapi: Options.BaseURL has no host")
	case u.User != nil:
		return nil, errors.New("openapi: Options.BaseURL may not carry credentials; use Authorize")
	case u.Fragment != "" || u.Opaque != "":
		return nil, errors.New("openapi: Options.BaseURL may not have a fragment")
	}
	return u, nil
}

func instructions(d *Document) string {
	if d.doc.Info == nil {
		return ""
	}
	return truncateText(strings.TrimSpace(d.doc.Info.Description), maxInstructions)
}

// caller makes the calls of one server's tools.
type caller struct {
	client    *http.Client
	authorize func(*http.Request) error
	base      *url.URL
	max       int64
	log       *slog.Logger
}

func (c *caller) handler(name string, b *binding) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var raw []byte
		if req != nil && req.Params != nil {
			raw = req.Params.Arguments
		}
		a, err := decodeArgs(raw)
		if err != nil {
			return toolError(err.Error()), nil
		}
		hreq, err := c.request(ctx, b, a)
		if err != nil {
			return toolError(err.Error()), nil
		}
		if c.authorize != nil {
			if err := c.authorize(hreq); err != nil {
				c.log.WarnContext(ctx, "openapi tool: authorize failed", "tool", name, "err", err)
				return toolError("the call could not be authorised with the server's credential"), nil
			}
		}
		resp, err := c.client.Do(hreq)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			cause := transportCause(err, hreq.URL)
			c.log.WarnContext(ctx, "openapi tool: call failed", "tool", name, "method", b.method, "err", cause)
			return toolError(fmt.Sprintf("the request to the API failed: %s", cause)), nil
		}
		defer resp.Body.Close()
		return c.result(resp)
	}
}

// transportCause is a transport error without the request's URL, whose
// query may carry the credential.
func transportCause(err error, u *url.URL) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if ue.Timeout() {
			return "timed out"
		}
		err = ue.Err
	}
	msg := err.Error()
	for _, s := range []string{u.String(), u.RawQuery} {
		if s != "" {
			msg = strings.ReplaceAll(msg, s, "[redacted]")
		}
	}
	return truncateText(msg, 300)
}

func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{&mcp.TextContent{Text: msg}},
	}
}
