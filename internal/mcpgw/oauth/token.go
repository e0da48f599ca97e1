package oauth

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/store"
)

// The sealed columns, part of each blob's additional data.
const (
	colClientSecret = "client_secret"
	colAccess       = "access_token"
	colRefresh      = "refresh_token"
)

// refreshTimeout bounds one refresh, which runs detached from the caller
// that started it (others may be waiting for it).
const refreshTimeout = 30 * time.Second

// maxTokenLifetime bounds the expires_in svc believes.
const maxTokenLifetime = 10 * 365 * 24 * time.Hour

// Token returns the access token of the MCP server serverID, for the
// gateway's requests to it (Authorization: Bearer); it never goes to a
// client. A token that expires within RefreshBefore is refreshed first: one
// refresh per server at a time in this process, and across replicas the
// first to store its refresh wins and the others take its token. Errors:
// ErrNoToken (never authorized, or revoked) and ErrReauthorize (expired
// beyond refresh), both in a 403 mcp_oauth_required. A fresh token is
// reused for up to tokenTTL without reading the store again.
func (f *Flow) Token(ctx context.Context, serverID string) (string, error) {
	now := f.now()
	if tok, ok := f.tokens.get(serverID, now); ok {
		return tok, nil
	}
	gen := f.tokens.generation()
	rec, err := f.record(ctx, serverID)
	if err != nil {
		return "", err
	}
	if f.fresh(rec, now) {
		tok, err := f.open(rec.AccessToken, rec.ServerID, colAccess)
		if err == nil {
			f.tokens.keep(serverID, tok, f.keepUntil(rec, now), gen)
		}
		return tok, err
	}
	if usable(rec, now) && f.retryLater(serverID, now) {
		return f.open(rec.AccessToken, rec.ServerID, colAccess)
	}
	v, err, _ := f.refreshes.Do(serverID, func() (any, error) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refreshTimeout)
		defer cancel()
		return f.refresh(ctx, serverID)
	})
	if err != nil {
		return "", err
	}
	return v.(string), nil
}

// refreshRetry is how long a failed refresh of a still valid token waits
// before the next try.
const refreshRetry = 10 * time.Second

// retryLater reports whether a refresh of serverID failed less than
// refreshRetry ago.
func (f *Flow) retryLater(serverID string, now time.Time) bool {
	at, ok := f.retryAt.Load(serverID)
	if !ok {
		return false
	}
	if now.Before(at.(time.Time)) {
		return true
	}
	f.retryAt.CompareAndDelete(serverID, at)
	return false
}

// record reads the server's record; a missing one is ErrNoToken.
func (f *Flow) record(ctx context.Context, serverID string) (Record, error) {
	rec, err := f.store.Record(ctx, serverID)
	if errors.Is(err, store.ErrNotFound) {
		return Record{}, authorizationRequired(serverID, ErrNoToken)
	}
	if err != nil {
		return Record{}, apierr.Wrap(apierr.Unavailable, "store_unavailable", "the MCP server's authorization could not be read", err)
	}
	return rec, nil
}

// fresh reports whether rec's access token is good beyond RefreshBefore.
func (f *Flow) fresh(rec Record, now time.Time) bool {
	return rec.ExpiresAt.IsZero() || now.Before(rec.ExpiresAt.Add(-f.refreshBefore))
}

// usable reports whether rec's access token has not expired.
func usable(rec Record, now time.Time) bool {
	return rec.ExpiresAt.IsZero() || now.Before(rec.ExpiresAt)
}

// refresh refreshes the server's token unless another refresh (here or on
// another replica) already did, and returns the access token to use.
func (f *Flow) refresh(ctx context.Context, serverID string) (string, error) {
	f.tokens.drop(serverID)
	defer f.tokens.drop(serverID) // the record may have changed
	rec, err := f.record(ctx, serverID)
	if err != nil {
		return "", err
	}
	now := f.now()
	if f.fresh(rec, now) {
		return f.open(rec.AccessToken, rec.ServerID, colAccess)
	}
	if len(rec.RefreshToken) == 0 {
		if usable(rec, now) {
			return f.open(rec.AccessToken, rec.ServerID, colAccess)
		}
		return "", authorizationRequired(serverID, ErrReauthorize)
	}
	tok, err := f.refreshToken(ctx, rec)
	if err != nil {
		var re *oauth2.RetrieveError
		invalidGrant := errors.As(err, &re) && re.ErrorCode == "invalid_grant"
		if cur, ok := f.refreshedElsewhere(ctx, rec, invalidGrant && !usable(rec, now), now); ok {
			return f.open(cur.AccessToken, cur.ServerID, colAccess)
		}
		if usable(rec, now) {
			// Serve the current token while it lasts; try again later.
			f.retryAt.Store(serverID, now.Add(refreshRetry))
			f.log.Warn("mcp oauth: refresh failed; the current token is still valid", "server_id", serverID,
				"expires_at", rec.ExpiresAt, "err", tokenError(err, "refresh"))
			return f.open(rec.AccessToken, rec.ServerID, colAccess)
		}
		if invalidGrant {
			return "", authorizationRequired(serverID, ErrReauthorize)
		}
		return "", tokenError(err, "the authorization server did not refresh the MCP server's token")
	}
	next, err := f.withToken(rec, tok, now)
	if err != nil {
		return "", err
	}
	if _, err := f.store.Swap(ctx, next); errors.Is(err, store.ErrConflict) {
		// Another replica stored its refresh first: use what it stored.
		cur, err := f.record(ctx, serverID)
		if err != nil {
			return "", err
		}
		if !usable(cur, now) {
			return "", authorizationRequired(serverID, ErrReauthorize)
		}
		return f.open(cur.AccessToken, cur.ServerID, colAccess)
	} else if err != nil {
		return "", apierr.Wrap(apierr.Unavailable, "store_unavailable", "the refreshed token could not be stored", err)
	}
	return tok.AccessToken, nil
}

// Waiting for another replica's refresh after an invalid_grant.
const (
	refreshWait = 2 * time.Second
	refreshPoll = 50 * time.Millisecond
)

// refreshedElsewhere returns the server's record when another refresh
// replaced rec meanwhile with a usable token. After an invalid_grant, which
// is what a refresh token another replica has just rotated gets, it waits
// up to refreshWait for that replica to store its refresh.
func (f *Flow) refreshedElsewhere(ctx context.Context, rec Record, wait bool, now time.Time) (Record, bool) {
	deadline := time.Now().Add(refreshWait)
	for {
		cur, err := f.store.Record(ctx, rec.ServerID)
		if err == nil && cur.Version != rec.Version {
			return cur, usable(cur, now)
		}
		if err != nil || !wait || time.Now().After(deadline) {
			return Record{}, false
		}
		select {
		case <-ctx.Done():
			return Record{}, false
		case <-time.After(refreshPoll):
		}
	}
}

// refreshToken runs the refresh grant of rec's client, with the resource.
func (f *Flow) refreshToken(ctx context.Context, rec Record) (*oauth2.Token, error) {
	rt, err := f.open(rec.RefreshToken, rec.ServerID, colRefresh)
	if err != nil {
		return nil, err
	}
	secret, err := f.open(rec.ClientSecret, rec.ServerID, colClientSecret)
	if err != nil {
		return nil, err
	}
	c := client{ID: rec.ClientID, Secret: secret, Auth: rec.ClientAuth, Registered: rec.Registered}
	cfg := f.oauthConfig(c, "", rec.TokenEndpoint, rec.Scopes)
	return cfg.TokenSource(f.tokenContext(ctx, rec.Resource), &oauth2.Token{RefreshToken: rt}).Token()
}

// withToken returns base carrying tok, obtained at now: the tokens sealed
// (a refresh answer without a refresh token keeps the one base has), the
// granted scopes when the answer names them, the expiry by svc's clock.
func (f *Flow) withToken(base Record, tok *oauth2.Token, now time.Time) (Record, error) {
	typ := tok.TokenType
	if typ == "" {
		typ = "Bearer"
	}
	if !strings.EqualFold(typ, "bearer") {
		return Record{}, apierr.Wrap(apierr.UpstreamError, "mcp_oauth_token_failed",
			"the authorization server issued a token of a type svc does not send: "+sanitize(typ, 32),
			fmt.Errorf("token_type %q", sanitize(typ, 32)))
	}
	r := base
	r.TokenType = "Bearer"
	var err error
	if r.AccessToken, err = f.seal(tok.AccessToken, r.ServerID, colAccess); err != nil {
		return Record{}, err
	}
	if tok.RefreshToken != "" {
		if r.RefreshToken, err = f.seal(tok.RefreshToken, r.ServerID, colRefresh); err != nil {
			return Record{}, err
		}
	}
	if s, _ := tok.Extra("scope").(string); strings.TrimSpace(s) != "" {
		r.Scopes = strings.Fields(s)
	}
	r.ObtainedAt = now
	r.ExpiresAt = time.Time{}
	switch {
	case tok.ExpiresIn > 0:
		r.ExpiresAt = now.Add(min(time.Duration(tok.ExpiresIn)*time.Second, maxTokenLifetime))
	case tok.ExpiresIn < 0:
		r.ExpiresAt = now
	case !tok.Expiry.IsZero(): // a form-encoded answer: oauth2 set it by the wall clock
		r.ExpiresAt = tok.Expiry
	}
	return r, nil
}

// authorizationRequired is the 403 of a server svc holds no usable token for.
func authorizationRequired(serverID string, cause error) error {
	msg := fmt.Sprintf("MCP server %q needs an OAuth authorization: an admin must authorize it (GET /api/mcp/auth/initiate?server_id=%s)", serverID, serverID)
	if errors.Is(cause, ErrReauthorize) {
		msg = fmt.Sprintf("the OAuth authorization of MCP server %q has ended: an admin must authorize it again (GET /api/mcp/auth/initiate?server_id=%s)", serverID, serverID)
	}
	return apierr.Wrap(apierr.Forbidden, "mcp_oauth_required", msg, cause)
}

// TokenInfo is what may be shown of a server's authorization: never a token.
type TokenInfo struct {
	ServerID        string     `json:"server_id"`
	Issuer          string     `json:"issuer"`
	Resource        string     `json:"resource"`
	Scopes          []string   `json:"scopes"`
	ExpiresAt       *time.Time `json:"expires_at"` // null: no expiry given
	Expired         bool       `json:"expired"`
	HasRefreshToken bool       `json:"has_refresh_token"`
	ObtainedAt      time.Time  `json:"obtained_at"`
	AuthorizedAt    time.Time  `json:"authorized_at"`
	AuthorizedBy    string     `json:"authorized_by"`
	DynamicClient   bool       `json:"dynamic_client"`
}

// Tokens lists the servers svc holds tokens for, by server id.
func (f *Flow) Tokens(ctx context.Context) ([]TokenInfo, error) {
	recs, err := f.store.Records(ctx)
	if err != nil {
		return nil, apierr.Wrap(apierr.Unavailable, "store_unavailable", "the MCP servers' authorizations could not be read", err)
	}
	now := f.now()
	out := make([]TokenInfo, 0, len(recs))
	for _, r := range recs {
		ti := TokenInfo{
			ServerID: r.ServerID, Issuer: r.Issuer, Resource: r.Resource, Scopes: r.Scopes,
			Expired: !usable(r, now), HasRefreshToken: len(r.RefreshToken) > 0, ObtainedAt: r.ObtainedAt,
			AuthorizedAt: r.AuthorizedAt, AuthorizedBy: r.AuthorizedBy, DynamicClient: r.Registered,
		}
		if ti.Scopes == nil {
			ti.Scopes = []string{}
		}
		if !r.ExpiresAt.IsZero() {
			t := r.ExpiresAt
			ti.ExpiresAt = &t
		}
		out = append(out, ti)
	}
	return out, nil
}

// Revoke forgets the server's tokens (and its registered client): svc stops
// sending them. It does not call the authorization server's revocation
// endpoint.
func (f *Flow) Revoke(ctx context.Context, serverID string) error {
	err := f.store.Delete(ctx, serverID)
	f.tokens.drop(serverID)
	if errors.Is(err, store.ErrNotFound) {
		return &apierr.Error{Kind: apierr.NotFound, Code: "mcp_oauth_not_found", Param: "server_id",
			Message: fmt.Sprintf("svc holds no OAuth tokens for MCP server %q", serverID), Err: err}
	}
	if err != nil {
		return apierr.Wrap(apierr.Unavailable, "store_unavailable", "the MCP server's authorization could not be removed", err)
	}
	f.log.Info("mcp oauth: tokens removed", "server_id", serverID)
	return nil
}

// seal seals a token column of serverID's record; "" seals to an empty blob.
func (f *Flow) seal(v, serverID, col string) ([]byte, error) {
	if v == "" {
		return []byte{}, nil
	}
	b, err := f.sealer.Seal([]byte(v), sealAAD(serverID, col))
	if err != nil {
		return nil, fmt.Errorf("oauth: seal %s: %w", col, err)
	}
	return b, nil
}

// open is seal's inverse.
func (f *Flow) open(b []byte, serverID, col string) (string, error) {
	if len(b) == 0 {
		return "", nil
	}
	v, err := f.sealer.Open(b, sealAAD(serverID, col))
	if err != nil {
		return "", fmt.Errorf("oauth: open the %s of MCP server %q: %w", col, serverID, err)
	}
	return string(v), nil
}

// sealAAD binds a sealed value to its server and column.
func sealAAD(serverID, col string) []byte {
	return []byte("mcp_oauth_tokens\x00" + serverID + "\x00" + col)
}
