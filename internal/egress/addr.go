package egress

import (
	"net/netip"
)

// internal are the ranges a URL supplied by a caller may not reach unless
// the operator says its servers are internal (Policy.AllowPrivate): this
// host, private and shared networks, link-local, multicast, and the
// special-purpose ranges of the IANA registries that are not globally
// reachable.
var internal = prefixes(
	// IPv4
	"0.0.0.0/8",       // "this network" (0.0.0.0 reaches the local host)
	"10.0.0.0/8",      // private
	"100.64.0.0/10",   // shared address space (CGNAT), Alibaba's metadata
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local, the clouds' metadata
	"172.16.0.0/12",   // private
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // documentation
	"192.88.99.0/24",  // 6to4 relay anycast (deprecated)
	"192.168.0.0/16",  // private
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation
	"203.0.113.0/24",  // documentation
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, and 255.255.255.255 broadcast
	"::/96",           // unspecified, loopback, IPv4-compatible (deprecated)
	"64:ff9b:1::/48",  // local-use NAT64
	"100::/64",        // discard-only
	"2001::/32",       // Teredo (embeds another host's address)
	"2001:db8::/32",   // documentation
	"fc00::/7",        // unique local (ULA), AWS's IPv6 metadata
	"fe80::/10",       // link-local
	"fec0::/10",       // site-local (deprecated)
	"ff00::/8",        // multicast
	"::ffff:0:0:0/96", // IPv4-translated (SIIT)
	// 6to4 (2002::/16) and NAT64 (64:ff9b::/96) are decided by the IPv4
	// address they embed (see Allowed).
)

// metadata are the cloud instance-metadata and credential endpoints. They
// are refused even with AllowPrivate: an MCP server never lives there, and
// they hand out the host's credentials.
var metadata = addrs(
	"169.254.169.254", // AWS, GCP, Azure, OCI, DigitalOcean, OpenStack
	"169.254.170.2",   // AWS ECS task credentials
	"169.254.170.23",  // AWS EKS pod identity
	"fd00:ec2::254",   // AWS IMDS over IPv6
	"fd00:ec2::23",    // AWS EKS pod identity over IPv6
	"100.100.100.200", // Alibaba Cloud
)

var (
	sixToFour = netip.MustParsePrefix("2002::/16")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
)

func prefixes(ss ...string) []netip.Prefix {
	ps := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		ps[i] = netip.MustParsePrefix(s)
	}
	return ps
}

func addrs(ss ...string) map[netip.Addr]bool {
	m := make(map[netip.Addr]bool, len(ss))
	for _, s := range ss {
		m[netip.MustParseAddr(s)] = true
	}
	return m
}

// Allowed reports whether svc may connect to a. Without AllowPrivate it
// refuses loopback, unspecified, private (RFC 1918, ULA fc00::/7), shared
// (CGNAT 100.64/10), link-local (169.254/16, fe80::/10), multicast,
// broadcast, reserved and documentation ranges, and every IPv6 form that
// carries such an IPv4 address (IPv4-mapped ::ffff:a.b.c.d, NAT64
// 64:ff9b::a.b.c.d, 6to4 2002:aabb:ccdd::). The cloud metadata endpoints
// (169.254.169.254, 169.254.170.2, 169.254.170.23, fd00:ec2::254,
// fd00:ec2::23, 100.100.100.200) are refused even with AllowPrivate.
func (p Policy) Allowed(a netip.Addr) bool {
	if !a.IsValid() {
		return false
	}
	a = a.WithZone("").Unmap()
	if v4, ok := embedded(a); ok {
		return p.Allowed(v4)
	}
	if metadata[a] {
		return false
	}
	if p.AllowPrivate {
		return true
	}
	if a.IsLoopback() || a.IsUnspecified() || a.IsPrivate() || a.IsMulticast() ||
		a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() || a.IsInterfaceLocalMulticast() {
		return false
	}
	for _, pfx := range internal {
		if pfx.Contains(a) {
			return false
		}
	}
	return true
}

// embedded returns the IPv4 address a 6to4 or NAT64 address routes to.
func embedded(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case !a.Is6():
		return netip.Addr{}, false
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]}), true
	case sixToFour.Contains(a):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}
