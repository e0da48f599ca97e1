package e2e

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// npmDir holds the npm clients the tests drive svc with (package.json
// pins them; .ci/run installs them with npm ci).
const npmDir = "testdata/npm"

// runNode runs script of npmDir with env, returning its stdout. It skips
// when Node or the installed packages are missing, saying how to enable.
func runNode(t *testing.T, script string, env ...string) []byte {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node not on PATH: the npm client tests need Node.js")
	}
	if _, err := os.Stat(filepath.Join(npmDir, "node_modules", "openai")); err != nil {
		t.Skipf("npm clients not installed: run `npm ci` in internal/e2e/%s (.ci/run does)", npmDir)
	}
	cmd := exec.CommandContext(t.Context(), node, script)
	cmd.Dir = npmDir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node %s: %v\n%s", script, err, stderr.String())
	}
	return out
}

// npmResponses is what responses.mjs prints.
type npmResponses struct {
	Events []string `json:"events"`
	Args   string   `json:"args"`
	Call   struct {
		Name, CallID, Arguments string
	} `json:"call"`
	First string `json:"first"`
	Next  struct {
		ID, Text, Previous, Status string
	} `json:"next"`
	Retrieved string `json:"retrieved"`
}

// checkNPMResponses runs responses.mjs through g with model and checks a
// streamed function call and its continuation.
func checkNPMResponses(t *testing.T, g *gateway, model string) npmResponses {
	t.Helper()
	key, _ := g.newKey(nil)
	out := runNode(t, "responses.mjs", "SVC_BASE_URL="+g.proxy+"/v1", "SVC_KEY="+key, "SVC_MODEL="+model)
	var r npmResponses
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("output %s: %v", out, err)
	}
	for _, want := range []string{"response.created", "response.output_item.added", "response.function_call_arguments.delta", "response.output_item.done", "response.completed"} {
		if !contains(r.Events, want) {
			t.Errorf("events %v lack %s", r.Events, want)
		}
	}
	var args map[string]string
	if err := json.Unmarshal([]byte(r.Call.Arguments), &args); err != nil || args["location"] == "" || args["unit"] == "" || r.Args != r.Call.Arguments {
		t.Errorf("call %+v (deltas %q): want get_weather with location and unit, the deltas adding up to the arguments", r.Call, r.Args)
	}
	if r.Call.Name != "get_weather" || r.Next.Previous != r.First || r.Next.Status != "completed" || strings.TrimSpace(r.Next.Text) == "" || r.Retrieved != r.Next.ID {
		t.Errorf("continuation %+v of %s, retrieved %s", r.Next, r.First, r.Retrieved)
	}
	return r
}

// The openai npm package's Responses client, streamed function calling
// through svc to a provider without the Responses API (the fake Anthropic).
func TestNPMResponsesTranslated(t *testing.T) {
	g, fake := anthropicGateway(t)
	r := checkNPMResponses(t, g, "claude-sonnet-4-5")
	body := string(lastPost(t, fake.Requests()).Body)
	if !strings.Contains(body, `"tool_result"`) || !strings.Contains(body, r.Call.CallID) {
		t.Errorf("the continuation reached Anthropic without the tool result: %s", body)
	}
}
