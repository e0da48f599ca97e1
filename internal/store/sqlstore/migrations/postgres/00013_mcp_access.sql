-- Tool access requests, PostgreSQL (internal/mcpgw/access): a requester
-- ("<kind>:<id>") asks for tools on an MCP server with a justification; an
-- admin approves (the tools are granted to the requester), denies, or later
-- revokes an approved request. tools_requested is a JSON array of names.
-- Transitions are single UPDATEs guarded by the current status. Times are
-- Unix microseconds, 0 for "not yet". No foreign key to the server: a
-- request outlives its server's registration (a grant on a deleted server
-- grants nothing).

-- +goose Up
CREATE TABLE mcp_access_requests (
    id              TEXT    NOT NULL PRIMARY KEY,
    server_id       TEXT    NOT NULL,
    user_id         TEXT    NOT NULL, -- the requester, "<kind>:<id>"
    justification   TEXT    NOT NULL,
    tools_requested TEXT    NOT NULL, -- JSON array
    status          TEXT    NOT NULL CHECK (status IN ('pending', 'approved', 'denied', 'revoked')),
    reason          TEXT    NOT NULL, -- the denial's or revocation's
    decided_by      TEXT    NOT NULL, -- the admin who approved or denied
    decided_at      BIGINT  NOT NULL,
    revoked_by      TEXT    NOT NULL,
    revoked_at      BIGINT  NOT NULL,
    created_at      BIGINT  NOT NULL
);
-- The grants query: one requester's approved requests on one server.
CREATE INDEX mcp_access_requests_grants ON mcp_access_requests (user_id, server_id, status);
-- The admin's list: by status, newest first.
CREATE INDEX mcp_access_requests_status ON mcp_access_requests (status, created_at DESC);

-- +goose Down
DROP TABLE mcp_access_requests;
