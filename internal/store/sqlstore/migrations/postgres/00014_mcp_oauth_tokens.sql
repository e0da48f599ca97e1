-- OAuth tokens svc holds for upstream MCP servers, PostgreSQL
-- (internal/mcpgw/oauth): one row per MCP server, written when an admin
-- completes the authorization (the callback) and on every refresh. The
-- access and refresh tokens and the client secret are sealed with the master
-- key (AES-256-GCM envelopes bound to the server id and the column); an empty
-- blob is "none". The client is the one the tokens were issued to: dynamic
-- client registration's (registered, reused by the next authorization of
-- the same issuer) or the one configured on the server. version is bumped by
-- every write: a refresh replaces the row only if the version it read is
-- still there, so two replicas refreshing at once never lose a token.

-- +goose Up
CREATE TABLE mcp_oauth_tokens (
    server_id      TEXT    NOT NULL PRIMARY KEY,
    issuer         TEXT    NOT NULL, -- the authorization server's issuer
    token_endpoint TEXT    NOT NULL,
    resource       TEXT    NOT NULL, -- RFC 8707 resource the tokens are for
    redirect_uri   TEXT    NOT NULL,
    client_id      TEXT    NOT NULL,
    client_secret  BYTEA   NOT NULL, -- sealed; empty: a public client
    client_auth    TEXT    NOT NULL, -- client_secret_basic | client_secret_post | none
    registered     BOOLEAN NOT NULL, -- the client came from dynamic registration
    access_token   BYTEA   NOT NULL, -- sealed
    refresh_token  BYTEA   NOT NULL, -- sealed; empty: none
    token_type     TEXT    NOT NULL,
    scopes         TEXT    NOT NULL, -- space-separated, as granted
    expires_at     BIGINT  NOT NULL, -- Unix microseconds; 0: no expiry given
    obtained_at    BIGINT  NOT NULL, -- Unix microseconds: the authorization or the last refresh
    authorized_at  BIGINT  NOT NULL, -- Unix microseconds
    authorized_by  TEXT    NOT NULL, -- the principal that completed the authorization
    version        BIGINT  NOT NULL
);

-- +goose Down
DROP TABLE mcp_oauth_tokens;
