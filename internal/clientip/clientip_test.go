package clientip_test

import (
	"net/http"
	"net/netip"
	"testing"

	"github.com/svc-gateway/svc/internal/clientip"
)

func TestAddr(t *testing.T) {
	r := clientip.Resolver{Proxies: []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}}
	for _, c := range []struct {
		name, remote string
		xff          []string
		want         string
	}{
		{"direct, header ignored", "203.0.113.9:5000", []string{"10.1.1.1"}, "203.0.113.9"},
		{"through a trusted proxy", "10.0.0.2:5000", []string{"198.51.100.7"}, "198.51.100.7"},
		{"a spoofed left-most entry", "10.0.0.2:5000", []string{"10.9.9.9, 198.51.100.7"}, "198.51.100.7"},
		{"two trusted hops", "10.0.0.2:5000", []string{"198.51.100.7, 10.0.0.3"}, "198.51.100.7"},
		{"several header lines", "10.0.0.2:5000", []string{"1.2.3.4", "198.51.100.7"}, "198.51.100.7"},
		{"only trusted hops", "10.0.0.2:5000", []string{"10.0.0.5"}, "10.0.0.5"},
		{"no header", "10.0.0.2:5000", nil, "10.0.0.2"},
		{"a malformed hop", "10.0.0.2:5000", []string{"198.51.100.7, nonsense"}, "10.0.0.2"},
		{"IPv4 in IPv6", "[::ffff:203.0.113.9]:1", nil, "203.0.113.9"},
	} {
		req, _ := http.NewRequest("GET", "/", nil)
		req.RemoteAddr = c.remote
		for _, v := range c.xff {
			req.Header.Add("X-Forwarded-For", v)
		}
		if got := r.Addr(req).String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	// No trusted proxies: always the peer.
	req, _ := http.NewRequest("GET", "/", nil)
	req.RemoteAddr, req.Header["X-Forwarded-For"] = "10.0.0.2:1", []string{"1.2.3.4"}
	if got := (clientip.Resolver{}).Addr(req).String(); got != "10.0.0.2" {
		t.Errorf("no proxies: %s", got)
	}
}
