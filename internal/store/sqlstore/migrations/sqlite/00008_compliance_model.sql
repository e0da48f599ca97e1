-- The compliance risk model's shared state, SQLite (internal/compliance/model).
-- compliance_model_events is the feedback log: one row per reviewer's
-- correction, seq gap-free and in commit order (compliance_model_head is
-- read and moved in the inserting transaction, which holds the write lock),
-- so every replica applies the same events in the same order to the same
-- initial weights and converges on the same weights; a replica's version is
-- the last seq it applied. features is the scan's feature vector
-- (model.Encode: hashed n-grams of the redacted text and the detectors'
-- findings, never the text); it is set to NULL once no replica can need it
-- (see the package documentation), the rest of the row is kept for the
-- learning status and summary. holdout rows (a fixed share of scan ids) are
-- never trained on: Stats evaluates on them. sig is a 64-bit SimHash of the
-- features, for the per-user cap on repeated feedback.
-- compliance_model_snapshots holds the weights after event `version`, per
-- initial weights (`base`), every SnapshotEvery events; the newest three per
-- base are kept. Times are Unix microseconds.

-- +goose Up
CREATE TABLE compliance_model_events (
    seq        INTEGER NOT NULL PRIMARY KEY CHECK (seq > 0),
    scan_id    TEXT    NOT NULL,
    user_id    TEXT    NOT NULL,
    org_id     TEXT    NOT NULL,
    label      REAL    NOT NULL, -- 1 risky, 0 clean
    predicted  REAL    NOT NULL, -- the risk score the scan was given
    weight     REAL    NOT NULL, -- the reviewer's weight, (0, 1]
    influence  REAL    NOT NULL, -- the weight after the per-user cap
    step       REAL    NOT NULL, -- learning step: rate × influence; 0 for holdout rows
    holdout    INTEGER NOT NULL CHECK (holdout IN (0, 1)),
    sig        INTEGER NOT NULL,
    features   BLOB,
    created_at INTEGER NOT NULL
) STRICT;
CREATE INDEX compliance_model_events_user ON compliance_model_events (user_id, seq);
CREATE INDEX compliance_model_events_org_user ON compliance_model_events (org_id, user_id, seq);
CREATE INDEX compliance_model_events_holdout ON compliance_model_events (seq) WHERE holdout = 1;

CREATE TABLE compliance_model_head (
    id  INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    seq INTEGER NOT NULL -- the last event's; 0: none yet
) STRICT;
INSERT INTO compliance_model_head (id, seq) VALUES (1, 0);

CREATE TABLE compliance_model_snapshots (
    base       TEXT    NOT NULL, -- id of the initial weights the events were applied to
    version    INTEGER NOT NULL, -- the last event applied
    weights    BLOB    NOT NULL, -- the weights file form, zstd-compressed
    created_at INTEGER NOT NULL,
    PRIMARY KEY (base, version)
) STRICT;

-- +goose Down
DROP TABLE compliance_model_snapshots;
DROP TABLE compliance_model_head;
DROP TABLE compliance_model_events;
