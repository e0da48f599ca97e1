-- Registered MCP servers, PostgreSQL (internal/mcpgw/registry). config is
-- the registration as JSON text without its credential: no auth_token, and
-- a stdio server's env with its names only. sealed is the credential (the
-- auth_token and the env values, as JSON) sealed under the master key with
-- the row's id as additional data (internal/secret); empty when there is
-- none. version starts at 1 and is bumped by every update, which replaces
-- the row only at the version it read (optimistic concurrency).

-- +goose Up
CREATE TABLE mcp_servers (
    id         TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    config     TEXT             NOT NULL, -- JSON object
    sealed     BYTEA            NOT NULL,
    version    BIGINT           NOT NULL,
    created_at BIGINT           NOT NULL, -- Unix microseconds
    updated_at BIGINT           NOT NULL
);

-- +goose Down
DROP TABLE mcp_servers;
