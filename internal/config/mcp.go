package config

import (
	"net/netip"
	"strings"
	"time"
)

// MCPSettings configure the tool gateway (MCP).
type MCPSettings struct {
	// CacheEnabled (MCP_GATEWAY_ENABLED) turns the tool-call cache on.
	CacheEnabled bool
	// CacheTTL (SVC_MCP_CACHE_TTL) is the cache's TTL for servers that set
	// none.
	CacheTTL time.Duration
	// StdioEnabled (SVC_MCP_STDIO_ENABLED) allows stdio servers: a program
	// run on the gateway host.
	StdioEnabled bool
	// AllowPrivate (SVC_MCP_ALLOW_PRIVATE) lets servers live on loopback,
	// link-local and private addresses (the cloud metadata address too).
	AllowPrivate bool
	// TrustedCIDRs (SVC_MCP_TRUSTED_CIDRS, comma-separated) may reach servers
	// registered with available_on_public_internet false.
	TrustedCIDRs []netip.Prefix
	// LogArguments (SVC_MCP_LOG_ARGUMENTS) keeps a call's arguments in its
	// audit entry; else their size and hash only.
	LogArguments bool
	// Timeout (SVC_MCP_TIMEOUT) bounds one upstream tool call.
	Timeout time.Duration
	// MaxResultBytes (SVC_MCP_MAX_RESULT_BYTES) bounds one upstream answer.
	MaxResultBytes int64
	// OAuthRedirectURL (SVC_MCP_OAUTH_REDIRECT_URL) is the OAuth callback
	// as an admin's browser reaches it (https://svc.example.com/api/mcp/auth/callback);
	// empty means http://127.0.0.1:<PROXY_PORT>/api/mcp/auth/callback, which
	// serves an admin on the gateway's host only.
	OAuthRedirectURL string
}

func (p *parser) mcp() MCPSettings {
	m := MCPSettings{
		CacheEnabled:     p.boolean("MCP_GATEWAY_ENABLED", false),
		CacheTTL:         p.duration("SVC_MCP_CACHE_TTL", 5*time.Minute, time.Second),
		StdioEnabled:     p.boolean("SVC_MCP_STDIO_ENABLED", false),
		AllowPrivate:     p.boolean("SVC_MCP_ALLOW_PRIVATE", false),
		LogArguments:     p.boolean("SVC_MCP_LOG_ARGUMENTS", false),
		Timeout:          p.duration("SVC_MCP_TIMEOUT", 60*time.Second, 100*time.Millisecond),
		MaxResultBytes:   int64(p.intRange("SVC_MCP_MAX_RESULT_BYTES", 10<<20, 1<<10, 1<<30)),
		OAuthRedirectURL: p.str("SVC_MCP_OAUTH_REDIRECT_URL", ""),
	}
	m.TrustedCIDRs = p.prefixes("SVC_MCP_TRUSTED_CIDRS")
	return m
}

// prefixes reads a comma-separated list of CIDRs or single addresses.
func (p *parser) prefixes(name string) []netip.Prefix { return p.prefixesOf(name, p.list(name)) }

// prefixesOf parses items (CIDRs or single addresses) of setting name.
func (p *parser) prefixesOf(name string, items []string) []netip.Prefix {
	var out []netip.Prefix
	for _, c := range items {
		if c = strings.TrimSpace(c); c == "" {
			continue
		}
		pfx, err := netip.ParsePrefix(c)
		if err != nil {
			a, aerr := netip.ParseAddr(c)
			if aerr != nil {
				p.bad(name, "not a CIDR or address: "+c)
				continue
			}
			pfx = netip.PrefixFrom(a, a.BitLen())
		}
		out = append(out, pfx.Masked())
	}
	return out
}
