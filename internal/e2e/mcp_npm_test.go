package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/mcpgw/httpapi"
)

// npmMCPSDK is the official TypeScript MCP SDK's directory in npmDir.
const npmMCPSDK = "node_modules/@modelcontextprotocol/sdk"

// nodeWith returns node's path, skipping the test when Node or the npm
// package pkg (a path under npmDir) is missing, saying how to enable it.
func nodeWith(t *testing.T, pkg string) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not on PATH: the npm client tests need Node.js")
	}
	if _, err := os.Stat(filepath.Join(npmDir, pkg)); err != nil {
		t.Skipf("%s not installed: run `npm ci` in internal/e2e/%s (.ci/run does)", pkg, npmDir)
	}
	return node
}

// nodeRun runs node with args in dir (under npmDir) and env, returning
// stdout, stderr and the exit error (nil on success): the caller decides
// what a failure means.
func nodeRun(t *testing.T, node, dir string, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), node, args...)
	cmd.Dir = filepath.Join(npmDir, dir)
	cmd.Env = append(os.Environ(), env...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("node %v: %v", args, err) // not started: not the client's answer
	}
	return out.String(), errOut.String(), err
}

// npmCall is one call mcp_client.mjs makes and what it got: a result, or
// the server's JSON-RPC refusal.
type npmCall struct {
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments,omitempty"`
	Text      string         `json:"text"`
	IsError   bool           `json:"isError"`
	Error     string         `json:"error"`
	Code      int64          `json:"code"`
}

// npmMCPSession is what mcp_client.mjs prints.
type npmMCPSession struct {
	Server struct{ Name, Version string } `json:"server"`
	Tools  []string                       `json:"tools"`
	Calls  []npmCall                      `json:"calls"`
}

// npmMCP runs mcp_client.mjs against path on g's proxy with key, making
// calls; it returns the session or, when the client failed, its stderr.
func npmMCP(t *testing.T, node string, g *gateway, path, key string, calls []npmCall) (npmMCPSession, string, error) {
	t.Helper()
	req, _ := json.Marshal(calls)
	out, stderr, err := nodeRun(t, node, "", []string{"SVC_MCP_URL=" + g.proxy + path, "SVC_KEY=" + key, "SVC_CALLS=" + string(req)}, "mcp_client.mjs")
	var s npmMCPSession
	if err == nil {
		if jerr := json.Unmarshal([]byte(out), &s); jerr != nil {
			t.Fatalf("mcp_client.mjs printed %q: %v", out, jerr)
		}
	}
	return s, stderr, err
}

// mcpNPMGateway starts svc with the tool gateway and registers the SDK
// tool server twice: crm shows only write (allowed_tools), notes all but
// write (disallowed_tools). It returns the gateway and the server's call
// counter.
func mcpNPMGateway(t *testing.T) (*gateway, func() int64) {
	t.Helper()
	up, calls := toolServer(t)
	g := start(t, nil, config.Map{"SVC_MCP_ALLOW_PRIVATE": "true", "MCP_GATEWAY_ENABLED": "true"})
	for id, acl := range map[string]map[string]any{
		"crm":   {"allowed_tools": []string{"write"}},
		"notes": {"disallowed_tools": []string{"write"}},
	} {
		reg := map[string]any{"id": id, "base_url": up + "/mcp", "auth_type": "bearer", "auth_token": "upstream-token"}
		for k, v := range acl {
			reg[k] = v
		}
		if st := g.request(g.proxy, "POST", "/api/mcp/servers", reg, nil); st != 201 {
			t.Fatalf("register %s: %d", id, st)
		}
	}
	return g, calls.Load
}

// checkNPMCalls compares what the client got with want, in order: a want
// with Code set expects that JSON-RPC refusal, otherwise a result with
// Text.
func checkNPMCalls(t *testing.T, got, want []npmCall) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("calls %+v, want %d", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		switch {
		case w.Code != 0 && (g.Code != w.Code || g.Error == ""):
			t.Errorf("%s: %+v, want the JSON-RPC refusal %d", w.Name, g, w.Code)
		case w.Code == 0 && (g.Error != "" || g.IsError || g.Text != w.Text):
			t.Errorf("%s: %+v, want the result %q", w.Name, g, w.Text)
		}
	}
}

// TestMCPNpmSDK drives svc's MCP endpoints with the official TypeScript
// SDK's streamable-HTTP client: one server's endpoint and the aggregate
// show only the tools the registrations permit, calls carry their
// arguments to the upstream server and back, hidden tools are refused
// before the upstream, and a bad or revoked key cannot connect.
func TestMCPNpmSDK(t *testing.T) {
	node := nodeWith(t, npmMCPSDK)
	g, upstreamCalls := mcpNPMGateway(t)
	key, id := g.newKey(nil)

	crmCalls := []npmCall{
		{Name: "write", Arguments: map[string]any{"text": "hello from npm"}, Text: "wrote hello from npm"},
		{Name: "lookup", Arguments: map[string]any{"text": "acme"}, Code: httpapi.CodeForbidden},
	}
	s, stderr, err := npmMCP(t, node, g, "/crm/mcp/", key, crmCalls)
	if err != nil {
		t.Fatalf("/crm/mcp/: %v\n%s\n%s", err, stderr, g.logs.String())
	}
	if s.Server.Name != "svc/crm" || !slices.Equal(s.Tools, []string{"write"}) {
		t.Errorf("/crm/mcp/: server %+v, tools %v; want svc/crm showing only write", s.Server, s.Tools)
	}
	checkNPMCalls(t, s.Calls, crmCalls)
	if n := upstreamCalls(); n != 1 {
		t.Errorf("the tool server got %d calls, want 1 (the refused lookup must not reach it)", n)
	}

	aggCalls := []npmCall{
		{Name: "crm__write", Arguments: map[string]any{"text": "via aggregate"}, Text: "wrote via aggregate"},
		{Name: "notes__lookup", Arguments: map[string]any{"text": "acme"}, Text: "found"},
		{Name: "notes__write", Arguments: map[string]any{"text": "x"}, Code: httpapi.CodeForbidden},
	}
	s, stderr, err = npmMCP(t, node, g, "/mcp/", key, aggCalls)
	if err != nil {
		t.Fatalf("/mcp/: %v\n%s", err, stderr)
	}
	if s.Server.Name != "svc" || !slices.Equal(s.Tools, []string{"crm__write", "notes__lookup"}) {
		t.Errorf("/mcp/: server %+v, tools %v; want svc showing crm__write and notes__lookup", s.Server, s.Tools)
	}
	checkNPMCalls(t, s.Calls, aggCalls)
	if n := upstreamCalls(); n != 3 {
		t.Errorf("the tool server got %d calls, want 3", n)
	}

	// A key svc never issued, then the revoked one: no session, 401.
	if st := g.admin("POST", "/api/enterprise/vkeys/"+id+"/revoke", nil, nil); st != 200 {
		t.Fatalf("revoke: %d", st)
	}
	for name, k := range map[string]string{"unknown key": "sk-svc-not-a-key-0123456789", "revoked key": key} {
		for _, path := range []string{"/crm/mcp/", "/mcp/"} {
			_, stderr, err := npmMCP(t, node, g, path, k, []npmCall{{Name: "crm__write", Arguments: map[string]any{"text": "no"}}})
			if err == nil || !strings.Contains(stderr, "401") {
				t.Errorf("%s on %s: %v %q, want the client to fail with HTTP 401", name, path, err, stderr)
			}
		}
	}
	if n := upstreamCalls(); n != 3 {
		t.Errorf("the tool server got %d calls after the refused keys, want 3", n)
	}
}

// npmInspectorCLI is the MCP Inspector's CLI in npmDir: the standalone
// package of the code `npx @modelcontextprotocol/inspector --cli` runs (the
// full Inspector needs Node 22 and brings a web UI). It runs in its build
// directory: 1.0.3 looks for its package.json relative to the working
// directory.
const npmInspectorCLI = "node_modules/@modelcontextprotocol/inspector-cli/build"

// inspector runs the Inspector in CLI mode against path on g's proxy with
// key: one method, its options, the JSON it prints decoded into out.
func inspector(t *testing.T, node string, g *gateway, path, key string, out any, method ...string) (string, error) {
	t.Helper()
	args := append([]string{"cli.js", "--cli", g.proxy + path, "--transport", "http", "--method"}, method...)
	args = append(args, "--header", "Authorization: Bearer "+key)
	stdout, stderr, err := nodeRun(t, node, npmInspectorCLI, nil, args...)
	if err == nil {
		if jerr := json.Unmarshal([]byte(stdout), out); jerr != nil {
			t.Fatalf("inspector %v printed %q: %v", method, stdout, jerr)
		}
	}
	return stderr, err
}

// inspectorTools lists the tools through the Inspector.
func inspectorTools(t *testing.T, node string, g *gateway, path, key string) []string {
	t.Helper()
	var list struct{ Tools []struct{ Name string } }
	if stderr, err := inspector(t, node, g, path, key, &list, "tools/list"); err != nil {
		t.Fatalf("inspector tools/list on %s: %v\n%s", path, err, stderr)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// inspectorCall calls tool with one text argument through the Inspector,
// returning the result's text and isError.
func inspectorCall(t *testing.T, node string, g *gateway, path, key, tool, text string) (string, bool) {
	t.Helper()
	var res struct {
		Content []struct{ Type, Text string }
		IsError bool
	}
	if stderr, err := inspector(t, node, g, path, key, &res, "tools/call", "--tool-name", tool, "--tool-arg", "text="+text); err != nil {
		t.Fatalf("inspector tools/call %s on %s: %v\n%s", tool, path, err, stderr)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.Text)
	}
	return b.String(), res.IsError
}

// TestMCPNpmInspectorCLI drives svc with the MCP Inspector's CLI mode,
// non-interactively: tools/list and tools/call on one server's endpoint and
// on the aggregate, and a bad key refused.
func TestMCPNpmInspectorCLI(t *testing.T) {
	node := nodeWith(t, npmInspectorCLI+"/cli.js")
	g, upstreamCalls := mcpNPMGateway(t)
	key, _ := g.newKey(nil)
	if got := inspectorTools(t, node, g, "/crm/mcp/", key); !slices.Equal(got, []string{"write"}) {
		t.Errorf("/crm/mcp/ tools %v, want only write", got)
	}
	if got := inspectorTools(t, node, g, "/mcp/", key); !slices.Equal(got, []string{"crm__write", "notes__lookup"}) {
		t.Errorf("/mcp/ tools %v, want crm__write and notes__lookup", got)
	}
	if text, isErr := inspectorCall(t, node, g, "/crm/mcp/", key, "write", "from the inspector"); text != "wrote from the inspector" || isErr {
		t.Errorf("write: %q (isError %v)", text, isErr)
	}
	if text, isErr := inspectorCall(t, node, g, "/mcp/", key, "notes__lookup", "acme"); text != "found" || isErr {
		t.Errorf("notes__lookup: %q (isError %v)", text, isErr)
	}
	if n := upstreamCalls(); n != 2 {
		t.Errorf("the tool server got %d calls, want 2", n)
	}
	var out any
	if stderr, err := inspector(t, node, g, "/crm/mcp/", "sk-svc-not-a-key-0123456789", &out, "tools/list"); err == nil || !strings.Contains(stderr, "401") {
		t.Errorf("unknown key: %v %q, want the Inspector to fail with HTTP 401", err, stderr)
	}
}
