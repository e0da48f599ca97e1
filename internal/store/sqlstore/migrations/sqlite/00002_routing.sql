-- Routing configuration, SQLite: one row (id 1) holding the route.Config JSON
-- and its version, bumped by every save (optimistic concurrency).

-- +goose Up
CREATE TABLE routing_config (
    id         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    version    INTEGER NOT NULL,
    config     TEXT    NOT NULL, -- route.Config as JSON
    updated_at INTEGER NOT NULL  -- Unix microseconds
) STRICT;

-- +goose Down
DROP TABLE routing_config;
