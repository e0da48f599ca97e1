package sso

// Method labels of Identity.Method (the internal JWT's auth_method): OIDC
// adds the identity provider, "oidc:<idp>".
const (
	MethodOIDC     = "oidc"
	MethodSAML     = "saml"
	MethodKerberos = "kerberos"
	MethodProxy    = "proxy_headers"
)

// Identity is who a verified sign-in says the user is, before roles: what
// every method yields. Username is the short name (no "@domain", no
// realm — but a Kerberos principal of another realm than the service's,
// through a cross-realm trust, keeps its realm: "bob@PARTNER.EXAMPLE");
// Groups are as the identity system names them (names, GUIDs or
// URNs).
type Identity struct {
	Username    string
	Email       string
	DisplayName string
	Department  string
	Groups      []string
	// Method is the auth_method label: MethodSAML, MethodKerberos,
	// MethodProxy, or "oidc:<idp>".
	Method string
	// Subject is the holder's full name where the short Username drops
	// part of it and the method gives no e-mail address to tell holders
	// apart: a Kerberos principal with its realm ("alice@CORP.EXAMPLE").
	// Empty for the other methods.
	Subject string
}
