package oidc

import (
	"errors"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Reasons name the check that refused a sign-in. Each failure is an
// *apierr.Error whose Code is the reason's code (below) and whose Extra
// "reason" field is the reason, so the JSON error body says which check
// failed. No error ever carries the token, the code, the state or a secret:
// only the claim values a check compared (issuer, audience, times).
const (
	ReasonMalformed   = "malformed"      // not a compact JWS, bad base64/JSON, oversized: 401
	ReasonAlgorithm   = "algorithm"      // alg outside the allow-list (none, HMAC, …): 401
	ReasonSignature   = "signature"      // no JWKS key verifies it (unknown kid, forged): 401
	ReasonIssuer      = "issuer"         // iss is not exactly the configured issuer: 401
	ReasonAudience    = "audience"       // client id not in aud, or azp names another client: 401
	ReasonExpired     = "expired"        // exp passed (beyond the skew): 401
	ReasonNotYetValid = "not_yet_valid"  // nbf in the future (beyond the skew): 401
	ReasonNonce       = "nonce"          // browser flow: the ID token's nonce is not the flow's: 401
	ReasonClaims      = "claims"         // no username claim, too many groups, oversized values: 401
	ReasonJWKSFetch   = "jwks_fetch"     // the JWKS could not be fetched or parsed: 502
	ReasonDiscovery   = "discovery"      // the discovery document could not be fetched or is wrong: 502
	ReasonFlowCookie  = "flow_cookie"    // browser flow: the flow cookie is missing, forged or expired: 400
	ReasonState       = "state"          // browser flow: state differs from the cookie's: 400
	ReasonCode        = "code"           // browser flow: the code is missing or the IdP refused it (replayed): 400
	ReasonExchange    = "token_exchange" // browser flow: the token endpoint failed or answered no ID token: 502
)

// reasonInfo is each reason's kind, code and client-safe message.
var reasonInfo = map[string]struct {
	kind apierr.Kind
	code string
	msg  string
}{
	ReasonMalformed:   {apierr.Unauthenticated, "oidc_malformed_token", "the OIDC ID token is malformed"},
	ReasonAlgorithm:   {apierr.Unauthenticated, "oidc_algorithm_not_allowed", "the OIDC ID token's signing algorithm is not allowed"},
	ReasonSignature:   {apierr.Unauthenticated, "oidc_invalid_signature", "the OIDC ID token's signature does not verify against the identity provider's keys"},
	ReasonIssuer:      {apierr.Unauthenticated, "oidc_issuer_mismatch", "the OIDC ID token's issuer is not the configured issuer"},
	ReasonAudience:    {apierr.Unauthenticated, "oidc_audience_mismatch", "the OIDC ID token's audience is not the configured client id"},
	ReasonExpired:     {apierr.Unauthenticated, "oidc_token_expired", "the OIDC ID token has expired"},
	ReasonNotYetValid: {apierr.Unauthenticated, "oidc_token_not_yet_valid", "the OIDC ID token is not valid yet (nbf)"},
	ReasonNonce:       {apierr.Unauthenticated, "oidc_nonce_mismatch", "the OIDC ID token's nonce does not match the sign-in"},
	ReasonClaims:      {apierr.Unauthenticated, "oidc_invalid_claims", "the OIDC ID token's identity claims are unusable"},
	ReasonJWKSFetch:   {apierr.UpstreamError, "oidc_jwks_fetch_failed", "the identity provider's JWKS could not be fetched"},
	ReasonDiscovery:   {apierr.UpstreamError, "oidc_discovery_failed", "the identity provider's discovery document could not be fetched"},
	ReasonFlowCookie:  {apierr.InvalidRequest, "oidc_flow_invalid", "the sign-in flow cookie is missing, invalid or expired; start the sign-in again"},
	ReasonState:       {apierr.InvalidRequest, "oidc_state_mismatch", "the sign-in state does not match; start the sign-in again"},
	ReasonCode:        {apierr.InvalidRequest, "oidc_code_rejected", "the authorization code is missing, or the identity provider refused it (used or expired)"},
	ReasonExchange:    {apierr.UpstreamError, "oidc_token_exchange_failed", "the identity provider's token endpoint failed"},
}

// fail returns the *apierr.Error of reason, with detail (client-safe: never
// the token) appended to the message and cause kept as the logged Err.
func fail(reason, detail string, cause error) *apierr.Error {
	info, ok := reasonInfo[reason]
	if !ok {
		panic("oidc: unknown reason " + reason)
	}
	msg := info.msg
	if detail != "" {
		msg += ": " + detail
	}
	return &apierr.Error{Kind: info.kind, Code: info.code, Message: msg, Err: cause,
		Extra: map[string]any{"reason": reason}}
}

// ReasonOf is the reason (a Reason* constant) of an error this package
// returned, or "" for any other error.
func ReasonOf(err error) string {
	var e *apierr.Error
	if !errors.As(err, &e) {
		return ""
	}
	r, _ := e.Extra["reason"].(string)
	if _, ok := reasonInfo[r]; !ok {
		return ""
	}
	return r
}
