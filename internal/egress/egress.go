// Package egress is svc's outbound HTTP to addresses a caller supplied (an
// MCP server's base_url, later webhooks and RAG sources): a Policy says
// which addresses svc may connect to, checks a URL when it is registered
// (CheckURL), and gives the Transport and Client that enforce it again at
// every connection, on the address actually dialled, so that a name which
// resolves elsewhere later (DNS rebinding) cannot reach svc's own network.
// Redirects are not followed and proxies from the environment are not
// used. It imports nothing of svc; any package may import it.
package egress

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"time"
)

// ErrForbidden is wrapped by every refusal of a URL or an address: the
// caller's mistake (a 400 at registration, a clear error at call time),
// not svc's failure.
var ErrForbidden = errors.New("egress: address not allowed")

// DefaultDialTimeout bounds one connection attempt when Policy.DialTimeout
// is 0.
const DefaultDialTimeout = 10 * time.Second

// Resolver resolves host names; *net.Resolver implements it.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Policy is where outbound connections may go. The zero value refuses
// every internal address (see Allowed) and resolves with
// net.DefaultResolver.
type Policy struct {
	// AllowPrivate admits loopback, private, link-local and the other
	// internal ranges: the operator's "my MCP servers are internal" switch.
	// The cloud metadata endpoints stay refused.
	AllowPrivate bool
	// Resolver resolves host names; nil is net.DefaultResolver.
	Resolver Resolver
	// DialTimeout bounds one connection attempt; 0 is DefaultDialTimeout.
	DialTimeout time.Duration
}

func (p Policy) resolver() Resolver {
	if p.Resolver == nil {
		return net.DefaultResolver
	}
	return p.Resolver
}

func (p Policy) dialTimeout() time.Duration {
	if p.DialTimeout <= 0 {
		return DefaultDialTimeout
	}
	return p.DialTimeout
}

// forbidden is the error of a refused host or address.
type forbidden struct {
	host   string
	reason string
}

func (e *forbidden) Error() string {
	return "egress: " + e.host + ": " + e.reason
}

func (e *forbidden) Unwrap() error { return ErrForbidden }

func refuse(host, reason string) error { return &forbidden{host: host, reason: reason} }
