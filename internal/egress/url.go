package egress

import (
	"context"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
)

// maxAddrs bounds the addresses of one name svc considers.
const maxAddrs = 64

// CheckURL checks a URL a caller supplied: an absolute http or https URL
// without user information, whose host is an allowed address or a name
// every address of which is allowed. A refusal wraps ErrForbidden; a name
// that does not resolve is a *net.DNSError (wrapped). The check is repeated
// at every connection by Transport, so a name that resolves elsewhere
// later is refused then.
func (p Policy) CheckURL(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("%w: not a URL", ErrForbidden)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return fmt.Errorf("%w: only http and https URLs are allowed", ErrForbidden)
	}
	if u.User != nil {
		return fmt.Errorf("%w: a URL must not carry user information", ErrForbidden)
	}
	host := u.Hostname()
	if host == "" {
		return fmt.Errorf("%w: the URL has no host", ErrForbidden)
	}
	_, err = p.resolve(ctx, host)
	return err
}

// resolve returns the addresses svc would connect to for host, every one
// of them allowed, or the reason it may not.
func (p Policy) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	lit, isLiteral, err := literal(host)
	if err != nil {
		return nil, err
	}
	if isLiteral {
		if !p.Allowed(lit) {
			return nil, refuse(host, "internal address "+lit.String()+" is not allowed")
		}
		return []netip.Addr{lit}, nil
	}
	as, err := p.resolver().LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("egress: resolve %s: %w", host, err)
	}
	if len(as) == 0 {
		return nil, fmt.Errorf("egress: resolve %s: no addresses", host)
	}
	if len(as) > maxAddrs {
		as = as[:maxAddrs]
	}
	for _, a := range as {
		if !p.Allowed(a) {
			return nil, refuse(host, "resolves to internal address "+a.WithZone("").String()+", which is not allowed")
		}
	}
	return as, nil
}

// literal reads host as an IP address in any form a URL parser or the C
// library would take as one: IPv6 (a zone allowed), dotted IPv4, and the
// legacy IPv4 numbers (2852039166, 0xA9FEA9FE, 0251.0376.0251.0376,
// 169.254.43518, with an optional trailing dot). A name whose last label
// is a number but that is not such an address is refused: no DNS name
// ends so, and resolvers disagree on it.
func literal(host string) (netip.Addr, bool, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return a, true, nil
	}
	h := strings.TrimSuffix(host, ".")
	parts := strings.Split(h, ".")
	last := parts[len(parts)-1]
	if _, ok := ipv4Part(last); !ok {
		return netip.Addr{}, false, nil
	}
	a, ok := legacyIPv4(parts)
	if !ok {
		return netip.Addr{}, false, refuse(host, "a host ending in a number must be an IPv4 address")
	}
	return a, true, nil
}

// legacyIPv4 parses 1 to 4 numeric parts as inet_aton and the WHATWG URL
// standard do: each part decimal, octal (leading 0) or hex (0x); the last
// part fills the bytes that remain.
func legacyIPv4(parts []string) (netip.Addr, bool) {
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, s := range parts {
		n, ok := ipv4Part(s)
		if !ok {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v = v<<8 | n
			continue
		}
		rest := 4 - i // bytes the last part fills
		if n >= 1<<(8*rest) {
			return netip.Addr{}, false
		}
		v = v<<(8*rest) | n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// ipv4Part parses one part of a legacy IPv4 address.
func ipv4Part(s string) (uint64, bool) {
	if s == "" || len(s) > 34 {
		return 0, false
	}
	base := 10
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		base, s = 16, s[2:]
		if s == "" {
			return 0, true // "0x" is 0 to the URL standard
		}
	case len(s) > 1 && s[0] == '0':
		base, s = 8, s[1:]
	}
	n, err := strconv.ParseUint(s, base, 64) // no sign, no '_' with a base given
	return n, err == nil
}
