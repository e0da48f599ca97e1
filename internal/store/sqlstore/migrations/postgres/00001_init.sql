-- Initial schema, PostgreSQL. Times are Unix microseconds (UTC) in BIGINT
-- columns so ordering and ">= since" compare exactly and alike in both
-- dialects. Identifier-like text uses the "C" collation so ORDER BY is byte
-- order, as in SQLite. entry is TEXT, not JSONB, so it round-trips byte for byte.

-- +goose Up
CREATE TABLE virtual_keys (
    id                 TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    hash               TEXT COLLATE "C" NOT NULL UNIQUE,
    masked_key         TEXT             NOT NULL DEFAULT '',
    alias              TEXT             NOT NULL DEFAULT '',
    budget_period      TEXT             NOT NULL DEFAULT '',
    max_budget_usd     DOUBLE PRECISION NOT NULL DEFAULT 0,
    model_restrictions TEXT             NOT NULL DEFAULT 'null', -- JSON array of model names
    rpm_limit          BIGINT           NOT NULL DEFAULT 0,
    tpm_limit          BIGINT           NOT NULL DEFAULT 0,
    policy_set         TEXT             NOT NULL DEFAULT '',
    team_id            TEXT             NOT NULL DEFAULT '',
    created_at         BIGINT           NOT NULL,
    revoked_at         BIGINT                    -- NULL while the key is active
);

CREATE INDEX virtual_keys_created_at ON virtual_keys (created_at);

CREATE TABLE provider_keys (
    provider   TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    sealed     BYTEA            NOT NULL,
    masked     TEXT             NOT NULL DEFAULT '',
    updated_at BIGINT           NOT NULL
);

CREATE TABLE audit_logs (
    request_id TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    ts         BIGINT           NOT NULL,
    key_id     TEXT COLLATE "C" NOT NULL DEFAULT '',
    provider   TEXT COLLATE "C" NOT NULL DEFAULT '',
    model      TEXT COLLATE "C" NOT NULL DEFAULT '',
    status     INTEGER          NOT NULL DEFAULT 0,
    success    BOOLEAN          NOT NULL DEFAULT FALSE,
    tokens     BIGINT           NOT NULL DEFAULT 0,
    cost       DOUBLE PRECISION NOT NULL DEFAULT 0,
    latency_ms BIGINT           NOT NULL DEFAULT 0,
    entry      TEXT             NOT NULL DEFAULT ''
);

CREATE INDEX audit_logs_ts ON audit_logs (ts);
CREATE INDEX audit_logs_key_id_ts ON audit_logs (key_id, ts);

-- +goose Down
DROP TABLE audit_logs;
DROP TABLE provider_keys;
DROP TABLE virtual_keys;
