-- Routing configuration, PostgreSQL: one row (id 1) holding the route.Config
-- JSON and its version, bumped by every save (optimistic concurrency).

-- +goose Up
CREATE TABLE routing_config (
    id         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    version    BIGINT  NOT NULL,
    config     TEXT    NOT NULL, -- route.Config as JSON
    updated_at BIGINT  NOT NULL  -- Unix microseconds
);

-- +goose Down
DROP TABLE routing_config;
