package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/providertest"
)

// The README's quickstart, as a new user runs it: the binary started with
// only a provider key on the embedded default, in an empty directory; the
// admin key read from ./data; a virtual key created; a chat completion
// through it; its audit entry read back; a clean stop. The provider is
// the fake OpenAI (OPENAI_API_BASE), and the ports are free ones instead
// of 7775 and 7778, so the test never collides with a running svc.
func TestQuickstart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "svc")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	fake := providertest.NewOpenAI(t, providertest.WithAPIKey("sk-quickstart-0123456789"), providertest.WithReply("hello from the fake"))
	proxyPort, mgmtPort := freePort(t), freePort(t)
	cmd := exec.Command(bin, "serve")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "OPENAI_API_KEY=sk-quickstart-0123456789",
		"OPENAI_API_BASE=" + fake.URL(), "SVC_HOST=127.0.0.1", "PROXY_PORT=" + proxyPort, "MANAGEMENT_PORT=" + mgmtPort, "BRIDGE_PORT=" + freePort(t), "COMPLIANCE_PORT=" + freePort(t), "POLICY_PORT=" + freePort(t)}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	proxy, mgmt := "http://127.0.0.1:"+proxyPort, "http://127.0.0.1:"+mgmtPort
	waitReady(t, mgmt+"/ready", &stderr)

	admin, err := os.ReadFile(filepath.Join(dir, "data", "admin_api_key"))
	if err != nil {
		t.Fatalf("data/admin_api_key: %v", err)
	}
	adminKey := strings.TrimSpace(string(admin))
	var created struct{ Key string }
	call(t, http.MethodPost, mgmt+"/api/enterprise/vkeys", adminKey, `{"alias":"me","model_restrictions":["gpt-4o-mini"]}`, http.StatusCreated, &created)
	var chat struct {
		Choices []struct{ Message struct{ Content string } }
	}
	call(t, http.MethodPost, proxy+"/v1/chat/completions", created.Key, `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hello"}]}`, http.StatusOK, &chat)
	if len(chat.Choices) != 1 || chat.Choices[0].Message.Content != "hello from the fake" {
		t.Errorf("chat answer %+v", chat)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		var logs struct{ Data []map[string]any }
		call(t, http.MethodGet, mgmt+"/api/vas/logs?limit=5", adminKey, "", http.StatusOK, &logs)
		if len(logs.Data) == 1 && logs.Data[0]["model"] == "gpt-4o-mini" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("audit entries %v, want the one chat request", logs.Data)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("stop: %v\n%s", err, stderr.String())
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

func waitReady(t *testing.T, url string, stderr *bytes.Buffer) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
	}
	t.Fatalf("svc did not become ready:\n%s", stderr.String())
}

// call sends body (JSON; none when empty) with the bearer key and decodes
// the answer into out, failing unless it has status want.
func call(t *testing.T, method, url, key, body string, want int, out any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != want {
		t.Fatalf("%s %s: %d %s, want %d", method, url, resp.StatusCode, b, want)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("%s %s: %s: %v", method, url, b, err)
	}
}
