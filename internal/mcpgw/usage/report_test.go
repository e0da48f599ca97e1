package usage_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/mcpgw/usage"
)

func decode[T any](t *testing.T, status int, body []byte) T {
	t.Helper()
	var v T
	if status != http.StatusOK {
		t.Fatalf("status %d: %s", status, body)
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("%v: %s", err, body)
	}
	return v
}

// TestUsageReport checks the report made of the source's groups: rows with
// the server's id, rates and averages, totals, the bucket asked for, and the
// window widened to whole periods.
func TestUsageReport(t *testing.T) {
	day := time.Date(2026, 3, 9, 0, 0, 0, 0, time.UTC)
	src := &fakeSource{groups: []audit.Group{
		{Bucket: day, Provider: "mcp:github", Model: "create_issue", Requests: 4, Errors: 1, Cost: 0.4, LatencySumMS: 100},
		{Bucket: day.Add(-24 * time.Hour), Provider: "mcp:fs", Model: "read", Requests: 2, Cost: 0, LatencySumMS: 3},
	}}
	status, body := get(t, newAPI(src).UsageHandler(), admin, "/api/mcp/usage?from=2026-03-08T10:00:00Z&to=2026-03-09T12:00:00Z")
	got := decode[usage.Report](t, status, body)
	want := usage.Report{Success: true, Period: "day",
		From: time.Date(2026, 3, 8, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 10, 0, 0, 0, 0, time.UTC),
		Totals: usage.Totals{Calls: 6, Errors: 1, CostUSD: 0.4},
		Data: []usage.Row{
			{PeriodStart: day, ServerID: "github", Tool: "create_issue", Calls: 4, Errors: 1, ErrorRate: 0.25, CostUSD: 0.4, AvgLatencyMS: 25},
			{PeriodStart: day.Add(-24 * time.Hour), ServerID: "fs", Tool: "read", Calls: 2, AvgLatencyMS: 1.5},
		}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("report (-want +got):\n%s", diff)
	}
	if src.bucket != 24*time.Hour || !src.q.Since.Equal(want.From) || !src.q.Until.Equal(want.To) || src.q.Limit != usage.MaxRows+1 {
		t.Errorf("asked bucket %v, window %v–%v, limit %d", src.bucket, src.q.Since, src.q.Until, src.q.Limit)
	}
}

// TestUsagePeriods checks the bucket and window of each period, and the
// default window (audit's days).
func TestUsagePeriods(t *testing.T) {
	for _, tt := range []struct {
		params     string
		bucket     time.Duration
		from, to   time.Time
		periodName string
	}{
		{"", 24 * time.Hour, time.Date(2026, 2, 8, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 11, 0, 0, 0, 0, time.UTC), "day"},
		{"period=hour&days=31", time.Hour, time.Date(2026, 2, 7, 15, 0, 0, 0, time.UTC), time.Date(2026, 3, 10, 16, 0, 0, 0, time.UTC), "hour"},
		{"period=all&days=7", 0, now.Add(-7 * 24 * time.Hour), now, "all"},
		{"period=day&to=2026-03-01T00:00:00Z", 24 * time.Hour, time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), "day"},
	} {
		src := &fakeSource{groups: []audit.Group{{Provider: "mcp:s", Model: "t", Requests: 1}}}
		status, body := get(t, newAPI(src).UsageHandler(), admin, "/api/mcp/usage?"+tt.params)
		got := decode[usage.Report](t, status, body)
		if src.bucket != tt.bucket || !got.From.Equal(tt.from) || !got.To.Equal(tt.to) || got.Period != tt.periodName {
			t.Errorf("%q: bucket %v, %s %v–%v; want %v, %s %v–%v", tt.params, src.bucket, got.Period, got.From, got.To,
				tt.bucket, tt.periodName, tt.from, tt.to)
		}
		// A group over the whole window starts with it.
		if len(got.Data) != 1 || !got.Data[0].PeriodStart.Equal(got.From) {
			t.Errorf("%q: rows %+v, want one starting at %v", tt.params, got.Data, got.From)
		}
	}
}

// TestUsageTruncated checks that a report past MaxRows keeps MaxRows rows
// and says so.
func TestUsageTruncated(t *testing.T) {
	gs := make([]audit.Group, usage.MaxRows+1)
	for i := range gs {
		gs[i] = audit.Group{Bucket: now.Truncate(time.Hour), Provider: "mcp:s", Model: "t", Requests: 1}
	}
	for _, n := range []int{usage.MaxRows, usage.MaxRows + 1} {
		src := &fakeSource{groups: gs[:n]}
		status, body := get(t, newAPI(src).UsageHandler(), admin, "/api/mcp/usage?period=hour")
		got := decode[usage.Report](t, status, body)
		if len(got.Data) != usage.MaxRows || got.Truncated != (n > usage.MaxRows) || got.Totals.Calls != usage.MaxRows {
			t.Errorf("%d groups: %d rows, truncated %v, %d calls", n, len(got.Data), got.Truncated, got.Totals.Calls)
		}
	}
}

// TestLogItems checks the items made of stored entries: the tool part
// lifted out, arguments only when they were logged, the page's paging
// fields kept, and an entry that does not decode listed as unreadable.
func TestLogItems(t *testing.T) {
	withArgs := audit.Entry{RequestID: "r1", Timestamp: "2026-03-10T15:00:00.000001Z", Provider: "mcp:github",
		Model: "create_issue", Cost: 0.01, LatencyMS: 42, Status: 200, KeyID: "k1", UserID: "virtual_key:k1",
		ComplianceStatus: "flagged", ComplianceViolations: []string{"email"},
		Metrics: audit.EntryMetrics{Success: true, CustomMetrics: audit.CustomMetrics{APIKey: "sk-svc-k1…"}},
		Tool: &audit.ToolCall{ServerID: "github", Tool: "create_issue", Outcome: "ok", Surface: "mcp", ArgumentBytes: 17,
			ArgumentsSHA256: "ab12", Arguments: json.RawMessage(`{"title":"x"}`), Flagged: true}}
	noArgs := audit.Entry{RequestID: "r2", Timestamp: "2026-03-10T14:00:00Z", Provider: "mcp:fs", Model: "write",
		Status: 403, ErrorType: "denied", Error: "tool write is not allowed",
		Tool: &audit.ToolCall{ServerID: "fs", Tool: "write", Outcome: "denied", Surface: "v1", ArgumentBytes: 9, ArgumentsSHA256: "cd34"}}
	var data []json.RawMessage
	for _, e := range []audit.Entry{withArgs, noArgs} {
		js, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		data = append(data, js)
	}
	data = append(data, json.RawMessage(`{"request_id":"r3","timestamp":"2026-03-10T13:00:00Z","provider":"mcp:x","model":"t","status":200,"tool_call":"oops"}`))
	src := &fakeSource{page: audit.Page{Success: true, Total: 7, Limit: 3, Offset: 0, Data: data, NextBefore: "r3"}}
	status, body := get(t, newAPI(src).LogsHandler(), admin, "/api/mcp/logs?limit=3&before=r0")
	got := decode[usage.LogPage](t, status, body)
	want := usage.LogPage{Success: true, Total: 7, Limit: 3, NextBefore: "r3", Data: []usage.LogItem{
		{RequestID: "r1", Timestamp: "2026-03-10T15:00:00.000001Z", ServerID: "github", Tool: "create_issue", KeyID: "k1",
			Key: "sk-svc-k1…", UserID: "virtual_key:k1", Outcome: "ok", Success: true, Status: 200, Surface: "mcp",
			LatencyMS: 42, CostUSD: 0.01, Flagged: true, ComplianceStatus: "flagged", Violations: []string{"email"},
			ArgumentsBytes: 17, ArgumentsSHA256: "ab12", Arguments: json.RawMessage(`{"title":"x"}`)},
		{RequestID: "r2", Timestamp: "2026-03-10T14:00:00Z", ServerID: "fs", Tool: "write", Outcome: "denied", Status: 403,
			Surface: "v1", Violations: []string{}, ArgumentsBytes: 9, ArgumentsSHA256: "cd34", ErrorType: "denied",
			Error: "tool write is not allowed"},
		{RequestID: "r3", Timestamp: "2026-03-10T13:00:00.000000Z", ServerID: "x", Tool: "t", Outcome: usage.OutcomeUnreadable,
			Status: 200, Violations: []string{}},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("page (-want +got):\n%s", diff)
	}
	if src.before != "r0" || src.q.Limit != 3 {
		t.Errorf("asked before %q limit %d, want r0 and 3", src.before, src.q.Limit)
	}
	if n := strings.Count(string(body), `"arguments":`); n != 1 {
		t.Errorf("arguments appear %d times, want once (the logged ones): %s", n, body)
	}
}
