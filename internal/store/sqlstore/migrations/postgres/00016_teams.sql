-- Teams (postgres, internal/teams): limits, a model allow-list and a policy set
-- shared by the signed-in users of a team. id is a team id or a directory
-- group name (a user's team is the first of their groups that has a row).
-- model_allowlist is a JSON array (empty: every model).

-- +goose Up
CREATE TABLE teams (
    id              TEXT COLLATE "C" NOT NULL PRIMARY KEY,
    rpm_limit       BIGINT NOT NULL,
    tpm_limit       BIGINT NOT NULL,
    max_budget_usd  DOUBLE PRECISION NOT NULL,
    budget_period   TEXT NOT NULL,
    model_allowlist TEXT NOT NULL,
    policy_set      TEXT NOT NULL,
    created_at      BIGINT NOT NULL, -- Unix microseconds
    updated_at      BIGINT NOT NULL
);

-- +goose Down
DROP TABLE teams;
