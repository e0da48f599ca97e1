-- Analytics rollups, SQLite: what GET /api/analytics reads instead of
-- scanning audit_logs (internal/analytics). The bridge adds each audit entry
-- once, in the transaction that inserted it, to one row per grain (60 =
-- minute, 3600 = hour, 86400 = day, 604800 = week) and dimension:
--   analytics_models: per bucket (minute, hour, day) and provider/model,
--     every sum and a latency histogram (lat_00 … lat_27, log-spaced
--     buckets, see internal/analytics/histogram.go);
--   analytics_keys, analytics_users: per bucket (minute, hour, day, week)
--     and virtual key (with its masked prefix, never the secret) or user:
--     requests, errors, tokens, cost. Entries without a key or user add no
--     row here.
-- bucket_start is the bucket's start, Unix microseconds (UTC), a multiple
-- of the grain. errors counts entries with status >= 400 or success false.
-- Minute rows are kept 48 h, the others the log retention. Weeks start on
-- a Thursday, as the Unix epoch.

-- +goose Up
CREATE TABLE analytics_models (
    grain             INTEGER NOT NULL,
    bucket_start      INTEGER NOT NULL,
    provider          TEXT NOT NULL,
    model             TEXT NOT NULL,
    requests          INTEGER NOT NULL DEFAULT 0,
    errors            INTEGER NOT NULL DEFAULT 0,
    prompt_tokens     INTEGER NOT NULL DEFAULT 0,
    completion_tokens INTEGER NOT NULL DEFAULT 0,
    tokens            INTEGER NOT NULL DEFAULT 0,
    cost              REAL NOT NULL DEFAULT 0,
    cache_hits        INTEGER NOT NULL DEFAULT 0,
    tokens_saved      INTEGER NOT NULL DEFAULT 0,
    cost_saved        REAL NOT NULL DEFAULT 0,
    latency_sum_ms    INTEGER NOT NULL DEFAULT 0,
    lat_00 INTEGER NOT NULL DEFAULT 0,
    lat_01 INTEGER NOT NULL DEFAULT 0,
    lat_02 INTEGER NOT NULL DEFAULT 0,
    lat_03 INTEGER NOT NULL DEFAULT 0,
    lat_04 INTEGER NOT NULL DEFAULT 0,
    lat_05 INTEGER NOT NULL DEFAULT 0,
    lat_06 INTEGER NOT NULL DEFAULT 0,
    lat_07 INTEGER NOT NULL DEFAULT 0,
    lat_08 INTEGER NOT NULL DEFAULT 0,
    lat_09 INTEGER NOT NULL DEFAULT 0,
    lat_10 INTEGER NOT NULL DEFAULT 0,
    lat_11 INTEGER NOT NULL DEFAULT 0,
    lat_12 INTEGER NOT NULL DEFAULT 0,
    lat_13 INTEGER NOT NULL DEFAULT 0,
    lat_14 INTEGER NOT NULL DEFAULT 0,
    lat_15 INTEGER NOT NULL DEFAULT 0,
    lat_16 INTEGER NOT NULL DEFAULT 0,
    lat_17 INTEGER NOT NULL DEFAULT 0,
    lat_18 INTEGER NOT NULL DEFAULT 0,
    lat_19 INTEGER NOT NULL DEFAULT 0,
    lat_20 INTEGER NOT NULL DEFAULT 0,
    lat_21 INTEGER NOT NULL DEFAULT 0,
    lat_22 INTEGER NOT NULL DEFAULT 0,
    lat_23 INTEGER NOT NULL DEFAULT 0,
    lat_24 INTEGER NOT NULL DEFAULT 0,
    lat_25 INTEGER NOT NULL DEFAULT 0,
    lat_26 INTEGER NOT NULL DEFAULT 0,
    lat_27 INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (grain, bucket_start, provider, model)
) STRICT, WITHOUT ROWID;

CREATE TABLE analytics_keys (
    grain        INTEGER NOT NULL,
    bucket_start INTEGER NOT NULL,
    key_id       TEXT NOT NULL,
    key_mask     TEXT NOT NULL DEFAULT '',
    requests     INTEGER NOT NULL DEFAULT 0,
    errors       INTEGER NOT NULL DEFAULT 0,
    tokens       INTEGER NOT NULL DEFAULT 0,
    cost         REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (grain, bucket_start, key_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE analytics_users (
    grain        INTEGER NOT NULL,
    bucket_start INTEGER NOT NULL,
    user_id      TEXT NOT NULL,
    requests     INTEGER NOT NULL DEFAULT 0,
    errors       INTEGER NOT NULL DEFAULT 0,
    tokens       INTEGER NOT NULL DEFAULT 0,
    cost         REAL NOT NULL DEFAULT 0,
    PRIMARY KEY (grain, bucket_start, user_id)
) STRICT, WITHOUT ROWID;

-- +goose Down
DROP TABLE analytics_users;
DROP TABLE analytics_keys;
DROP TABLE analytics_models;
