-- Responses API conversation records, SQLite: each response svc relayed
-- with store not false, so that previous_response_id can continue it on any
-- provider, scoped to the caller that made it, until it expires
-- (SVC_RESPONSES_RETENTION). input and response are JSON.

-- +goose Up
CREATE TABLE responses (
    id         TEXT    NOT NULL PRIMARY KEY,
    owner      TEXT    NOT NULL,
    provider   TEXT    NOT NULL,
    native     INTEGER NOT NULL, -- 1: the provider's own Responses API served it
    previous   TEXT    NOT NULL, -- previous_response_id, '' for none
    input      BLOB    NOT NULL,
    response   BLOB    NOT NULL,
    created_at INTEGER NOT NULL, -- Unix microseconds
    expires_at INTEGER NOT NULL  -- Unix microseconds
) STRICT;
CREATE INDEX responses_expires_at ON responses (expires_at);

-- +goose Down
DROP TABLE responses;
