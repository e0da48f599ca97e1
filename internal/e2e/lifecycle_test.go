package e2e

import (
	"bufio"
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/providertest"
)

const streamBody = `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"tell me a story"}]}`

// openStream starts a streamed chat and returns the response after its first event.
func openStream(t *testing.T, ctx context.Context, g *gateway, key string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, "POST", g.proxy+"/v1/chat/completions", strings.NewReader(streamBody))
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	br := bufio.NewReader(resp.Body)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	return resp, br
}

func TestGracefulShutdownDrainsStreamsAndFlushesLogs(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithChunks(10), providertest.WithChunkDelay(50*time.Millisecond))
	g := start(t, fake, nil)
	key, _ := g.newKey(nil)
	resp, br := openStream(t, context.Background(), g, key)
	defer resp.Body.Close()

	stopped := make(chan error, 1)
	go func() { stopped <- g.stop() }()

	var rest bytes.Buffer
	if _, err := rest.ReadFrom(br); err != nil {
		t.Fatalf("stream cut by shutdown: %v", err)
	}
	if !strings.Contains(rest.String(), "data: [DONE]") {
		t.Errorf("the in-flight stream did not complete:\n%s", rest.String())
	}
	if err := <-stopped; err != nil {
		t.Errorf("Run after shutdown = %v, want nil", err)
	}
	if _, err := http.Get(g.proxy + "/health"); err == nil {
		t.Error("the proxy still accepts connections after shutdown")
	}

	// A new process on the same data dir finds the entry in SQL.
	g2 := start(t, fake, config.Map{"SVC_DATA_DIR": g.dataDir})
	entries := g2.logEntries("", 1)
	if len(entries) != 1 || entries[0]["stream"] != true || entries[0]["metrics"].(map[string]any)["success"] != true {
		t.Fatalf("after restart: %v, want the drained stream's entry", entries)
	}
	// The key survived too.
	c2 := g2.client(key)
	if _, err := c2.Models.List(context.Background()); err != nil {
		t.Errorf("key after restart: %v", err)
	}
}

func TestClientDisconnectCancelsUpstream(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithChunks(40), providertest.WithChunkDelay(100*time.Millisecond))
	g := start(t, fake, nil)
	key, _ := g.newKey(nil)
	ctx, cancel := context.WithCancel(context.Background())
	resp, _ := openStream(t, ctx, g, key)
	cancel()
	resp.Body.Close()
	// The full stream would take 4 s; the entry must be written long before.
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		if entries := g.logEntries("", 0); len(entries) == 1 {
			e := entries[0]
			if e["status"] != 499.0 && e["error_type"] != "client_closed_request" {
				t.Errorf("entry = %v, want the client's disconnect", e)
			}
			if e["latency_ms"].(float64) > 2000 {
				t.Errorf("latency %v ms: the upstream call was not cancelled", e["latency_ms"])
			}
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no audit entry 2 s after the client went away: the upstream stream kept running")
}

// TestShutdownPastDrainTimeEndsStreamsTruthfully: a stream still running
// when the drain time runs out ends with an error event saying so (not
// cut silently), and its audit entry records the failure (it was a 200).
func TestShutdownPastDrainTimeEndsStreamsTruthfully(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithChunks(100), providertest.WithChunkDelay(100*time.Millisecond))
	g := start(t, fake, config.Map{"SVC_SHUTDOWN_TIMEOUT": "500ms"})
	key, _ := g.newKey(nil)
	resp, br := openStream(t, context.Background(), g, key)
	defer resp.Body.Close()

	stopped := make(chan error, 1)
	go func() { stopped <- g.stop() }()
	var rest bytes.Buffer
	_, _ = rest.ReadFrom(br)
	if strings.Contains(rest.String(), "data: [DONE]") || !strings.Contains(rest.String(), `"code":"shutting_down"`) {
		t.Errorf("stream after the drain time: want an error event with code shutting_down and no [DONE], got:\n%s", rest.String())
	}
	if err := <-stopped; err != nil {
		t.Errorf("Run after shutdown = %v, want nil", err)
	}
	g2 := start(t, fake, config.Map{"SVC_DATA_DIR": g.dataDir})
	entries := g2.logEntries("", 1)
	if len(entries) != 1 {
		t.Fatalf("after restart: %d entries, want 1", len(entries))
	}
	e := entries[0]
	if e["status"] != 503.0 || e["error_type"] != "service_unavailable" || e["metrics"].(map[string]any)["success"] != false {
		t.Errorf("entry of the cut stream: status %v, error_type %v, metrics %v; want 503 service_unavailable, not a success",
			e["status"], e["error_type"], e["metrics"])
	}
}
