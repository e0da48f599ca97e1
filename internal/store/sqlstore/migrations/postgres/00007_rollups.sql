-- Analytics rollups, PostgreSQL: what GET /api/analytics reads instead of
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
-- Each table is partitioned by grain, so a report reads only the rows of
-- the grain it needs (a 30-day report reads week and day rows), stored
-- together.

-- +goose Up
CREATE TABLE analytics_models (
    grain             BIGINT NOT NULL,
    bucket_start      BIGINT NOT NULL,
    provider          TEXT COLLATE "C" NOT NULL,
    model             TEXT COLLATE "C" NOT NULL,
    requests          BIGINT NOT NULL DEFAULT 0,
    errors            BIGINT NOT NULL DEFAULT 0,
    prompt_tokens     BIGINT NOT NULL DEFAULT 0,
    completion_tokens BIGINT NOT NULL DEFAULT 0,
    tokens            BIGINT NOT NULL DEFAULT 0,
    cost              DOUBLE PRECISION NOT NULL DEFAULT 0,
    cache_hits        BIGINT NOT NULL DEFAULT 0,
    tokens_saved      BIGINT NOT NULL DEFAULT 0,
    cost_saved        DOUBLE PRECISION NOT NULL DEFAULT 0,
    latency_sum_ms    BIGINT NOT NULL DEFAULT 0,
    lat_00 BIGINT NOT NULL DEFAULT 0,
    lat_01 BIGINT NOT NULL DEFAULT 0,
    lat_02 BIGINT NOT NULL DEFAULT 0,
    lat_03 BIGINT NOT NULL DEFAULT 0,
    lat_04 BIGINT NOT NULL DEFAULT 0,
    lat_05 BIGINT NOT NULL DEFAULT 0,
    lat_06 BIGINT NOT NULL DEFAULT 0,
    lat_07 BIGINT NOT NULL DEFAULT 0,
    lat_08 BIGINT NOT NULL DEFAULT 0,
    lat_09 BIGINT NOT NULL DEFAULT 0,
    lat_10 BIGINT NOT NULL DEFAULT 0,
    lat_11 BIGINT NOT NULL DEFAULT 0,
    lat_12 BIGINT NOT NULL DEFAULT 0,
    lat_13 BIGINT NOT NULL DEFAULT 0,
    lat_14 BIGINT NOT NULL DEFAULT 0,
    lat_15 BIGINT NOT NULL DEFAULT 0,
    lat_16 BIGINT NOT NULL DEFAULT 0,
    lat_17 BIGINT NOT NULL DEFAULT 0,
    lat_18 BIGINT NOT NULL DEFAULT 0,
    lat_19 BIGINT NOT NULL DEFAULT 0,
    lat_20 BIGINT NOT NULL DEFAULT 0,
    lat_21 BIGINT NOT NULL DEFAULT 0,
    lat_22 BIGINT NOT NULL DEFAULT 0,
    lat_23 BIGINT NOT NULL DEFAULT 0,
    lat_24 BIGINT NOT NULL DEFAULT 0,
    lat_25 BIGINT NOT NULL DEFAULT 0,
    lat_26 BIGINT NOT NULL DEFAULT 0,
    lat_27 BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (grain, bucket_start, provider, model)
) PARTITION BY LIST (grain);
CREATE TABLE analytics_models_minute PARTITION OF analytics_models FOR VALUES IN (60) WITH (fillfactor = 80);
CREATE TABLE analytics_models_hour PARTITION OF analytics_models FOR VALUES IN (3600) WITH (fillfactor = 80);
CREATE TABLE analytics_models_day PARTITION OF analytics_models FOR VALUES IN (86400) WITH (fillfactor = 80);

CREATE TABLE analytics_keys (
    grain        BIGINT NOT NULL,
    bucket_start BIGINT NOT NULL,
    key_id       TEXT COLLATE "C" NOT NULL,
    key_mask     TEXT NOT NULL DEFAULT '',
    requests     BIGINT NOT NULL DEFAULT 0,
    errors       BIGINT NOT NULL DEFAULT 0,
    tokens       BIGINT NOT NULL DEFAULT 0,
    cost         DOUBLE PRECISION NOT NULL DEFAULT 0,
    PRIMARY KEY (grain, bucket_start, key_id)
) PARTITION BY LIST (grain);
CREATE TABLE analytics_keys_minute PARTITION OF analytics_keys FOR VALUES IN (60) WITH (fillfactor = 80);
CREATE TABLE analytics_keys_hour PARTITION OF analytics_keys FOR VALUES IN (3600) WITH (fillfactor = 80);
CREATE TABLE analytics_keys_day PARTITION OF analytics_keys FOR VALUES IN (86400) WITH (fillfactor = 80);
CREATE TABLE analytics_keys_week PARTITION OF analytics_keys FOR VALUES IN (604800) WITH (fillfactor = 80);

CREATE TABLE analytics_users (
    grain        BIGINT NOT NULL,
    bucket_start BIGINT NOT NULL,
    user_id      TEXT COLLATE "C" NOT NULL,
    requests     BIGINT NOT NULL DEFAULT 0,
    errors       BIGINT NOT NULL DEFAULT 0,
    tokens       BIGINT NOT NULL DEFAULT 0,
    cost         DOUBLE PRECISION NOT NULL DEFAULT 0,
    PRIMARY KEY (grain, bucket_start, user_id)
) PARTITION BY LIST (grain);
CREATE TABLE analytics_users_minute PARTITION OF analytics_users FOR VALUES IN (60) WITH (fillfactor = 80);
CREATE TABLE analytics_users_hour PARTITION OF analytics_users FOR VALUES IN (3600) WITH (fillfactor = 80);
CREATE TABLE analytics_users_day PARTITION OF analytics_users FOR VALUES IN (86400) WITH (fillfactor = 80);
CREATE TABLE analytics_users_week PARTITION OF analytics_users FOR VALUES IN (604800) WITH (fillfactor = 80);

-- +goose Down
DROP TABLE analytics_users;
DROP TABLE analytics_keys;
DROP TABLE analytics_models;
