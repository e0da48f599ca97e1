-- The long-term audit log, SQLite: user_id and conversation_id become
-- columns for the log filters (filled from the entries already stored), with
-- indexes for the filters the log API takes. SQLite has no partitions: the
-- retention deletes by time (internal/audit/partitions.go).

-- +goose Up
ALTER TABLE audit_logs ADD COLUMN user_id TEXT NOT NULL DEFAULT '';
ALTER TABLE audit_logs ADD COLUMN conversation_id TEXT NOT NULL DEFAULT '';
UPDATE audit_logs SET
    user_id = COALESCE(json_extract(entry, '$.user_id'), ''),
    conversation_id = COALESCE(json_extract(entry, '$.conversation_id'), '')
WHERE json_valid(entry);
CREATE INDEX audit_logs_user_id_ts ON audit_logs (user_id, ts);
CREATE INDEX audit_logs_conversation_id_ts ON audit_logs (conversation_id, ts);
CREATE INDEX audit_logs_provider_ts ON audit_logs (provider, ts);
CREATE INDEX audit_logs_model_ts ON audit_logs (model, ts);
CREATE INDEX audit_logs_status_ts ON audit_logs (status, ts);

-- +goose Down
DROP INDEX audit_logs_status_ts;
DROP INDEX audit_logs_model_ts;
DROP INDEX audit_logs_provider_ts;
DROP INDEX audit_logs_conversation_id_ts;
DROP INDEX audit_logs_user_id_ts;
ALTER TABLE audit_logs DROP COLUMN conversation_id;
ALTER TABLE audit_logs DROP COLUMN user_id;
