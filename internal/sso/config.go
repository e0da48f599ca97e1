package sso

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/egress"
)

// Config is the sign-in configuration (POST/GET /api/auth/sso/config). It
// holds no secret: the OIDC client secret is OIDC_CLIENT_SECRET.
type Config struct {
	// OIDC: the tenant (name or GUID), the client id (the ID tokens'
	// audience), the issuer and the JWKS address (from the issuer's
	// discovery document when empty).
	TenantID string `json:"tenant_id,omitempty"`
	ClientID string `json:"client_id,omitempty"`
	Issuer   string `json:"issuer,omitempty"`
	JWKSURI  string `json:"jwks_uri,omitempty"`
	// SAML: the IdP's metadata address or its signing certificate (PEM),
	// and svc's entity id (the assertions' audience).
	SAMLIdPMetadataURL string `json:"saml_idp_metadata_url,omitempty"`
	SAMLIdPCertificate string `json:"saml_idp_certificate,omitempty"`
	SAMLSPEntityID     string `json:"saml_sp_entity_id,omitempty"`
	// AdminGroups are the group patterns (* wildcard) whose members get the
	// admin role; nil means DefaultAdminGroups.
	AdminGroups []string `json:"admin_groups"`
	// SyncGroupsOnLogin recomputes a user's groups and roles at every
	// sign-in; off, a returning user keeps the roles of their first.
	SyncGroupsOnLogin bool `json:"sync_groups_on_login"`

	Version   int64     `json:"version"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Patch is a configuration change: the fields a POST names, the others
// left as they are.
type Patch struct {
	TenantID           *string   `json:"tenant_id"`
	ClientID           *string   `json:"client_id"`
	Issuer             *string   `json:"issuer"`
	JWKSURI            *string   `json:"jwks_uri"`
	SAMLIdPMetadataURL *string   `json:"saml_idp_metadata_url"`
	SAMLIdPCertificate *string   `json:"saml_idp_certificate"`
	SAMLSPEntityID     *string   `json:"saml_sp_entity_id"`
	AdminGroups        *[]string `json:"admin_groups"`
	SyncGroupsOnLogin  *bool     `json:"sync_groups_on_login"`
}

// Bounds on the configuration's fields.
const (
	maxField       = 2048
	maxCertificate = 64 << 10
	maxAdminGroups = 200
)

// Apply returns c with p's fields set, or a *FieldError.
func (c Config) Apply(p Patch) (Config, error) {
	for _, f := range []struct {
		name string
		src  *string
		dst  *string
		url  bool
	}{
		{"tenant_id", p.TenantID, &c.TenantID, false}, {"client_id", p.ClientID, &c.ClientID, false},
		{"issuer", p.Issuer, &c.Issuer, true}, {"jwks_uri", p.JWKSURI, &c.JWKSURI, true},
		{"saml_idp_metadata_url", p.SAMLIdPMetadataURL, &c.SAMLIdPMetadataURL, true},
		{"saml_sp_entity_id", p.SAMLSPEntityID, &c.SAMLSPEntityID, false},
	} {
		if f.src == nil {
			continue
		}
		v := strings.TrimSpace(*f.src)
		if err := checkField(f.name, v, maxField, f.url); err != nil {
			return c, err
		}
		*f.dst = v
	}
	if p.SAMLIdPCertificate != nil {
		v := strings.TrimSpace(*p.SAMLIdPCertificate)
		if len(v) > maxCertificate || v != "" && !strings.Contains(v, "-----BEGIN CERTIFICATE-----") {
			return c, &FieldError{Field: "saml_idp_certificate", Message: "must be a PEM certificate (-----BEGIN CERTIFICATE-----) of at most 64 KiB"}
		}
		c.SAMLIdPCertificate = v
	}
	if p.AdminGroups != nil {
		if len(*p.AdminGroups) > maxAdminGroups {
			return c, &FieldError{Field: "admin_groups", Message: fmt.Sprintf("at most %d patterns", maxAdminGroups)}
		}
		groups := make([]string, 0, len(*p.AdminGroups))
		for _, g := range *p.AdminGroups {
			g = strings.TrimSpace(g)
			if err := checkField("admin_groups", g, 256, false); err != nil || g == "" {
				return c, &FieldError{Field: "admin_groups", Message: "each pattern is non-empty printable text of at most 256 bytes"}
			}
			groups = append(groups, g)
		}
		c.AdminGroups = groups
	}
	if p.SyncGroupsOnLogin != nil {
		c.SyncGroupsOnLogin = *p.SyncGroupsOnLogin
	}
	return c, nil
}

// checkField checks a text field; a URL must be absolute https (http only
// to a loopback host, for tests and local identity providers).
func checkField(name, v string, max int, isURL bool) error {
	if len(v) > max || !utf8.ValidString(v) || strings.ContainsAny(v, "\x00\r\n") {
		return &FieldError{Field: name, Message: fmt.Sprintf("must be printable text of at most %d bytes", max)}
	}
	if !isURL || v == "" {
		return nil
	}
	if egress.CheckSecureURL(v) != nil {
		return &FieldError{Field: name, Message: "must be an absolute https URL (http only to a loopback address)"}
	}
	return nil
}

// OIDCConfigured reports whether OIDC sign-in has what it needs: a client
// id and an issuer or tenant.
func (c *Config) OIDCConfigured() bool {
	return c.ClientID != "" && (c.Issuer != "" || c.TenantID != "")
}

// SAMLConfigured reports whether SAML sign-in has what it needs: an
// audience and a certificate or metadata.
func (c *Config) SAMLConfigured() bool {
	return c.SAMLSPEntityID != "" && (c.SAMLIdPCertificate != "" || c.SAMLIdPMetadataURL != "")
}

// FieldError is an invalid configuration field (400 naming it).
type FieldError struct {
	Field, Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }
