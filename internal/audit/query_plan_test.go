package audit

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// planCase is one query shape of the log API, and the index its plan on
// SQLite must use.
type planCase struct {
	name  string
	sql   string
	args  []any
	index string // "" when any plan without a full scan will do
}

// planCases are the statements the log API's reads run (GET /api/vas/logs,
// /api/vas/metrics, /api/mcp/logs, /api/mcp/usage, the spend check), for
// each filter the API takes.
func planCases() []planCase {
	since := time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	cursor := &Cursor{Timestamp: since.Add(time.Hour), RequestID: "r"}
	var out []planCase
	for _, f := range []struct {
		name  string
		q     Query
		index string
	}{
		{"window", Query{Since: since, Until: since.Add(time.Hour)}, "audit_logs_ts"},
		{"provider", Query{Since: since, Provider: "openai"}, "audit_logs_provider_ts"},
		{"model", Query{Since: since, Model: "gpt-4o"}, "audit_logs_model_ts"},
		{"key", Query{Since: since, KeyID: "vk_1"}, "audit_logs_key_id_ts"},
		{"user", Query{Since: since, UserID: "u-1"}, "audit_logs_user_id_ts"},
		{"conversation", Query{Since: since, ConversationID: "c-1"}, "audit_logs_conversation_id_ts"},
		{"status", Query{Since: since, Status: 429}, "audit_logs_status_ts"},
		{"cursor", Query{Since: since, Before: cursor}, "audit_logs_ts"},
		{"tool calls", Query{Since: since, ProviderPrefix: "mcp:"}, "audit_logs_provider_ts"},
		{"tool calls of a user", Query{Since: since, ProviderPrefix: "mcp:", UserID: "u-1"}, ""},
		{"tool calls of a key", Query{Since: since, ProviderPrefix: "mcp:", KeyID: "vk_1"}, ""},
	} {
		cond, args := where(f.q)
		out = append(out,
			planCase{"count " + f.name, countLogsSQL(cond), args, f.index},
			planCase{"page " + f.name, pageLogsSQL(cond), append(args, 100, 0), f.index},
			planCase{"groups " + f.name, groupLogsSQL(cond, time.Hour), append(args, 100), f.index})
	}
	us := sqlstore.Micros(since)
	return append(out,
		planCase{"stored ids", `SELECT request_id FROM audit_logs WHERE request_id IN (?, ?)`, []any{"a", "b"}, "sqlite_autoindex_audit_logs_1"},
		planCase{"locate", `SELECT ts FROM audit_logs WHERE request_id = ? ORDER BY ts DESC LIMIT 1`, []any{"a"}, "sqlite_autoindex_audit_logs_1"},
		planCase{"summary", `SELECT COUNT(*), SUM(cost) FROM audit_logs WHERE ts >= ?`, []any{us}, "audit_logs_ts"},
		planCase{"distinct", `SELECT DISTINCT provider FROM audit_logs WHERE ts >= ? AND provider <> '' ORDER BY provider`, []any{us}, ""},
		planCase{"spend", `SELECT SUM(cost) FROM audit_logs WHERE key_id = ? AND ts >= ?`, []any{"vk_1", us}, "audit_logs_key_id_ts"},
	)
}

// TestQueryPlansSQLite checks, with EXPLAIN QUERY PLAN, that every read of
// audit_logs on SQLite searches an index (the one its filter names),
// never scans the table: what keeps the log API fast as the table grows,
// and what an index may be dropped or narrowed for only if this still
// holds.
func TestQueryPlansSQLite(t *testing.T) {
	db, err := sqlstore.Open(context.Background(), "sqlite://"+filepath.Join(t.TempDir(), "svc.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, c := range planCases() {
		rows, err := db.Query(t.Context(), "EXPLAIN QUERY PLAN "+c.sql, c.args...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		var plan []string
		for rows.Next() {
			var id, parent, notused int
			var detail string
			if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, detail)
		}
		rows.Close()
		all := strings.Join(plan, "; ")
		t.Logf("%s: %s", c.name, all)
		for _, step := range plan {
			if strings.HasPrefix(step, "SCAN audit_logs") && !strings.Contains(step, "INDEX") {
				t.Errorf("%s scans the table: %s", c.name, all)
			}
		}
		if c.index != "" && !strings.Contains(all, "INDEX "+c.index+" ") && !strings.HasSuffix(all, "INDEX "+c.index) {
			t.Errorf("%s does not use %s: %s", c.name, c.index, all)
		}
	}
}
