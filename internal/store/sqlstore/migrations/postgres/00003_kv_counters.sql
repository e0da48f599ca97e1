-- Durable counters of the in-process KV store, PostgreSQL: the counters that
-- must outlive a restart of the embedded default (spend), written by memkv as
-- absolute values. The key is the KV key's bytes.

-- +goose Up
CREATE TABLE kv_counters (
    key        BYTEA  NOT NULL PRIMARY KEY,
    value      BIGINT NOT NULL,
    expires_at BIGINT NOT NULL -- Unix microseconds; 0: never
);
CREATE INDEX kv_counters_expires_at ON kv_counters (expires_at) WHERE expires_at > 0;

-- +goose Down
DROP TABLE kv_counters;
