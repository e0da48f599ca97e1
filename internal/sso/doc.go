// Package sso is sign-in with the identity systems companies run: OIDC ID
// tokens, SAML 2.0 assertions, Kerberos SPNEGO and trusted proxy headers,
// each verified by its own subpackage (sso/oidc, sso/saml, sso/kerberos)
// into an Identity, which this package maps to roles and exchanges for
// svc's internal JWT (sso/token). It owns the sign-in configuration, the
// role mapping and the sign-in endpoints; its subpackages import it only
// for Identity and the method labels.
package sso
