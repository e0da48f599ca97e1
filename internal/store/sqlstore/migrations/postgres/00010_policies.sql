-- The policy library, PostgreSQL (internal/policy): policies, presets (their
-- policies in order in policy_preset_policies), the assignment of a
-- preset to a virtual key, a team or a role, and the library's counters.
-- Lists (applicable_providers, applicable_models) are JSON arrays and
-- metadata a JSON object, as text. Deleting a policy removes it from every
-- preset (internal/policy does so explicitly, in the same transaction; the
-- cascade is the backstop). A preset that is assigned cannot be deleted.

-- +goose Up
CREATE TABLE policies (
    id                   TEXT    NOT NULL PRIMARY KEY,
    name                 TEXT    NOT NULL,
    description          TEXT    NOT NULL,
    policy_type          TEXT    NOT NULL,
    content              TEXT    NOT NULL,
    priority             INTEGER NOT NULL, -- 0–100, higher first
    applicable_providers TEXT    NOT NULL, -- JSON array
    applicable_models    TEXT    NOT NULL, -- JSON array
    regulatory_framework TEXT    NOT NULL,
    severity             TEXT    NOT NULL,
    metadata             TEXT    NOT NULL, -- JSON object
    is_active            BOOLEAN NOT NULL,
    created_at           BIGINT  NOT NULL, -- Unix microseconds
    updated_at           BIGINT  NOT NULL
);
CREATE INDEX policies_order ON policies (priority DESC, name, id);

CREATE TABLE policy_presets (
    id          TEXT    NOT NULL PRIMARY KEY,
    name        TEXT    NOT NULL UNIQUE,
    description TEXT    NOT NULL,
    use_case    TEXT    NOT NULL,
    created_at  BIGINT  NOT NULL,
    updated_at  BIGINT  NOT NULL
);

CREATE TABLE policy_preset_policies (
    preset_id TEXT    NOT NULL REFERENCES policy_presets (id) ON DELETE CASCADE,
    position  INTEGER NOT NULL, -- the order of evaluation, from 0 (gaps allowed)
    policy_id TEXT    NOT NULL REFERENCES policies (id) ON DELETE CASCADE,
    PRIMARY KEY (preset_id, position),
    UNIQUE (preset_id, policy_id)
);
CREATE INDEX policy_preset_policies_policy ON policy_preset_policies (policy_id);

CREATE TABLE policy_assignments (
    kind       TEXT    NOT NULL, -- key | team | role
    subject    TEXT    NOT NULL, -- key id, team id, role name
    preset_id  TEXT    NOT NULL REFERENCES policy_presets (id),
    created_at BIGINT  NOT NULL,
    PRIMARY KEY (kind, subject)
);
CREATE INDEX policy_assignments_preset ON policy_assignments (preset_id);

-- One row: evaluations and violations, incremented in place.
CREATE TABLE policy_stats (
    id           INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    applications BIGINT  NOT NULL,
    violations   BIGINT  NOT NULL
);
INSERT INTO policy_stats (id, applications, violations) VALUES (1, 0, 0);

-- +goose Down
DROP TABLE policy_stats;
DROP TABLE policy_assignments;
DROP TABLE policy_preset_policies;
DROP TABLE policy_presets;
DROP TABLE policies;
