package mcpgw

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/store"
)

// invoke serves the call from the cache or the upstream server, scans the
// result and settles the cost.
func (g *Gateway) invoke(ctx context.Context, c *Call, s *Server, tool *mcp.Tool, canon []byte, out *Result) (*Result, error) {
	key, cacheable := g.cacheKey(c, s, tool, canon)
	if cacheable {
		if hit, enc, err := g.cacheGet(ctx, key); err == nil && hit != nil {
			if err := g.scan(ctx, c, s, "result", resultTexts(hit), out); err != nil {
				return out, err
			}
			g.Cache.Hit(ctx, s.ID, s.CostInfo.PerCallUSD)
			out.CallToolResult, out.JSON, out.Cached, out.Outcome = hit, enc, true, OutcomeCached
			return out, nil
		}
	}
	callCtx := ctx
	if g.Options.Timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, g.Options.Timeout)
		defer cancel()
	}
	r, enc, err := g.callUpstream(callCtx, s, &mcp.CallToolParams{Name: c.Tool, Arguments: rawArguments(canon)})
	out.CostUSD = s.CostInfo.PerCallUSD // the server was called: the call is paid
	if err != nil {
		out.Outcome = OutcomeError
		if ctx.Err() == nil && errors.Is(callCtx.Err(), context.DeadlineExceeded) {
			return out, apierr.Wrap(apierr.UpstreamTimeout, "tool_timeout", "the tool server did not answer within "+g.Options.Timeout.String(), err)
		}
		return out, upstreamError(err)
	}
	out.CallToolResult, out.JSON = r, enc
	if err := g.scan(ctx, c, s, "result", resultTexts(r), out); err != nil {
		out.CallToolResult, out.JSON = nil, nil
		return out, err
	}
	out.Outcome = OutcomeOK
	if r.IsError {
		out.Outcome = OutcomeToolError
	}
	if cacheable && !r.IsError && len(out.Violations) == 0 {
		if err := g.Cache.Put(ctx, key, r, out.JSON, g.ttl(s), s.CostInfo.PerCallUSD); err != nil {
			g.logger().Warn("mcp: tool cache write failed", "server", s.ID, "tool", c.Tool, "err", err)
		}
	}
	return out, nil
}

// callUpstream calls the tool upstream, with the result's JSON when the
// upstream has it (JSONCaller).
func (g *Gateway) callUpstream(ctx context.Context, s *Server, params *mcp.CallToolParams) (*mcp.CallToolResult, []byte, error) {
	if jc, ok := g.Upstream.(JSONCaller); ok {
		return jc.CallToolJSON(ctx, s, params)
	}
	r, err := g.Upstream.CallTool(ctx, s, params)
	return r, nil, err
}

// cacheGet looks the call up in the cache, with the hit's JSON when the
// cache has it (JSONCache).
func (g *Gateway) cacheGet(ctx context.Context, key CacheKey) (*mcp.CallToolResult, []byte, error) {
	if jc, ok := g.Cache.(JSONCache); ok {
		return jc.GetJSON(ctx, key)
	}
	r, err := g.Cache.Get(ctx, key)
	return r, nil, err
}

// cacheKey says whether the call may be served from and stored in the
// cache: the cache is on, the tool is read-only (its readOnlyHint) or the
// registration lists it as cacheable.
func (g *Gateway) cacheKey(c *Call, s *Server, tool *mcp.Tool, canon []byte) (CacheKey, bool) {
	if g.Cache == nil || !g.Options.CacheEnabled {
		return CacheKey{}, false
	}
	readOnly := tool.Annotations != nil && tool.Annotations.ReadOnlyHint
	if !readOnly && !s.Cacheable(c.Tool) {
		return CacheKey{}, false
	}
	tenant := "anonymous"
	if c.Principal != nil {
		tenant = c.Principal.Tenant()
	}
	return CacheKey{Tenant: tenant, ServerID: s.ID, Version: strconv.FormatInt(s.UpdatedAt.UnixNano(), 36), Tool: c.Tool, Arguments: canon}, true
}

func (g *Gateway) ttl(s *Server) time.Duration {
	if s.CacheTTLSeconds > 0 {
		return time.Duration(s.CacheTTLSeconds) * time.Second
	}
	if g.Options.CacheTTL > 0 {
		return g.Options.CacheTTL
	}
	return 5 * time.Minute
}

// finish settles the admission, writes the record and logs.
func (g *Gateway) finish(ctx context.Context, c *Call, rec *Record, res *Result, err error) {
	if res != nil {
		rec.Violations, rec.Flagged, rec.CostUSD = res.Violations, res.Flagged, res.CostUSD
		if res.Outcome != "" {
			rec.Outcome = res.Outcome
		}
	}
	if c.Admission != nil {
		c.Admission.Settle(context.WithoutCancel(ctx), rec.CostUSD)
	}
	rec.Status = 200
	if err != nil {
		e := apierr.From(err)
		rec.Status, rec.Error = e.Status(), e.Message
		if rec.Outcome == "" || rec.Outcome == OutcomeOK {
			rec.Outcome = OutcomeError
		}
	}
	if g.Recorder != nil {
		g.Recorder.RecordToolCall(rec)
	}
}

func (g *Gateway) logger() *slog.Logger {
	if g.Options.Logger != nil {
		return g.Options.Logger
	}
	return slog.Default()
}

// ServerError maps a failure to find registration id: unknown is 404,
// anything else the registry's failure (503).
func ServerError(id string, err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierr.Newf(apierr.NotFound, "unknown_server", "no MCP server %q is registered", id)
	}
	return apierr.Wrap(apierr.Unavailable, "registry_unavailable", "the MCP server registry could not be read", err)
}

// upstreamError maps a failure to reach or use the upstream server; its
// message never carries the server's answer or credential.
func upstreamError(err error) error {
	var e *apierr.Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return apierr.Wrap(apierr.UpstreamTimeout, "tool_timeout", "the tool server did not answer in time", err)
	}
	if errors.Is(err, context.Canceled) {
		return apierr.Wrap(apierr.ClientClosed, "client_closed_request", "the caller went away", err)
	}
	return apierr.Wrap(apierr.UpstreamError, "tool_server_error", "the tool server failed", err)
}
