-- The tamper-evident audit chain, PostgreSQL (internal/auditchain): one row
-- per entry, each linked to the one before by prev_hash; hash is over the
-- canonical encoding of the row (see the package documentation). details is
-- TEXT, not JSONB, because its exact bytes are hashed. audit_chain_head is
-- the last entry, locked by every append (SELECT … FOR UPDATE) so that
-- appends from every replica are serialised, and where keyed entries begin.

-- +goose Up
CREATE TABLE audit_chain (
    seq        BIGINT NOT NULL PRIMARY KEY CHECK (seq > 0),
    event_type TEXT   NOT NULL,
    actor      TEXT   NOT NULL,
    subject    TEXT   NOT NULL,
    details    TEXT   NOT NULL, -- canonical JSON object, the bytes hashed
    created_at BIGINT NOT NULL, -- Unix microseconds
    prev_hash  TEXT   NOT NULL,
    hash       TEXT   NOT NULL,
    alg        TEXT   NOT NULL  -- sha256 or hmac-sha256
);
CREATE INDEX audit_chain_event_type ON audit_chain (event_type, seq);
CREATE INDEX audit_chain_actor ON audit_chain (actor, seq);

CREATE TABLE audit_chain_head (
    id         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    seq        BIGINT  NOT NULL, -- the last entry's; 0: none yet
    hash       TEXT    NOT NULL, -- the last entry's; 64 zeros: none yet
    keyed_from BIGINT  NOT NULL, -- first seq appended under SVC_AUDIT_CHAIN_KEY; 0: none
    keyed_mark TEXT    NOT NULL  -- HMAC of keyed_from under the key
);
INSERT INTO audit_chain_head (id, seq, hash, keyed_from, keyed_mark)
VALUES (1, 0, '0000000000000000000000000000000000000000000000000000000000000000', 0, '');

-- +goose Down
DROP TABLE audit_chain_head;
DROP TABLE audit_chain;
