// Package saml verifies SAML 2.0 sign-ins: the X-SAML-Assertion header,
// base64 of an Assertion or of a Response holding one, into an
// sso.Identity. Verifier is the one entry point.
//
// Signatures are verified by goxmldsig against the identity provider's
// certificates, configured (ParseCertificates) or read from its metadata
// (gosaml2's EntityDescriptor, fetched with the wiring's HTTP client and
// cached). Only RSA with SHA-256 (or -384, -512) is accepted; SHA-1 is
// refused. Against signature wrapping, identity and conditions are read
// only from the element goxmldsig returns (rebuilt from the bytes it
// digested), and the document is refused before that when it holds
// anything a wrapping attack needs: a second Assertion anywhere, duplicate
// IDs, comments, a DOCTYPE, a signature that does not reference the
// element it sits in, more than one Reference.
//
// Conditions (NotBefore, NotOnOrAfter, AudienceRestriction naming
// saml_sp_entity_id) and SubjectConfirmationData times are checked with at
// most a minute of skew, and each assertion ID is claimed in a Replay
// (in memory, or over the shared KV store so replicas share it) until it
// expires. Errors are *apierr.Error values whose code names the check
// ("saml_expired", …); see Reason.
//
// The package has no HTTP handler and no SQL: sso's sign-in endpoint
// calls Verify.
package saml
