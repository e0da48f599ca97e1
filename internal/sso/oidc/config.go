package oidc

import (
	"github.com/svc-gateway/svc/internal/egress"

	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
	"unicode"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Limits and defaults.
const (
	// MaxTokenBytes bounds an ID token; a longer one is refused unread.
	MaxTokenBytes = 16 << 10
	// MaxGroups bounds the groups claim; more is refused (ReasonClaims).
	MaxGroups = 1000
	// MaxClaimLen bounds each identity string claim and each group.
	MaxClaimLen = 256
	// MaxSkew is the largest clock skew allowed on exp and nbf; it is also
	// the default.
	MaxSkew = time.Minute
	// DefaultRefreshFloor is the least time between two fetches of the JWKS
	// (and between two failed discoveries).
	DefaultRefreshFloor = time.Minute
	// EntraIssuerFormat is the issuer a bare tenant id stands for.
	EntraIssuerFormat = "https://login.microsoftonline.com/%s/v2.0"

	maxBodyBytes = 1 << 20 // any response from the IdP (discovery, JWKS, token)
	maxJWKSKeys  = 100
	keysMaxAge   = time.Hour // cached keys older than this are refetched (floor permitting)
	fetchTimeout = 10 * time.Second
	maxClientID  = 256
	maxIdPName   = 64
)

// Config configures a Verifier. Issuer, or TenantID, and ClientID are
// required; the rest have defaults.
//
// The issuer rule: Issuer, when set, is the issuer, compared with the
// token's iss exactly (no trailing-slash or case folding) and used for
// discovery at Issuer + "/.well-known/openid-configuration". When Issuer is
// empty, TenantID (a GUID or a verified domain) stands for Microsoft Entra
// ID's v2.0 issuer, fmt.Sprintf(EntraIssuerFormat, TenantID); the
// multi-tenant aliases common, organizations and consumers are refused, since
// their tokens' iss names each user's own tenant and could not be checked
// strictly. When both are set, Issuer wins and TenantID is not used.
type Config struct {
	Issuer   string
	TenantID string
	// ClientID is the application (client) id: the audience ID tokens must
	// carry.
	ClientID string
	// JWKSURI is where the signing keys are; empty: the discovery document's
	// jwks_uri.
	JWKSURI string
	// IdPName is the <idp> of the "oidc:<idp>" method label; empty: the
	// issuer's host name, lowercased (any character other than a letter,
	// digit, '.', '_' or '-' becomes '-', and the name is trimmed of them).
	IdPName string
	// HTTPClient fetches the discovery document, the JWKS and tokens; the
	// wiring passes an SSRF-safe one. Nil: a plain client with a timeout.
	// Responses are read up to 1 MiB.
	HTTPClient *http.Client
	// Now is the clock; nil: time.Now.
	Now func() time.Time
	// Skew is the leeway on exp and nbf: 0 means MaxSkew, more than MaxSkew
	// is refused.
	Skew time.Duration
	// RefreshFloor is the least time between two JWKS fetches: an unknown kid
	// within it is refused without a fetch. 0 means DefaultRefreshFloor.
	RefreshFloor time.Duration
}

var (
	tenantRE  = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$`)
	idpNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// settings is a validated Config.
type settings struct {
	issuer, clientID, jwksURI, idp string
	client                         *http.Client
	now                            func() time.Time
	skew, floor                    time.Duration
}

func (c Config) settings() (settings, error) {
	s := settings{clientID: c.ClientID, jwksURI: c.JWKSURI, client: limitClient(c.HTTPClient),
		now: c.Now, skew: c.Skew, floor: c.RefreshFloor}
	var err error
	if s.issuer, err = c.resolveIssuer(); err != nil {
		return settings{}, err
	}
	if s.clientID == "" || len(s.clientID) > maxClientID || !printable(s.clientID) {
		return settings{}, apierr.BadParam("client_id", "client_id is required: the application id, at most %d printable characters", maxClientID)
	}
	if s.jwksURI != "" {
		if err := checkURL(s.jwksURI); err != nil {
			return settings{}, apierr.BadParam("jwks_uri", "jwks_uri: %v", err)
		}
	}
	if s.idp, err = c.idpName(s.issuer); err != nil {
		return settings{}, err
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.skew == 0 {
		s.skew = MaxSkew
	}
	if s.skew < 0 || s.skew > MaxSkew {
		return settings{}, apierr.BadParam("skew", "the clock skew must be between 0 and %s", MaxSkew)
	}
	if s.floor == 0 {
		s.floor = DefaultRefreshFloor
	}
	if s.floor < 0 {
		return settings{}, apierr.BadParam("refresh_floor", "the JWKS refresh floor must not be negative")
	}
	return s, nil
}

// resolveIssuer applies the issuer rule of Config.
func (c Config) resolveIssuer() (string, error) {
	if c.Issuer != "" {
		if err := checkURL(c.Issuer); err != nil {
			return "", apierr.BadParam("issuer", "issuer: %v", err)
		}
		return c.Issuer, nil
	}
	if c.TenantID == "" {
		return "", apierr.BadParam("issuer", "an issuer or a tenant_id is required")
	}
	switch strings.ToLower(c.TenantID) {
	case "common", "organizations", "consumers":
		return "", apierr.BadParam("tenant_id", "tenant_id %q is a multi-tenant alias whose tokens name other issuers; give the tenant's GUID or domain", c.TenantID)
	}
	if !tenantRE.MatchString(c.TenantID) {
		return "", apierr.BadParam("tenant_id", "tenant_id must be a tenant GUID or domain name")
	}
	return fmt.Sprintf(EntraIssuerFormat, c.TenantID), nil
}

// idpName is the configured IdP name or the issuer's host name.
func (c Config) idpName(issuer string) (string, error) {
	name := c.IdPName
	if name == "" {
		u, _ := url.Parse(issuer) // checked by checkURL
		name = strings.Map(func(r rune) rune {
			if r < 0x80 && (r == '.' || r == '_' || r == '-' || unicode.IsLetter(r) || unicode.IsDigit(r)) {
				return r
			}
			return '-' // an IPv6 literal's colons
		}, strings.ToLower(u.Hostname()))
		name = strings.Trim(name, "-._")
	}
	if len(name) > maxIdPName || !idpNameRE.MatchString(name) {
		return "", apierr.BadParam("idp_name", "the identity provider name must be 1 to %d letters, digits, '.', '_' or '-'", maxIdPName)
	}
	return name, nil
}

// checkURL accepts an absolute https URL, or http to a loopback host (a
// local identity provider in development), without user info, query or
// fragment.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return errors.New("not a URL")
	case u.Host == "" || u.Opaque != "":
		return errors.New("not an absolute URL")
	case u.User != nil || u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return errors.New("user info, query and fragment are not allowed")
	case egress.CheckSecureURL(raw) != nil:
		return errors.New("must be https (http only to a loopback host)")
	}
	return nil
}

// printable reports whether s has no control characters and is valid text.
func printable(s string) bool {
	for _, r := range s {
		if r == unicode.ReplacementChar || unicode.IsControl(r) {
			return false
		}
	}
	return true
}

// limitClient returns a copy of c (or a default client) whose responses are
// read up to maxBodyBytes: go-oidc's discovery reads bodies whole.
func limitClient(c *http.Client) *http.Client {
	if c == nil {
		c = &http.Client{Timeout: fetchTimeout}
	}
	cp := *c
	base := cp.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	cp.Transport = limitTransport{base: base}
	return &cp
}

type limitTransport struct{ base http.RoundTripper }

func (t limitTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	resp.Body = &limitedBody{rc: resp.Body, left: maxBodyBytes}
	return resp, nil
}

// errBodyTooLarge is a response over maxBodyBytes.
var errBodyTooLarge = errors.New("oidc: identity provider response over 1 MiB")

// limitedBody fails, rather than truncates, past its limit.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		// One byte more tells a body of exactly the limit from a longer one.
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			return 0, errBodyTooLarge
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
