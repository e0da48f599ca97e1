-- Sign-in, PostgreSQL (internal/sso). sso_config is the one sign-in
-- configuration (id 1) as JSON text (it holds no secret: the OIDC client
-- secret is an environment setting), with a version bumped by every
-- update. sso_users are the users who signed in: their last identity and
-- the roles they were given (kept when groups are not synced at every
-- login). sso_revocations: a username (kind 'user': its tokens issued
-- before revoked_at are refused) or a token id (kind 'token'), until
-- expires_at, when no token it could refuse is still valid.

-- +goose Up
CREATE TABLE sso_config (
    id         INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    config     TEXT    NOT NULL, -- JSON object
    version    BIGINT  NOT NULL,
    updated_at BIGINT  NOT NULL  -- Unix microseconds
);

CREATE TABLE sso_users (
    username    TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    identity    TEXT   NOT NULL, -- JSON: email, display name, department, groups, method
    roles       TEXT   NOT NULL, -- JSON array
    first_seen  BIGINT NOT NULL, -- Unix microseconds
    last_seen   BIGINT NOT NULL
);

CREATE TABLE sso_revocations (
    kind       TEXT COLLATE "C" NOT NULL, -- 'user' or 'token'
    subject    TEXT COLLATE "C" NOT NULL, -- the username or the jti
    revoked_at BIGINT NOT NULL,           -- Unix microseconds
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (kind, subject)
);
CREATE INDEX sso_revocations_expires_at ON sso_revocations (expires_at); -- every process reads the unexpired ones 4 times a second

-- +goose Down
DROP TABLE sso_revocations;
DROP TABLE sso_users;
DROP TABLE sso_config;
