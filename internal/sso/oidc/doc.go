// Package oidc verifies OpenID Connect ID tokens into an sso.Identity and
// runs the browser sign-in (authorization code flow with PKCE, state and
// nonce). It uses go-oidc (discovery, the IDTokenVerifier) and go-jose
// (signatures) and writes no signature verification of its own.
//
// Verifier checks a token presented as "Authorization: Bearer <ID token>":
// size, an asymmetric-only algorithm allow-list, the signature against the
// IdP's JWKS (cached; refetched on an unknown kid at most once per refresh
// floor), iss and aud strictly, exp and nbf with at most a minute of skew.
// Flow is the browser flow; its state lives in a sealed cookie value, so
// any replica can finish what another started.
//
// Every refusal is an *apierr.Error with a Reason (ReasonOf): 401 for the
// token's faults, 400 for a browser flow gone wrong (state, cookie, code),
// 502 when the IdP's discovery document, JWKS or token endpoint cannot be
// had. No error carries a token, code or secret. The package has no HTTP
// handlers and no storage.
package oidc
