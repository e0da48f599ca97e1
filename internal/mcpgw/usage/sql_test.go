package usage_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/mcpgw/usage"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// call is a tool call as the gateway records it.
type call struct {
	id            string
	ago           time.Duration
	server, tool  string
	p             *identity.Principal
	outcome       string
	status        int
	cost          float64
	latency       int64
	args          string // logged arguments, "" when not logged
	notToolCall   bool   // a model call's entry instead
	notWrittenYet bool   // in the hot tier only
}

// entry is the audit entry of c, as the tool gateway's recorder
// (internal/wire's mcpRecorder) writes it.
func (c call) entry() audit.Entry {
	e := audit.Entry{RequestID: c.id, Timestamp: now.Add(-c.ago).Format(time.RFC3339Nano),
		Provider: "mcp:" + c.server, Model: c.tool, ModelProvider: "mcp", Cost: c.cost, LatencyMS: c.latency,
		ContentType: "tool_call", Status: c.status, Endpoint: "mcp/tools/call", ComplianceStatus: "clean",
		Tool: &audit.ToolCall{ServerID: c.server, Tool: c.tool, Outcome: c.outcome, Surface: "mcp",
			ArgumentBytes: 2 + len(c.args), ArgumentsSHA256: "sha-" + c.id, Cached: c.outcome == "cached"}}
	if c.args != "" {
		e.Tool.Arguments = json.RawMessage(c.args)
	}
	if c.notToolCall {
		e.Provider, e.ModelProvider, e.ContentType, e.Endpoint, e.Tool = c.server, c.server, "chat", "chat", nil
	}
	e.SetCaller(c.p)
	e.Metrics.Success = c.status < 400 && c.outcome != "tool_error"
	if c.status >= 400 {
		e.ErrorType, e.Error = c.outcome, "refused"
	}
	return e
}

var keyK2 = &identity.Principal{Kind: identity.VirtualKey, ID: "k2", MaskedKey: "sk-svc-k2…"}

// calls are the log of the SQL tests; now is 2026-03-10 15:30 UTC.
var calls = []call{
	{id: "r1", ago: 3 * time.Hour, server: "github", tool: "create_issue", p: keyK1, outcome: "ok", status: 200, cost: 0.01, latency: 10, args: `{"title":"bug"}`},
	{id: "r2", ago: 2 * time.Hour, server: "github", tool: "create_issue", p: keyK2, outcome: "tool_error", status: 200, cost: 0.01, latency: 30},
	{id: "r3", ago: 90 * time.Minute, server: "github", tool: "list_repos", p: keyK1, outcome: "denied", status: 403},
	{id: "r4", ago: 30 * time.Hour, server: "fs", tool: "read", p: keyK1, outcome: "cached", status: 200, latency: 1},
	{id: "r5", ago: time.Hour, server: "openai", tool: "gpt-4o", p: keyK1, status: 200, cost: 2, notToolCall: true},
	{id: "r6", ago: time.Hour, server: "fs", tool: "read", p: userU1, outcome: "ok", status: 200, latency: 5},
	{id: "h1", ago: 10 * time.Minute, server: "github", tool: "create_issue", p: keyK1, outcome: "ok", status: 200, cost: 0.01, latency: 20, notWrittenYet: true},
}

// hotTier holds entries the bridge has not written yet.
type hotTier [][]byte

func (h hotTier) StreamUnacked(_ context.Context, _, _ string, limit int) ([]store.StreamEntry, error) {
	var out []store.StreamEntry
	for i, v := range h[:min(limit, len(h))] {
		out = append(out, store.StreamEntry{ID: string(rune('a' + i)), Value: v})
	}
	return out, nil
}

// sqlAPI writes calls to a new audit store on db (the hot tier holds the
// unwritten ones) and returns the API over the merged reader.
func sqlAPI(t *testing.T, db *sqlstore.DB) *usage.API {
	t.Helper()
	s := audit.NewSQLStore(db)
	var (
		recs []audit.Record
		hot  hotTier
	)
	for _, c := range calls {
		js, err := json.Marshal(c.entry())
		if err != nil {
			t.Fatal(err)
		}
		if c.notWrittenYet {
			hot = append(hot, js)
			continue
		}
		rec, err := audit.RecordFromJSON(js)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, rec)
	}
	if _, err := s.Write(t.Context(), recs, nil); err != nil {
		t.Fatal(err)
	}
	return newAPI(&audit.Reader{Store: s, Hot: hot})
}

// TestLogsOnSQL reads the tool calls back through GET /api/mcp/logs on a
// real audit store: model calls never listed, each filter, key and user
// scoping, cursor paging, logged arguments, and bad parameters.
func TestLogsOnSQL(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		h := sqlAPI(t, db).LogsHandler()
		for _, tt := range []struct {
			p      *identity.Principal
			params string
			want   []string
			total  int64
		}{
			{admin, "", []string{"h1", "r6", "r3", "r2", "r1", "r4"}, 6},
			{admin, "server_id=github", []string{"h1", "r3", "r2", "r1"}, 4},
			{admin, "tool=read", []string{"r6", "r4"}, 2},
			{admin, "server_id=github&tool=create_issue&outcome=error", []string{"r2"}, 1},
			{admin, "outcome=success", []string{"h1", "r6", "r1", "r4"}, 4},
			{admin, "status=403", []string{"r3"}, 1},
			{admin, "key_id=k2", []string{"r2"}, 1},
			{admin, "server_id=openai", []string{}, 0},
			// The model log's filters are not this route's.
			{admin, "provider=openai&model=gpt-4o&conversation_id=c", []string{"h1", "r6", "r3", "r2", "r1", "r4"}, 6},
			{admin, "days=1", []string{"h1", "r6", "r3", "r2", "r1"}, 5},
			{admin, "limit=2", []string{"h1", "r6"}, 6},
			{admin, "limit=2&before=r6", []string{"r3", "r2"}, 4},
			{admin, "limit=2&offset=4", []string{"r1", "r4"}, 6},
			{keyK1, "", []string{"h1", "r3", "r1", "r4"}, 4},
			{keyK1, "key_id=k1&server_id=fs", []string{"r4"}, 1},
			{keyK2, "", []string{"r2"}, 1},
			{userU1, "", []string{"r6"}, 1},
		} {
			status, body := get(t, h, tt.p, "/api/mcp/logs?"+tt.params)
			page := decode[usage.LogPage](t, status, body)
			got := []string{}
			for _, it := range page.Data {
				got = append(got, it.RequestID)
			}
			if !slices.Equal(got, tt.want) || page.Total != tt.total {
				t.Errorf("%s ?%s: got %v (total %d), want %v (total %d)", tt.p.Caller(), tt.params, got, page.Total, tt.want, tt.total)
			}
		}
		status, body := get(t, h, keyK1, "/api/mcp/logs?server_id=github&tool=create_issue")
		page := decode[usage.LogPage](t, status, body)
		want := []usage.LogItem{
			{RequestID: "h1", Timestamp: now.Add(-10 * time.Minute).Format(time.RFC3339Nano), ServerID: "github", Tool: "create_issue",
				KeyID: "k1", Key: "sk-svc-k1…", UserID: "k1", Outcome: "ok", Success: true, Status: 200, Surface: "mcp",
				LatencyMS: 20, CostUSD: 0.01, ComplianceStatus: "clean", Violations: []string{}, ArgumentsBytes: 2, ArgumentsSHA256: "sha-h1"},
			{RequestID: "r1", Timestamp: now.Add(-3 * time.Hour).Format(time.RFC3339Nano), ServerID: "github", Tool: "create_issue",
				KeyID: "k1", Key: "sk-svc-k1…", UserID: "k1", Outcome: "ok", Success: true, Status: 200, Surface: "mcp",
				LatencyMS: 10, CostUSD: 0.01, ComplianceStatus: "clean", Violations: []string{}, ArgumentsBytes: 17, ArgumentsSHA256: "sha-r1",
				Arguments: json.RawMessage(`{"title":"bug"}`)},
		}
		if diff := cmp.Diff(want, page.Data); diff != "" {
			t.Errorf("items (-want +got):\n%s", diff)
		}
		for _, tt := range []struct {
			p                 *identity.Principal
			params            string
			wantStatus        int
			wantType, wantPar string
		}{
			{keyK1, "key_id=k2", http.StatusForbidden, "permission_error", "key_id"},
			{userU1, "user_id=virtual_key:k1", http.StatusForbidden, "permission_error", "user_id"},
			{admin, "before=no-such-entry", http.StatusBadRequest, "invalid_request_error", "before"},
			{admin, "outcome=cached", http.StatusBadRequest, "invalid_request_error", "outcome"},
			{admin, "limit=5000", http.StatusBadRequest, "invalid_request_error", "limit"},
		} {
			status, body := get(t, h, tt.p, "/api/mcp/logs?"+tt.params)
			wantError(t, status, body, tt.wantStatus, tt.wantType, tt.wantPar)
		}
	})
}

// TestUsageOnSQL sums the tool calls through GET /api/mcp/usage on a real
// audit store: per server and tool over the window, per day and per hour,
// scoped to a key, model calls never counted, unwritten calls counted.
func TestUsageOnSQL(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		h := sqlAPI(t, db).UsageHandler()
		today := time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC)
		for _, tt := range []struct {
			p      *identity.Principal
			params string
			want   []usage.Row
		}{
			{admin, "period=all", []usage.Row{
				{ServerID: "fs", Tool: "read", Calls: 2, AvgLatencyMS: 3},
				{ServerID: "github", Tool: "create_issue", Calls: 3, Errors: 1, ErrorRate: 1.0 / 3, CostUSD: 0.03, AvgLatencyMS: 20},
				{ServerID: "github", Tool: "list_repos", Calls: 1, Errors: 1, ErrorRate: 1},
			}},
			{keyK1, "", []usage.Row{
				{PeriodStart: today, ServerID: "github", Tool: "create_issue", Calls: 2, CostUSD: 0.02, AvgLatencyMS: 15},
				{PeriodStart: today, ServerID: "github", Tool: "list_repos", Calls: 1, Errors: 1, ErrorRate: 1},
				{PeriodStart: today.Add(-24 * time.Hour), ServerID: "fs", Tool: "read", Calls: 1, AvgLatencyMS: 1},
			}},
			{admin, "period=hour&days=1&server_id=github&tool=create_issue", []usage.Row{
				{PeriodStart: today.Add(15 * time.Hour), ServerID: "github", Tool: "create_issue", Calls: 1, CostUSD: 0.01, AvgLatencyMS: 20},
				{PeriodStart: today.Add(13 * time.Hour), ServerID: "github", Tool: "create_issue", Calls: 1, Errors: 1, ErrorRate: 1, CostUSD: 0.01, AvgLatencyMS: 30},
				{PeriodStart: today.Add(12 * time.Hour), ServerID: "github", Tool: "create_issue", Calls: 1, CostUSD: 0.01, AvgLatencyMS: 10},
			}},
			{admin, "period=all&outcome=error", []usage.Row{
				{ServerID: "github", Tool: "create_issue", Calls: 1, Errors: 1, ErrorRate: 1, CostUSD: 0.01, AvgLatencyMS: 30},
				{ServerID: "github", Tool: "list_repos", Calls: 1, Errors: 1, ErrorRate: 1},
			}},
			{userU1, "period=all", []usage.Row{{ServerID: "fs", Tool: "read", Calls: 1, AvgLatencyMS: 5}}},
			{admin, "server_id=openai", []usage.Row{}},
		} {
			status, body := get(t, h, tt.p, "/api/mcp/usage?"+tt.params)
			rep := decode[usage.Report](t, status, body)
			for i := range tt.want {
				if tt.want[i].PeriodStart.IsZero() {
					tt.want[i].PeriodStart = rep.From
				}
			}
			if diff := cmp.Diff(tt.want, rep.Data, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("%s ?%s (-want +got):\n%s", tt.p.Caller(), tt.params, diff)
			}
		}
		status, body := get(t, h, keyK2, "/api/mcp/usage?key_id=k1")
		wantError(t, status, body, http.StatusForbidden, "permission_error", "key_id")
	})
}
