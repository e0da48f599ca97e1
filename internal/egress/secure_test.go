package egress_test

import (
	"testing"

	"github.com/svc-gateway/svc/internal/egress"
)

func TestCheckSecureURL(t *testing.T) {
	for raw, ok := range map[string]bool{
		"https://idp.example.com/md":         true,
		"HTTPS://idp.example.com":            true,
		"http://127.0.0.1:8080/cb":           true,
		"http://localhost/cb":                true,
		"http://[::1]:9/x":                   true,
		"http://127.evil.example/md":         false, // a name, not an address
		"http://localhost.evil.example/md":   false,
		"http://idp.example.com/md":          false,
		"https://user:pw@idp.example.com/md": false,
		"/relative":                          false,
		"ftp://idp.example.com":              false,
		"https:opaque":                       false,
		"::":                                 false,
	} {
		if got := egress.CheckSecureURL(raw) == nil; got != ok {
			t.Errorf("CheckSecureURL(%q) ok = %v, want %v", raw, got, ok)
		}
	}
}
