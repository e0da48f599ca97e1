-- Responses API conversation records, PostgreSQL: each response svc relayed
-- with store not false, so that previous_response_id can continue it on any
-- provider, scoped to the caller that made it, until it expires
-- (SVC_RESPONSES_RETENTION). input and response are JSON.

-- +goose Up
CREATE TABLE responses (
    id         TEXT    NOT NULL PRIMARY KEY,
    owner      TEXT    NOT NULL,
    provider   TEXT    NOT NULL,
    native     BOOLEAN NOT NULL, -- the provider's own Responses API served it
    previous   TEXT    NOT NULL, -- previous_response_id, '' for none
    input      BYTEA   NOT NULL,
    response   BYTEA   NOT NULL,
    created_at BIGINT  NOT NULL, -- Unix microseconds
    expires_at BIGINT  NOT NULL  -- Unix microseconds
);
CREATE INDEX responses_expires_at ON responses (expires_at);

-- +goose Down
DROP TABLE responses;
