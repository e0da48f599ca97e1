-- The long-term audit log, PostgreSQL: partitioned by time (RANGE on ts,
-- Unix microseconds; monthly partitions audit_logs_pYYYYMM are created
-- ahead of time and dropped past the retention by the bridge,
-- internal/audit/partitions.go), with a default partition for rows no
-- monthly partition holds yet. A unique key must include the partition
-- key, so idempotence is on (ts, request_id): an entry delivered again is
-- the same bytes, with the same timestamp. user_id and conversation_id are
-- columns now, for the log filters.

-- +goose Up
ALTER TABLE audit_logs RENAME TO audit_logs_v1;
ALTER INDEX audit_logs_ts RENAME TO audit_logs_v1_ts;
ALTER INDEX audit_logs_key_id_ts RENAME TO audit_logs_v1_key_id_ts;

CREATE TABLE audit_logs (
    request_id      TEXT COLLATE "C" NOT NULL,
    ts              BIGINT           NOT NULL,
    key_id          TEXT COLLATE "C" NOT NULL DEFAULT '',
    provider        TEXT COLLATE "C" NOT NULL DEFAULT '',
    model           TEXT COLLATE "C" NOT NULL DEFAULT '',
    status          INTEGER          NOT NULL DEFAULT 0,
    success         BOOLEAN          NOT NULL DEFAULT FALSE,
    tokens          BIGINT           NOT NULL DEFAULT 0,
    cost            DOUBLE PRECISION NOT NULL DEFAULT 0,
    latency_ms      BIGINT           NOT NULL DEFAULT 0,
    entry           TEXT             NOT NULL DEFAULT '',
    user_id         TEXT COLLATE "C" NOT NULL DEFAULT '',
    conversation_id TEXT COLLATE "C" NOT NULL DEFAULT '',
    PRIMARY KEY (ts, request_id)
) PARTITION BY RANGE (ts);
CREATE TABLE audit_logs_default PARTITION OF audit_logs DEFAULT;

CREATE INDEX audit_logs_request_id ON audit_logs (request_id);
CREATE INDEX audit_logs_key_id_ts ON audit_logs (key_id, ts);
CREATE INDEX audit_logs_user_id_ts ON audit_logs (user_id, ts);
CREATE INDEX audit_logs_conversation_id_ts ON audit_logs (conversation_id, ts);
CREATE INDEX audit_logs_provider_ts ON audit_logs (provider, ts);
CREATE INDEX audit_logs_model_ts ON audit_logs (model, ts);
CREATE INDEX audit_logs_status_ts ON audit_logs (status, ts);

INSERT INTO audit_logs (request_id, ts, key_id, provider, model, status, success, tokens, cost, latency_ms, entry, user_id, conversation_id)
SELECT request_id, ts, key_id, provider, model, status, success, tokens, cost, latency_ms, entry,
       COALESCE(substring(entry FROM '"user_id":"([^"\\]*)"'), ''),
       COALESCE(substring(entry FROM '"conversation_id":"([^"\\]*)"'), '')
FROM audit_logs_v1;
DROP TABLE audit_logs_v1;

-- +goose Down
ALTER TABLE audit_logs RENAME TO audit_logs_v2;
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
INSERT INTO audit_logs SELECT request_id, ts, key_id, provider, model, status, success, tokens, cost, latency_ms, entry
FROM audit_logs_v2 ON CONFLICT (request_id) DO NOTHING;
DROP TABLE audit_logs_v2;
CREATE INDEX audit_logs_ts ON audit_logs (ts);
CREATE INDEX audit_logs_key_id_ts ON audit_logs (key_id, ts);
