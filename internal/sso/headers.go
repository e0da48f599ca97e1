package sso

import (
	"net/http"
	"net/netip"
	"slices"
	"strings"
)

// The trusted proxy headers: the identity ones in priority order, then the
// supplementary ones (the first of each pair that is set wins).
var (
	IdentityHeaders = []string{"X-Svc-User-Id", "X-Remote-User", "X-Forwarded-User", "X-Authenticated-User", "X-Username"}
	emailHeaders    = []string{"X-Svc-User-Email", "X-User-Email"}
	groupsHeaders   = []string{"X-Svc-User-Groups", "X-User-Groups"}
	deptHeaders     = []string{"X-Svc-User-Department", "X-User-Department"}
	nameHeaders     = []string{"X-User-Name", "X-Display-Name"}
)

// Bounds on what the headers may carry.
const (
	maxHeaderValue = 1024
	MaxGroups      = 1000
)

// allHeaders is every header StripHeaders removes.
var allHeaders = func() []string {
	var all []string
	for _, l := range [][]string{IdentityHeaders, emailHeaders, groupsHeaders, deptHeaders, nameHeaders} {
		all = append(all, l...)
	}
	return all
}()

// TrustedHeaders is every header sign-in takes from a trusted proxy (and
// StripHeaders removes): an authenticating proxy in front of svc must clear
// each of them on requests from clients (deploy/nginx/svc.conf does, checked
// by deploytest).
func TrustedHeaders() []string { return slices.Clone(allHeaders) }

// StripHeaders removes every identity header from h.
func StripHeaders(h http.Header) {
	for _, k := range allHeaders {
		h.Del(k)
	}
}

// HasHeaders reports whether h carries an identity header.
func HasHeaders(h http.Header) bool {
	for _, k := range IdentityHeaders {
		if h.Get(k) != "" {
			return true
		}
	}
	return false
}

// FromHeaders reads the identity an authenticating proxy set; false when
// no identity header is set or its value is unusable. Only call it for a
// request from a trusted proxy (Proxies.Trusts).
func FromHeaders(h http.Header) (Identity, bool) {
	user := first(h, IdentityHeaders)
	if user == "" {
		return Identity{}, false
	}
	id := Identity{Username: ShortName(user), Email: first(h, emailHeaders), Department: first(h, deptHeaders),
		DisplayName: first(h, nameHeaders), Method: MethodProxy}
	if id.Username == "" {
		return Identity{}, false
	}
	if g := first(h, groupsHeaders); g != "" {
		for part := range strings.SplitSeq(g, ",") {
			if part = strings.TrimSpace(part); part != "" && len(id.Groups) < MaxGroups {
				id.Groups = append(id.Groups, part)
			}
		}
	}
	return id, true
}

// first is the first set, printable, bounded value of names.
func first(h http.Header, names []string) string {
	for _, n := range names {
		v := strings.TrimSpace(h.Get(n))
		if v != "" && len(v) <= maxHeaderValue && printable(v) {
			return v
		}
	}
	return ""
}

func printable(s string) bool {
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return false
		}
	}
	return true
}

// ShortName is a user name without its domain: the part before "@", and
// without a "DOMAIN\" prefix.
func ShortName(s string) string {
	if i := strings.IndexByte(s, '@'); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '\\'); i >= 0 {
		s = s[i+1:]
	}
	return strings.TrimSpace(s)
}

// Proxies are the authenticating proxies whose headers count
// (sso.trusted_proxy_cidrs); empty trusts none.
type Proxies []netip.Prefix

// Trusts reports whether the request's connecting address (the TCP peer,
// never a forwarded one) is a trusted proxy.
func (p Proxies) Trusts(r *http.Request) bool { return p.TrustsAddr(r.RemoteAddr) }

// TrustsAddr is Trusts for a RemoteAddr ("ip:port").
func (p Proxies) TrustsAddr(remoteAddr string) bool {
	if len(p) == 0 {
		return false
	}
	host := remoteAddr
	if i := strings.LastIndexByte(host, ':'); i >= 0 {
		host = host[:i]
	}
	a, err := netip.ParseAddr(strings.Trim(host, "[]"))
	if err != nil {
		return false
	}
	a = a.Unmap()
	for _, pfx := range p {
		if pfx.Contains(a) {
			return true
		}
	}
	return false
}

// Strip serves next with the identity headers removed from requests that
// do not come from a trusted proxy, silently, so they neither sign anyone
// in nor reach an upstream provider.
func (p Proxies) Strip(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if HasAnyHeader(r.Header) && !p.Trusts(r) {
			r = r.Clone(r.Context())
			StripHeaders(r.Header)
		}
		next.ServeHTTP(w, r)
	})
}

// HasAnyHeader reports whether h carries any header StripHeaders removes.
func HasAnyHeader(h http.Header) bool {
	for _, k := range allHeaders {
		if _, ok := h[k]; ok {
			return true
		}
	}
	return false
}
