package e2e

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/config"
)

// TestToolCallsUnderThePreset: a tool call's arguments are checked under
// the caller's preset (issue 14's "and tool calls"): a key under the
// HIPAA-like preset is refused a call carrying an SSN on a strict server —
// the tool never runs, the refusal names the policy — while a clean call
// passes; on a log-mode server the same call runs and its audit entry is
// flagged with the policy's violation.
func TestToolCallsUnderThePreset(t *testing.T) {
	up, calls := toolServer(t)
	g := start(t, nil, config.Map{"SVC_MCP_ALLOW_PRIVATE": "true", "MCP_GATEWAY_ENABLED": "true"})
	for id, mode := range map[string]string{"strict-crm": "strict", "log-crm": "log"} {
		if st := g.request(g.proxy, "POST", "/api/mcp/servers", map[string]any{"id": id, "base_url": up + "/mcp",
			"auth_type": "bearer", "auth_token": "upstream-token", "guardrail_mode": mode}, nil); st != 201 {
			t.Fatalf("register %s: %d", id, st)
		}
	}
	key, _ := g.newKey(map[string]any{"policy_set": hipaaLikePreset(t, g)})
	ctx := context.Background()
	ssn := map[string]any{"text": "Note for the claim: SSN 536-22-1234."}

	strict, err := mcpClient(t, g.proxy+"/strict-crm/mcp/", key)
	if err != nil {
		t.Fatal(err)
	}
	_, err = strict.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: ssn})
	if err == nil || !strings.Contains(err.Error(), "no-ssn") {
		t.Fatalf("SSN in a strict server's call: %v, want a refusal naming no-ssn", err)
	}
	if calls.Load() != 0 {
		t.Fatal("the refused call reached the tool")
	}
	if r, err := strict.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: map[string]any{"text": "call back tomorrow"}}); err != nil || r.IsError {
		t.Fatalf("a clean call: %v %+v", err, r)
	}

	logged, err := mcpClient(t, g.proxy+"/log-crm/mcp/", key)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := logged.CallTool(ctx, &mcp.CallToolParams{Name: "write", Arguments: ssn}); err != nil || r.IsError {
		t.Fatalf("SSN on a log-mode server: %v %+v, want the call to run", err, r)
	}
	entries := g.entriesAtLeast("provider=mcp:log-crm", 1)
	if len(entries) == 0 {
		t.Fatal("no audit entry for the log-mode call")
	}
	tc, _ := entries[0]["tool_call"].(map[string]any)
	if v, _ := entries[0]["compliance_violations"].([]any); tc == nil || tc["flagged"] != true || len(v) == 0 {
		t.Errorf("log-mode entry %v: want flagged with the violation", entries[0])
	}
}
