-- Initial schema, SQLite. Times are Unix microseconds (UTC) in INTEGER columns
-- so ordering and ">= since" compare exactly and alike in both dialects.

-- +goose Up
CREATE TABLE virtual_keys (
    id                 TEXT    NOT NULL PRIMARY KEY,
    hash               TEXT    NOT NULL UNIQUE,
    masked_key         TEXT    NOT NULL DEFAULT '',
    alias              TEXT    NOT NULL DEFAULT '',
    budget_period      TEXT    NOT NULL DEFAULT '',
    max_budget_usd     REAL    NOT NULL DEFAULT 0,
    model_restrictions TEXT    NOT NULL DEFAULT 'null', -- JSON array of model names
    rpm_limit          INTEGER NOT NULL DEFAULT 0,
    tpm_limit          INTEGER NOT NULL DEFAULT 0,
    policy_set         TEXT    NOT NULL DEFAULT '',
    team_id            TEXT    NOT NULL DEFAULT '',
    created_at         INTEGER NOT NULL,
    revoked_at         INTEGER              -- NULL while the key is active
) STRICT;

CREATE INDEX virtual_keys_created_at ON virtual_keys (created_at);

CREATE TABLE provider_keys (
    provider   TEXT    NOT NULL PRIMARY KEY,
    sealed     BLOB    NOT NULL,
    masked     TEXT    NOT NULL DEFAULT '',
    updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE audit_logs (
    request_id TEXT    NOT NULL PRIMARY KEY,
    ts         INTEGER NOT NULL,
    key_id     TEXT    NOT NULL DEFAULT '',
    provider   TEXT    NOT NULL DEFAULT '',
    model      TEXT    NOT NULL DEFAULT '',
    status     INTEGER NOT NULL DEFAULT 0,
    success    INTEGER NOT NULL DEFAULT 0, -- 0 or 1
    tokens     INTEGER NOT NULL DEFAULT 0,
    cost       REAL    NOT NULL DEFAULT 0,
    latency_ms INTEGER NOT NULL DEFAULT 0,
    entry      TEXT    NOT NULL DEFAULT '' -- the VAS entry JSON, byte for byte
) STRICT;

CREATE INDEX audit_logs_ts ON audit_logs (ts);
CREATE INDEX audit_logs_key_id_ts ON audit_logs (key_id, ts);

-- +goose Down
DROP TABLE audit_logs;
DROP TABLE provider_keys;
DROP TABLE virtual_keys;
