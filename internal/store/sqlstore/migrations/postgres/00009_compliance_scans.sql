-- Compliance scan records and per-organisation baselines, PostgreSQL
-- (internal/compliance). A scan record keeps what feedback needs — the
-- scan's features (hashed n-grams and findings, encoded by
-- internal/compliance/model), the score and action it got, the types it
-- found — never the scanned text. Kept SVC_COMPLIANCE_SCAN_RETENTION.
-- compliance_baseline counts, per organisation and hour (Unix seconds of
-- the hour's start), one row per metric ("scans", "level:high",
-- "action:Block", "type:ssn").

-- +goose Up
CREATE TABLE compliance_scans (
    scan_id    TEXT    NOT NULL PRIMARY KEY,
    kind       TEXT    NOT NULL, -- scan | intelligent
    user_id    TEXT    NOT NULL,
    org_id     TEXT    NOT NULL,
    policy     TEXT    NOT NULL,
    caller     TEXT    NOT NULL, -- the principal that asked, <kind>:<id>
    created_at BIGINT  NOT NULL, -- Unix microseconds
    risk_score DOUBLE PRECISION NOT NULL,
    risk_level TEXT    NOT NULL,
    action     TEXT    NOT NULL,
    types      TEXT    NOT NULL, -- finding types, comma-separated
    features   BYTEA   NOT NULL
);
CREATE INDEX compliance_scans_created_at ON compliance_scans (created_at);

CREATE TABLE compliance_baseline (
    org_id TEXT    NOT NULL,
    hour   BIGINT  NOT NULL,
    metric TEXT    NOT NULL,
    n      BIGINT  NOT NULL,
    PRIMARY KEY (org_id, hour, metric)
);
CREATE INDEX compliance_baseline_hour ON compliance_baseline (hour);

-- +goose Down
DROP TABLE compliance_baseline;
DROP TABLE compliance_scans;
