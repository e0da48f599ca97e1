package egress_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/egress"
)

func TestAllowed(t *testing.T) {
	tests := []struct {
		addr          string
		want, private bool // without and with AllowPrivate
	}{
		{"93.184.216.34", true, true},
		{"8.8.8.8", true, true},
		{"2606:4700:4700::1111", true, true},
		{"1.1.1.1", true, true},
		{"127.0.0.1", false, true},
		{"127.1.2.3", false, true},
		{"::1", false, true},
		{"0.0.0.0", false, true},
		{"0.1.2.3", false, true},
		{"::", false, true},
		{"10.0.0.1", false, true},
		{"172.16.0.1", false, true},
		{"172.31.255.255", false, true},
		{"172.32.0.1", true, true},
		{"192.168.1.1", false, true},
		{"100.64.0.1", false, true},
		{"100.127.255.255", false, true},
		{"100.128.0.1", true, true},
		{"169.254.1.1", false, true},
		{"fe80::1", false, true},
		{"fe80::1%eth0", false, true},
		{"fc00::1", false, true},
		{"fd12:3456::1", false, true},
		{"224.0.0.1", false, true},
		{"239.255.255.250", false, true},
		{"ff02::1", false, true},
		{"255.255.255.255", false, true},
		{"240.0.0.1", false, true},
		{"192.0.2.1", false, true},
		{"198.18.0.1", false, true},
		{"::ffff:127.0.0.1", false, true},
		{"::ffff:10.0.0.1", false, true},
		{"::ffff:8.8.8.8", true, true},
		{"::127.0.0.1", false, true},
		{"64:ff9b::7f00:1", false, true},         // NAT64 of 127.0.0.1
		{"64:ff9b::808:808", true, true},         // NAT64 of 8.8.8.8
		{"2002:7f00:1::1", false, true},          // 6to4 of 127.0.0.1
		{"2002:808:808::1", true, true},          // 6to4 of 8.8.8.8
		{"2001:0:4136:e378::1", false, true},     // Teredo
		{"2001:db8::1", false, true},             // documentation
		{"169.254.169.254", false, false},        // metadata: never
		{"::ffff:169.254.169.254", false, false}, // mapped
		{"64:ff9b::a9fe:a9fe", false, false},     // NAT64 of the metadata address
		{"2002:a9fe:a9fe::", false, false},       // 6to4 of it
		{"169.254.170.2", false, false},
		{"fd00:ec2::254", false, false},
		{"100.100.100.200", false, false},
	}
	for _, tt := range tests {
		a := netip.MustParseAddr(tt.addr)
		if got := (egress.Policy{}).Allowed(a); got != tt.want {
			t.Errorf("Allowed(%s) = %v, want %v", tt.addr, got, tt.want)
		}
		if got := (egress.Policy{AllowPrivate: true}).Allowed(a); got != tt.private {
			t.Errorf("AllowPrivate: Allowed(%s) = %v, want %v", tt.addr, got, tt.private)
		}
	}
	if (egress.Policy{AllowPrivate: true}).Allowed(netip.Addr{}) {
		t.Error("Allowed(zero Addr) = true, want false")
	}
}

// fakeResolver answers from a table and counts lookups; a name not in the
// table fails the test (numeric hosts must never reach DNS).
type fakeResolver struct {
	t     *testing.T
	mu    sync.Mutex
	names map[string][]string // name → answers, one per lookup (the last repeats)
	n     map[string]int
}

func newResolver(t *testing.T, names map[string][]string) *fakeResolver {
	return &fakeResolver{t: t, names: names, n: map[string]int{}}
}

func (r *fakeResolver) LookupNetIP(_ context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	answers, ok := r.names[host]
	if !ok {
		r.t.Errorf("unexpected lookup of %q", host)
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	if network != "ip" {
		r.t.Errorf("lookup network = %q, want ip", network)
	}
	i := min(r.n[host], len(answers)-1)
	r.n[host]++
	return []netip.Addr{netip.MustParseAddr(answers[i])}, nil
}

func (r *fakeResolver) lookups(host string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.n[host]
}

func TestCheckURL(t *testing.T) {
	res := newResolver(t, map[string][]string{
		"mcp.example.com":          {"93.184.216.34"},
		"localhost":                {"127.0.0.1"},
		"metadata.google.internal": {"169.254.169.254"},
		"internal.corp":            {"10.1.2.3"},
	})
	p := egress.Policy{Resolver: res}
	priv := egress.Policy{Resolver: res, AllowPrivate: true}
	tests := []struct {
		url           string
		want, private bool // allowed without and with AllowPrivate
	}{
		{"https://mcp.example.com/mcp", true, true},
		{"http://mcp.example.com:8080/", true, true},
		{"https://93.184.216.34/", true, true},
		{"http://[2606:4700:4700::1111]/", true, true},
		{"ftp://mcp.example.com/", false, false},
		{"file:///etc/passwd", false, false},
		{"gopher://mcp.example.com/", false, false},
		{"https://user:pw@mcp.example.com/", false, false},
		{"https:///path", false, false},
		{"mcp.example.com/mcp", false, false},
		{"http://localhost:8080/", false, true},
		{"http://internal.corp/", false, true},
		{"http://127.0.0.1/", false, true},
		{"http://[::1]:3000/", false, true},
		{"http://0.0.0.0/", false, true},
		{"http://0/", false, true},
		{"http://2130706433/", false, true}, // 127.0.0.1 as one decimal number
		{"http://0x7f000001/", false, true}, // hex
		{"http://0177.0.0.1/", false, true}, // octal
		{"http://127.1/", false, true},      // short form
		{"http://[fe80::1%25eth0]/", false, true},
		// The metadata endpoints, in every spelling the URL parser takes:
		// refused even with AllowPrivate.
		{"http://169.254.169.254/latest/meta-data/", false, false},
		{"http://metadata.google.internal/computeMetadata/v1/", false, false},
		{"http://2852039166/", false, false},
		{"http://0xA9FEA9FE/", false, false},
		{"http://0xa9.0xfe.0xa9.0xfe/", false, false},
		{"http://0251.0376.0251.0376/", false, false},
		{"http://169.254.43518/", false, false},
		{"http://169.16689662/", false, false},
		{"http://169.254.169.254./", false, false},
		{"http://[::ffff:169.254.169.254]/", false, false},
		{"http://[::ffff:a9fe:a9fe]/", false, false},
		{"http://[64:ff9b::a9fe:a9fe]/", false, false},
		{"http://[fd00:ec2::254]/latest/meta-data/", false, false},
		{"http://100.100.100.200/latest/meta-data/", false, false},
		{"http://[fd00:ec2::254%25eth0]/", false, false},
		// Names that end in a number but are no address: refused.
		{"http://example.123/", false, false},
		{"http://1.2.3.4.5/", false, false},
		{"http://256.1.1.1/", false, false},
	}
	for _, tt := range tests {
		for _, c := range []struct {
			p    egress.Policy
			want bool
		}{{p, tt.want}, {priv, tt.private}} {
			err := c.p.CheckURL(t.Context(), tt.url)
			if c.want && err != nil {
				t.Errorf("AllowPrivate=%v: CheckURL(%q) = %v, want nil", c.p.AllowPrivate, tt.url, err)
			}
			if !c.want && !errors.Is(err, egress.ErrForbidden) {
				t.Errorf("AllowPrivate=%v: CheckURL(%q) = %v, want ErrForbidden", c.p.AllowPrivate, tt.url, err)
			}
		}
	}
}

func TestCheckURLUnresolvable(t *testing.T) {
	p := egress.Policy{Resolver: resolverFunc(func(_ context.Context, _, host string) ([]netip.Addr, error) {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	})}
	err := p.CheckURL(t.Context(), "https://nowhere.invalid/")
	var dnsErr *net.DNSError
	if !errors.As(err, &dnsErr) || errors.Is(err, egress.ErrForbidden) {
		t.Errorf("CheckURL(unresolvable) = %v, want a *net.DNSError, not ErrForbidden", err)
	}
}

type resolverFunc func(ctx context.Context, network, host string) ([]netip.Addr, error)

func (f resolverFunc) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	return f(ctx, network, host)
}

// TestRebinding: a name that resolved to a public address when checked and
// to loopback when dialled is refused at the dial.
func TestRebinding(t *testing.T) {
	var hit atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { hit.Store(true) }))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())

	res := newResolver(t, map[string][]string{"rebind.example.com": {"93.184.216.34", "127.0.0.1"}})
	p := egress.Policy{Resolver: res}
	u := "http://rebind.example.com:" + port + "/"
	if err := p.CheckURL(t.Context(), u); err != nil {
		t.Fatalf("CheckURL (first lookup, public) = %v, want nil", err)
	}
	resp, err := p.Client(5 * time.Second).Get(u)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("Get after rebinding to 127.0.0.1: status %d, want an error", resp.StatusCode)
	}
	if !errors.Is(err, egress.ErrForbidden) {
		t.Errorf("Get after rebinding = %v, want ErrForbidden", err)
	}
	var uerr *url.Error
	if !errors.As(err, &uerr) {
		t.Errorf("Get error %T, want *url.Error", err)
	}
	if hit.Load() {
		t.Error("the loopback server was reached")
	}
	if n := res.lookups("rebind.example.com"); n != 2 {
		t.Errorf("lookups = %d, want 2 (check, then dial)", n)
	}
}

// TestDialRefusesLiteral: the transport refuses an internal address written
// in the URL itself, and its legacy spellings.
func TestDialRefusesLiteral(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		t.Error("the loopback server was reached")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c := egress.Policy{Resolver: newResolver(t, nil)}.Client(5 * time.Second)
	for _, host := range []string{"127.0.0.1", "2130706433", "0x7f000001", "127.1", "[::ffff:127.0.0.1]"} {
		resp, err := c.Get("http://" + host + ":" + port + "/")
		if err == nil {
			resp.Body.Close()
			t.Errorf("Get(%s) succeeded, want ErrForbidden", host)
			continue
		}
		if !errors.Is(err, egress.ErrForbidden) {
			t.Errorf("Get(%s) = %v, want ErrForbidden", host, err)
		}
	}
}

func TestAllowPrivate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()
	resp, err := egress.Policy{AllowPrivate: true}.Client(5 * time.Second).Get(srv.URL)
	if err != nil {
		t.Fatalf("AllowPrivate: Get(%s) = %v, want 200", srv.URL, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("status = %d, want 200", resp.StatusCode)
	}
	// The same server through a name resolved by the policy's resolver.
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	p := egress.Policy{AllowPrivate: true, Resolver: newResolver(t, map[string][]string{"mcp.internal": {"127.0.0.1"}})}
	resp, err = p.Client(5 * time.Second).Get("http://mcp.internal:" + port + "/")
	if err != nil {
		t.Fatalf("AllowPrivate: Get(mcp.internal) = %v, want 200", err)
	}
	resp.Body.Close()
	// And without AllowPrivate, refused.
	resp, err = egress.Policy{}.Client(5 * time.Second).Get(srv.URL)
	if err == nil {
		resp.Body.Close()
		t.Fatal("default policy reached 127.0.0.1")
	}
	if !errors.Is(err, egress.ErrForbidden) {
		t.Errorf("default policy: Get(%s) = %v, want ErrForbidden", srv.URL, err)
	}
}

func TestRedirectNotFollowed(t *testing.T) {
	var followed atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/start", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	mux.HandleFunc("/local", func(w http.ResponseWriter, r *http.Request) { followed.Store(true) })
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/local", http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	c := egress.Policy{AllowPrivate: true}.Client(5 * time.Second)
	for _, path := range []string{"/start", "/hop"} {
		resp, err := c.Get(srv.URL + path)
		if err != nil {
			t.Fatalf("Get(%s) = %v, want the 302", path, err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusFound {
			t.Errorf("Get(%s) status = %d, want 302", path, resp.StatusCode)
		}
	}
	if followed.Load() {
		t.Error("a redirect was followed")
	}
}

func TestNoProxyFromEnvironment(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://proxy.invalid:3128")
	t.Setenv("HTTPS_PROXY", "http://proxy.invalid:3128")
	tr := egress.Policy{}.Transport()
	if tr.Proxy != nil {
		t.Error("Transport().Proxy is set, want nil")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer srv.Close()
	resp, err := egress.Policy{AllowPrivate: true}.Client(5 * time.Second).Get(srv.URL)
	if err != nil {
		t.Fatalf("Get with HTTP_PROXY set = %v, want a direct connection", err)
	}
	resp.Body.Close()
}
