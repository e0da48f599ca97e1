package oauth

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/store"
)

// CallbackParams are the authorization response's query parameters
// (RFC 6749 section 4.1.2, RFC 9207's iss).
type CallbackParams struct {
	State            string
	Code             string
	Issuer           string // iss
	Error            string // error, when the authorization server refused
	ErrorDescription string
}

// maxStateLen bounds the state a callback may carry (svc's are 43 bytes).
const maxStateLen = 256

// Callback completes the authorization the state belongs to: it consumes
// the state, checks the authorization server's answer, exchanges the code
// (with the PKCE verifier and the resource) and stores the tokens. It
// returns the server's id.
func (f *Flow) Callback(ctx context.Context, p CallbackParams) (string, error) {
	pend, stateErr := f.take(ctx, p.State)
	if p.Error != "" {
		return pend.ServerID, refusedError(pend.ServerID, p.Error, p.ErrorDescription)
	}
	if stateErr != nil {
		return "", stateErr
	}
	if p.Issuer != "" && p.Issuer != pend.Issuer || p.Issuer == "" && pend.IssParameter {
		return pend.ServerID, apierr.Wrap(apierr.InvalidRequest, "mcp_oauth_issuer_mismatch",
			"the authorization response did not come from the authorization server the authorization was started with",
			fmt.Errorf("iss %q, want %q", sanitize(p.Issuer, 200), pend.Issuer))
	}
	if p.Code == "" {
		return pend.ServerID, apierr.BadParam("code", "the authorization response carries no code")
	}
	cfg := f.oauthConfig(pend.Client, "", pend.TokenEndpoint, pend.Scopes)
	tok, err := cfg.Exchange(f.tokenContext(ctx, ""), p.Code,
		oauth2.VerifierOption(pend.Verifier), oauth2.SetAuthURLParam("resource", pend.Resource))
	if err != nil {
		return pend.ServerID, tokenError(err, "the authorization server did not exchange the code")
	}
	now := f.now()
	base := Record{
		ServerID: pend.ServerID, Issuer: pend.Issuer, TokenEndpoint: pend.TokenEndpoint,
		Resource: pend.Resource, RedirectURI: f.redirectURL, ClientID: pend.Client.ID,
		ClientAuth: pend.Client.Auth, Registered: pend.Client.Registered, Scopes: pend.Scopes,
		AuthorizedAt: now, AuthorizedBy: pend.Requester,
	}
	if base.ClientSecret, err = f.seal(pend.Client.Secret, pend.ServerID, colClientSecret); err != nil {
		return pend.ServerID, err
	}
	rec, err := f.withToken(base, tok, now)
	if err != nil {
		return pend.ServerID, err
	}
	if _, err := f.store.Put(ctx, rec); err != nil {
		return pend.ServerID, apierr.Wrap(apierr.Unavailable, "store_unavailable", "the tokens could not be stored", err)
	}
	f.retryAt.Delete(rec.ServerID)
	f.tokens.drop(rec.ServerID)
	f.log.Info("mcp oauth: server authorized", "server_id", rec.ServerID, "issuer", rec.Issuer,
		"scopes", strings.Join(rec.Scopes, " "), "refresh_token", len(rec.RefreshToken) > 0, "by", rec.AuthorizedBy)
	if f.onAuthorized != nil {
		go f.onAuthorized(rec.ServerID)
	}
	return pend.ServerID, nil
}

// take consumes the pending authorization of state. Any failure is a 400
// ErrState, except a store failure.
func (f *Flow) take(ctx context.Context, state string) (pending, error) {
	bad := func(msg string, cause error) error {
		return apierr.Wrap(apierr.InvalidRequest, "invalid_state", msg, fmt.Errorf("%w: %w", ErrState, cause))
	}
	if state == "" || len(state) > maxStateLen {
		return pending{}, bad("the callback's state is missing or malformed", errors.New("no state"))
	}
	key := stateKey(state)
	sealed, err := f.states.Take(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return pending{}, bad("the callback's state is unknown, expired or already used: start the authorization again", err)
	}
	if err != nil {
		return pending{}, apierr.Wrap(apierr.Unavailable, "store_unavailable", "the pending authorization could not be read", err)
	}
	b, err := f.sealer.Open(sealed, []byte("mcp-oauth-state\x00"+key))
	if err != nil {
		return pending{}, bad("the callback's state is unknown, expired or already used: start the authorization again", err)
	}
	defer clear(b)
	var p pending
	if err := json.Unmarshal(b, &p); err != nil {
		return pending{}, fmt.Errorf("oauth: decode pending authorization: %w", err)
	}
	if subtle.ConstantTimeCompare([]byte(p.State), []byte(state)) != 1 {
		return pending{}, bad("the callback's state is unknown, expired or already used: start the authorization again", errors.New("state mismatch"))
	}
	if age := f.now().Sub(p.CreatedAt); age > stateTTL || age < -time.Minute {
		return pending{}, bad("the authorization took longer than 10 minutes: start it again", fmt.Errorf("state age %s", age))
	}
	return p, nil
}

// refusedError is the 400 of an authorization server's error answer.
func refusedError(serverID, code, desc string) error {
	msg := "the authorization server refused the authorization: " + sanitize(code, 64)
	if serverID != "" {
		msg = fmt.Sprintf("the authorization server refused the authorization of MCP server %q: %s", serverID, sanitize(code, 64))
	}
	if d := sanitize(desc, 300); d != "" {
		msg += " (" + d + ")"
	}
	return apierr.New(apierr.InvalidRequest, "mcp_oauth_denied", msg)
}

// tokenError maps a failed token request to a 502 (504 on a timeout) that
// names the authorization server's error code. The answer's body is never
// kept; a cancelled request stays a cancellation.
func tokenError(err error, msg string) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		code := sanitize(re.ErrorCode, 64)
		status := 0
		if re.Response != nil {
			status = re.Response.StatusCode
		}
		if code == "" {
			code = fmt.Sprintf("HTTP %d", status)
		}
		return apierr.Wrap(apierr.UpstreamError, "mcp_oauth_token_failed", msg+": "+code,
			fmt.Errorf("token endpoint answered %d %s", status, code))
	}
	var ue *url.Error
	if errors.As(err, &ue) && ue.Timeout() {
		return apierr.Wrap(apierr.UpstreamTimeout, "mcp_oauth_token_failed", msg+": the request timed out", ue)
	}
	return apierr.Wrap(apierr.UpstreamError, "mcp_oauth_token_failed", msg, err)
}
