package config

import (
	"net/netip"
	"time"

	"github.com/svc-gateway/svc/internal/egress"
)

// SSOSettings are sign-in's server-side settings. The sso.* ones are the
// spec's file settings (nested or dotted in SVC_CONFIG, not the
// environment, whose names cannot hold a dot).
type SSOSettings struct {
	KerberosEnabled          bool
	KerberosServicePrincipal string
	KerberosKeytabPath       string
	// KerberosDecodePAC reads the groups of Active Directory tickets (their
	// PAC); off for MIT KDCs, which issue none gokrb5 can read.
	KerberosDecodePAC bool
	// KerberosAdminGroups are the admin group patterns for Kerberos
	// sign-ins (nil: the configuration's admin_groups).
	KerberosAdminGroups []string
	// TrustedProxyCIDRs are the authenticating proxies whose identity
	// headers count; empty: none.
	TrustedProxyCIDRs []netip.Prefix
	// OIDCClientSecret and OIDCRedirectURI serve the browser flow.
	OIDCClientSecret string
	OIDCRedirectURI  string
	// JWTSigningKey (SVC_JWT_SIGNING_KEY) signs the internal JWTs; empty:
	// one derived from the master key. JWTPreviousKeys
	// (SVC_JWT_PREVIOUS_KEYS, comma-separated) still verify.
	JWTSigningKey   string
	JWTPreviousKeys []string
	// JWTTTL (SVC_JWT_TTL) is a token's lifetime.
	JWTTTL time.Duration
	// UserLimits are the limits of each signed-in user in no team, counted
	// per user (SVC_USER_RPM_LIMIT, SVC_USER_TPM_LIMIT,
	// SVC_USER_MAX_BUDGET_USD, SVC_USER_BUDGET_PERIOD; 0: none). A team's
	// members have their team's.
	UserLimits UserLimits
}

// UserLimits are per-user limits; zero values set none.
type UserLimits struct {
	RPM, TPM     int64
	MaxBudgetUSD float64
	BudgetPeriod string
}

func (p *parser) sso() SSOSettings {
	s := SSOSettings{
		OIDCClientSecret: p.str("OIDC_CLIENT_SECRET", ""),
		OIDCRedirectURI:  p.str("OIDC_REDIRECT_URI", ""),
		JWTSigningKey:    p.str("SVC_JWT_SIGNING_KEY", ""),
		JWTPreviousKeys:  p.list("SVC_JWT_PREVIOUS_KEYS"),
		JWTTTL:           p.duration("SVC_JWT_TTL", time.Hour, time.Minute),
	}
	s.UserLimits = UserLimits{
		RPM:          int64(p.intRange("SVC_USER_RPM_LIMIT", 0, 0, 1<<30)),
		TPM:          int64(p.intRange("SVC_USER_TPM_LIMIT", 0, 0, 1<<40)),
		MaxBudgetUSD: p.floatRange("SVC_USER_MAX_BUDGET_USD", 0, 0, 1e9),
		BudgetPeriod: p.oneOf("SVC_USER_BUDGET_PERIOD", "monthly", "daily", "weekly", "monthly"),
	}
	if s.JWTTTL > 24*time.Hour {
		p.bad("SVC_JWT_TTL", "at most 24h: a sign-in token is short-lived")
	}
	s.KerberosEnabled = p.boolean("sso.kerberos.enabled", false)
	s.KerberosServicePrincipal = p.str("sso.kerberos.service_principal", "")
	s.KerberosKeytabPath = p.str("sso.kerberos.keytab_path", "")
	s.KerberosDecodePAC = p.boolean("sso.kerberos.decode_pac", false)
	s.KerberosAdminGroups = p.list("sso.kerberos.admin_groups") // nil: the configuration's admin_groups
	if s.KerberosEnabled && (s.KerberosServicePrincipal == "" || s.KerberosKeytabPath == "") {
		p.bad("sso.kerberos.enabled", "needs sso.kerberos.service_principal and sso.kerberos.keytab_path")
	}
	s.TrustedProxyCIDRs = p.prefixes("sso.trusted_proxy_cidrs")
	if s.OIDCRedirectURI != "" && egress.CheckSecureURL(s.OIDCRedirectURI) != nil {
		p.bad("OIDC_REDIRECT_URI", "must be an absolute https URL (http only to a loopback address)")
	}
	return s
}
