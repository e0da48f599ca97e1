package sso_test

import (
	"net/http"
	"net/http/httptest"
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/sso"
)

func TestRoles(t *testing.T) {
	for _, c := range []struct {
		groups, patterns []string
		admin            bool
	}{
		{[]string{"eng", "Domain Admins"}, nil, true}, // a default admin group
		{[]string{"domain admins"}, nil, true},        // case-insensitive
		{[]string{"eng"}, nil, false},
		{[]string{"ai-platform-admins"}, []string{"*-admins"}, true},
		{[]string{"admins-of-nothing"}, []string{"*-admins"}, false},
		{[]string{"team-a-ops"}, []string{"team-*-ops"}, true},
		{[]string{"svc-Admins"}, []string{}, false}, // an empty list: nobody
		{[]string{"x"}, []string{"*"}, true},
		{nil, nil, false},
		{[]string{strings.Repeat("a", 500) + "b"}, []string{strings.Repeat("*a", 40) + "*c"}, false}, // no blow-up
	} {
		got := sso.Roles(c.groups, c.patterns)
		if slices.Contains(got, "admin") != c.admin || !slices.Contains(got, "user") {
			t.Errorf("Roles(%v, %v) = %v, want admin %v", c.groups, c.patterns, got, c.admin)
		}
	}
}

func TestFromHeaders(t *testing.T) {
	h := http.Header{}
	h.Set("X-Username", "low-priority")
	h.Set("X-Remote-User", `CORP\jdoe`)
	h.Set("X-User-Email", "jdoe@corp.example")
	h.Set("X-Svc-User-Groups", "eng, svc-Admins ,,ops")
	h.Set("X-User-Department", "R&D")
	h.Set("X-Display-Name", "J. Doe")
	id, ok := sso.FromHeaders(h)
	if !ok || id.Username != "jdoe" || id.Email != "jdoe@corp.example" || !slices.Equal(id.Groups, []string{"eng", "svc-Admins", "ops"}) ||
		id.Department != "R&D" || id.DisplayName != "J. Doe" || id.Method != sso.MethodProxy {
		t.Errorf("identity %+v %v", id, ok)
	}
	h.Set("X-Svc-User-Id", "alice@corp.example")
	if id, _ := sso.FromHeaders(h); id.Username != "alice" {
		t.Errorf("priority: %q, want x-svc-user-id's alice", id.Username)
	}
	for _, bad := range []string{"", "   ", "bad\x01name", strings.Repeat("a", 2000)} {
		if _, ok := sso.FromHeaders(http.Header{"X-Remote-User": {bad}}); ok {
			t.Errorf("identity from %q", bad)
		}
	}
}

// TestStrip: identity headers pass from a trusted proxy and are removed,
// silently, from anyone else.
func TestStrip(t *testing.T) {
	proxies := sso.Proxies{netip.MustParsePrefix("127.0.0.2/32"), netip.MustParsePrefix("fd00::/8")}
	var seen http.Header
	h := proxies.Strip(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { seen = r.Header }))
	for remote, kept := range map[string]bool{"127.0.0.2:4000": true, "127.0.0.1:4000": false, "[fd00::1]:80": true,
		"[::ffff:127.0.0.2]:80": true, "garbage": false} {
		req := httptest.NewRequest("GET", "/v1/models", nil)
		req.RemoteAddr = remote
		req.Header.Set("X-Remote-User", "mallory")
		req.Header.Set("X-User-Groups", "svc-Admins")
		req.Header.Set("X-Other", "kept")
		h.ServeHTTP(httptest.NewRecorder(), req)
		if (seen.Get("X-Remote-User") != "") != kept || (seen.Get("X-User-Groups") != "") != kept || seen.Get("X-Other") != "kept" {
			t.Errorf("from %s: headers %v, want identity headers kept=%v", remote, seen, kept)
		}
		if req.Header.Get("X-Remote-User") != "mallory" {
			t.Errorf("from %s: the inbound request was changed", remote)
		}
	}
	if (sso.Proxies{}).Trusts(httptest.NewRequest("GET", "/", nil)) {
		t.Error("an empty list trusts someone")
	}
}

func TestShortName(t *testing.T) {
	for in, want := range map[string]string{"a@b.c": "a", `DOM\u`: "u", "plain": "plain", "@x": ""} {
		if got := sso.ShortName(in); got != want {
			t.Errorf("ShortName(%q) = %q, want %q", in, got, want)
		}
	}
}
