// Package clientip tells the address a request came from when svc runs
// behind reverse proxies or load balancers: the TCP peer, unless the peer is
// a trusted proxy (SVC_TRUSTED_PROXIES), in which case the right-most
// address of X-Forwarded-For that is not itself a trusted proxy. Addresses a
// client wrote into the header before the first trusted proxy are never
// believed, so a caller cannot claim an address by sending the header.
// It imports only the standard library.
package clientip

import (
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// maxHops bounds the X-Forwarded-For entries read.
const maxHops = 32

// Resolver finds a request's client address.
type Resolver struct {
	// Proxies are the trusted proxies' networks; empty trusts none (the
	// TCP peer is the client).
	Proxies []netip.Prefix
}

// Addr is the request's client address; the zero Addr when even the peer's
// cannot be read.
func (r Resolver) Addr(req *http.Request) netip.Addr {
	addr := peer(req.RemoteAddr)
	if !r.trusts(addr) {
		return addr
	}
	hops := forwarded(req.Header.Values("X-Forwarded-For"))
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(hops[i])
		if err != nil {
			return addr // a malformed hop: the last trusted one is all we know
		}
		addr = a.Unmap()
		if !r.trusts(addr) {
			return addr
		}
	}
	return addr
}

func (r Resolver) trusts(a netip.Addr) bool {
	for _, p := range r.Proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// peer parses a RemoteAddr ("ip:port", or an address alone).
func peer(remote string) netip.Addr {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, _ := netip.ParseAddr(host)
	return a.Unmap()
}

// forwarded splits the header's values into hops, left to right, keeping
// the right-most maxHops.
func forwarded(values []string) []string {
	var hops []string
	for _, v := range values {
		for h := range strings.SplitSeq(v, ",") {
			if h = strings.TrimSpace(h); h != "" {
				hops = append(hops, h)
			}
		}
	}
	if len(hops) > maxHops {
		hops = hops[len(hops)-maxHops:]
	}
	return hops
}
