package e2e

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/svc-gateway/svc/internal/providertest"

	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
)

// visible polls /api/vas/logs at base for the entry of requestID and
// returns how long it took to show, failing past one second. It also
// checks that the entry is listed once.
func visible(t *testing.T, base, query, requestID string) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		var page struct {
			Total int
			Data  []map[string]any
		}
		req, _ := http.NewRequest("GET", base+"/api/vas/logs?"+query, nil)
		req.Header.Set("Authorization", "Bearer "+adminKey)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		err = json.NewDecoder(resp.Body).Decode(&page)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range page.Data {
			if e["request_id"] == requestID {
				n++
			}
		}
		if n > 1 {
			b, _ := json.Marshal(page.Data)
			t.Fatalf("entry %s listed %d times (total %d): %s", requestID, n, page.Total, b)
		}
		if n == 1 {
			return time.Since(start)
		}
		if time.Since(start) > time.Second {
			t.Fatalf("entry %s not visible through %s/api/vas/logs within a second (%d listed)", requestID, base, len(page.Data))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// chatID makes one chat completion with the OpenAI SDK and returns its
// request id (x-svc-request-id).
func chatID(t *testing.T, g *gateway, key string) string {
	t.Helper()
	var resp *http.Response
	c := g.client(key)
	_, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hello"), option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	id := resp.Header.Get("x-svc-request-id")
	if id == "" {
		t.Fatal("no x-svc-request-id")
	}
	return id
}

// TestEntryVisibleWithinASecond checks the merged log read: a request's
// entry is visible through /api/vas/logs within a second of its answer,
// before the bridge wrote it (no bridge runs: the entry is in the Redis
// hot tier only) and after (a bridge started later wrote it to
// PostgreSQL), once each time; and in the embedded default.
func TestEntryVisibleWithinASecond(t *testing.T) {
	t.Run("embedded", func(t *testing.T) {
		g := start(t, providertest.NewOpenAI(t), nil)
		key, keyID := g.newKey(nil)
		id := chatID(t, g, key)
		t.Logf("visible after %v", visible(t, g.mgmt, "key_id="+keyID, id))
	})
	t.Run("redis+postgres", func(t *testing.T) {
		shared := sharedStores(t)
		fake := providertest.NewOpenAI(t)
		g := start(t, fake, with(shared, "SERVICE_TYPE", "proxy,api-server"))
		key, keyID := g.newKey(nil)
		id := chatID(t, g, key)
		t.Logf("before the bridge: visible after %v", visible(t, g.mgmt, "key_id="+keyID, id))
		db, err := sql.Open("pgx", shared["DATABASE_URL"])
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		var n int
		if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM audit_logs WHERE request_id = $1`, id).Scan(&n); err != nil || n != 0 {
			t.Fatalf("entry in SQL before any bridge ran: %d (%v)", n, err)
		}
		b := start(t, nil, with(shared, "SERVICE_TYPE", "bridge"))
		deadline := time.Now().Add(5 * time.Second)
		for n == 0 && time.Now().Before(deadline) {
			_ = db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM audit_logs WHERE request_id = $1`, id).Scan(&n)
			time.Sleep(20 * time.Millisecond)
		}
		if n != 1 {
			t.Fatalf("entry in SQL after the bridge started: %d rows, want 1", n)
		}
		visible(t, g.mgmt, "key_id="+keyID, id)
		visible(t, b.bridge, "key_id="+keyID, id)
		// A new request, with the bridge draining, is visible as fast.
		id2 := chatID(t, g, key)
		t.Logf("with the bridge: visible after %v", visible(t, g.mgmt, "key_id="+keyID, id2))
	})
}

// TestKilledProxyLosesNoEntry runs svc's binary on the embedded default,
// answers requests, kills it with SIGKILL and starts it again on the same
// data dir: every answered request's entry is in the log.
func TestKilledProxyLosesNoEntry(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	dir := t.TempDir()
	proxyAddr, mgmtAddr, bridgeAddr, complianceAddr, policyAddr := freePort(t), freePort(t), freePort(t), freePort(t), freePort(t)
	port := func(a string) string { _, p, _ := net.SplitHostPort(a); return p }
	run := func() *exec.Cmd {
		cmd := exec.Command(svcBinary(t), "serve")
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "SVC_DATA_DIR=" + dir, "SVC_HOST=127.0.0.1",
			"PROXY_PORT=" + port(proxyAddr), "MANAGEMENT_PORT=" + port(mgmtAddr), "BRIDGE_PORT=" + port(bridgeAddr), "COMPLIANCE_PORT=" + port(complianceAddr), "POLICY_PORT=" + port(policyAddr),
			"ADMIN_API_KEY=" + adminKey, "OPENAI_API_KEY=" + upstreamKey, "OPENAI_API_BASE=" + fake.URL(),
			"SEMANTIC_CACHE_ENABLED=false"}
		logs := &syncWriter{}
		cmd.Stderr, cmd.Stdout = logs, logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		deadline := time.Now().Add(15 * time.Second)
		for {
			if resp, err := http.Get("http://" + mgmtAddr + "/ready"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == 200 {
					return cmd
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("svc did not start:\n%s", logs.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	cmd := run()
	g := &gateway{t: t, proxy: "http://" + proxyAddr, mgmt: "http://" + mgmtAddr}
	key, keyID := g.newKey(nil)
	c := openai.NewClient(option.WithBaseURL(g.proxy+"/v1"), option.WithAPIKey(key), option.WithMaxRetries(0))
	const n = 300
	ids := map[string]bool{}
	for range n {
		var resp *http.Response
		if _, err := c.Chat.Completions.New(context.Background(), chatParams("gpt-4o-mini", "hi"), option.WithResponseInto(&resp)); err != nil {
			t.Fatal(err)
		}
		ids[resp.Header.Get("x-svc-request-id")] = true
	}
	if err := cmd.Process.Kill(); err != nil { // SIGKILL right after the last answer
		t.Fatal(err)
	}
	_ = cmd.Wait()
	run()
	deadline := time.Now().Add(10 * time.Second)
	for {
		page := g.logEntries("limit=1000&key_id="+keyID, n)
		found := 0
		for _, e := range page {
			if ids[fmt.Sprint(e["request_id"])] {
				found++
			}
		}
		if found == n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after SIGKILL and restart: %d of %d answered requests have their entry", found, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestAnalyticsFromTheBridge checks the analytics end to end on the
// embedded default: requests through the proxy (with the OpenAI SDK), the
// bridge writing their entries with the rollups, /api/analytics counting
// them by provider, model and key (masked), an error among them.
func TestAnalyticsFromTheBridge(t *testing.T) {
	g := start(t, providertest.NewOpenAI(t), nil)
	key, keyID := g.newKey(nil)
	for range 5 {
		chatID(t, g, key)
	}
	// A request svc refuses (400) is counted, as an error.
	if resp, _ := g.post("/v1/chat/completions", key, []byte(`{"model":"gpt-4o-mini","messages":"hi"}`), nil); resp.StatusCode != 400 {
		t.Fatalf("a malformed request: %d, want 400", resp.StatusCode)
	}
	var rep struct {
		Totals struct {
			Requests, Errors int64
			CostUSD          float64 `json:"cost_usd"`
		}
		TopKeys []struct {
			KeyID    string `json:"key_id"`
			Key      string
			Requests int64
		} `json:"top_keys"`
		CostByProvider []struct {
			Provider string
			Requests int64
		} `json:"cost_by_provider"`
		Volume []struct{ Requests int64 }
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		if code := g.admin("GET", "/api/analytics?period=24h", nil, &rep); code != 200 {
			t.Fatalf("GET /api/analytics: %d", code)
		}
		// The report's four reads (models, volume, keys, users) run at once on their own connections, so
		// one taken while the bridge commits a batch may count it in some
		// parts only: wait for the totals and the keys both.
		keyed := len(rep.TopKeys) == 1 && rep.TopKeys[0].Requests >= 6
		var bucketed int64
		for _, v := range rep.Volume {
			bucketed += v.Requests
		}
		if rep.Totals.Requests >= 6 && keyed && bucketed >= 6 || time.Now().After(deadline) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if rep.Totals.Requests != 6 || rep.Totals.Errors != 1 || rep.Totals.CostUSD <= 0 {
		t.Fatalf("totals %+v, want 6 requests, 1 error, a cost", rep.Totals)
	}
	if len(rep.TopKeys) != 1 || rep.TopKeys[0].KeyID != keyID || rep.TopKeys[0].Requests != 6 ||
		!strings.HasPrefix(rep.TopKeys[0].Key, "sk-svc-") || strings.Contains(key, rep.TopKeys[0].Key) && len(rep.TopKeys[0].Key) >= len(key) {
		t.Errorf("top keys %+v, want the key, masked, with 6 requests", rep.TopKeys)
	}
	var inBuckets int64
	for _, v := range rep.Volume {
		inBuckets += v.Requests
	}
	if inBuckets != 6 || len(rep.Volume) != 24 {
		t.Errorf("volume: %d requests in %d buckets, want 6 in 24", inBuckets, len(rep.Volume))
	}
	if code := g.admin("GET", "/api/analytics?period=1y", nil, nil); code != 400 {
		t.Errorf("period=1y: %d, want 400", code)
	}
}
