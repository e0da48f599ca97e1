package egress

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// ErrInsecureURL: a URL svc is configured with is not https (http is
// allowed only to a loopback host), not absolute, or carries credentials.
var ErrInsecureURL = errors.New("must be an absolute https URL without credentials (http only to a loopback host)")

// CheckSecureURL is the rule for the addresses an admin configures svc to
// fetch from or send to (identity providers, metadata, callbacks,
// webhooks): absolute, no user info, https — or http to a loopback host,
// for local development and tests. It does not resolve the host: the
// egress Transport checks the address at connect time.
func CheckSecureURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil, u.Host == "", u.Opaque != "", u.User != nil:
		return ErrInsecureURL
	case strings.EqualFold(u.Scheme, "https"):
		return nil
	case strings.EqualFold(u.Scheme, "http") && IsLoopbackHost(u.Hostname()):
		return nil
	}
	return ErrInsecureURL
}

// IsLoopbackHost reports whether host (a URL's hostname, no port) is
// localhost or a loopback address: 127.0.0.0/8 or ::1 as an address, never
// a name that merely starts with "127.".
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
