-- Document-to-policy jobs, SQLite (internal/policy/docs). A job holds the
-- uploaded document (at most 50 MB, dropped once the job ends) until a
-- runner on any replica claims it: claimed_by and claimed_until are the
-- claim's lease (Unix microseconds), renewed while the runner works; a job
-- whose lease passed was interrupted (a crash, a restart) and is claimed
-- again, up to a number of attempts, then failed. results is the JSON of
-- the suggested policies once completed.

-- +goose Up
CREATE TABLE policy_jobs (
    id             TEXT    NOT NULL PRIMARY KEY,
    filename       TEXT    NOT NULL,
    format         TEXT    NOT NULL, -- pdf | docx | txt
    size           INTEGER NOT NULL, -- bytes of the document
    status         TEXT    NOT NULL, -- pending | processing | completed | failed
    progress_pct   INTEGER NOT NULL,
    reason         TEXT    NOT NULL, -- why it failed
    message        TEXT    NOT NULL, -- a note on the outcome
    created_at     INTEGER NOT NULL, -- Unix microseconds
    updated_at     INTEGER NOT NULL,
    claimed_by     TEXT    NOT NULL,
    claimed_until  INTEGER NOT NULL,
    attempts       INTEGER NOT NULL,
    total_policies INTEGER NOT NULL,
    results        TEXT,             -- JSON array of suggestions
    document       BLOB
);
CREATE INDEX policy_jobs_status ON policy_jobs (status, claimed_until);

-- +goose Down
DROP TABLE policy_jobs;
