package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/providertest"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// svcBinary builds cmd/svc once for the tests that need a process they can
// kill.
func svcBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "svc-e2e-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "svc")
		out, err := exec.Command("go", "build", "-o", binPath, "../../cmd/svc").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// tcpCut forwards a local port to target until cut, which closes the
// listener and every connection (the database goes away); restore listens
// on the same port again.
type tcpCut struct {
	target string
	addr   string
	mu     sync.Mutex
	ln     net.Listener
	conns  map[net.Conn]bool
}

func newTCPCut(t *testing.T, target string) *tcpCut {
	c := &tcpCut{target: target, conns: map[net.Conn]bool{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c.addr = ln.Addr().String()
	c.serve(ln)
	t.Cleanup(c.cut)
	return c
}

func (c *tcpCut) serve(ln net.Listener) {
	c.mu.Lock()
	c.ln = ln
	c.mu.Unlock()
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", c.target)
			if err != nil {
				in.Close()
				continue
			}
			c.mu.Lock()
			c.conns[in], c.conns[out] = true, true
			c.mu.Unlock()
			go func() { _, _ = io.Copy(out, in); out.Close() }()
			go func() { _, _ = io.Copy(in, out); in.Close() }()
		}
	}()
}

func (c *tcpCut) cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ln != nil {
		c.ln.Close()
		c.ln = nil
	}
	for conn := range c.conns {
		conn.Close()
	}
	clear(c.conns)
}

func (c *tcpCut) restore(t *testing.T) {
	ln, err := net.Listen("tcp", c.addr)
	if err != nil {
		t.Fatal(err)
	}
	c.serve(ln)
}

// bridgeProcess runs `svc serve` with SERVICE_TYPE=bridge.
type bridgeProcess struct {
	cmd  *exec.Cmd
	addr string
	logs *syncWriter
}

func startBridge(t *testing.T, env []string) *bridgeProcess {
	t.Helper()
	addr := freePort(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(svcBinary(t), "serve")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "SERVICE_TYPE=bridge",
		"SVC_HOST=127.0.0.1", "BRIDGE_PORT=" + port, "SVC_DATA_DIR=" + t.TempDir()}, env...)
	b := &bridgeProcess{cmd: cmd, addr: "http://127.0.0.1:" + port, logs: &syncWriter{}}
	cmd.Stderr = b.logs
	cmd.Stdout = b.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return b
}

// hybrid reads the bridge's /api/hybrid (nil while it does not answer).
func (b *bridgeProcess) hybrid() map[string]any {
	req, err := http.NewRequest("GET", b.addr+"/api/hybrid", nil)
	if err != nil {
		return nil
	}
	req.Header.Set("Authorization", "Bearer "+adminKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var out map[string]any
	if resp.StatusCode != 200 || json.NewDecoder(resp.Body).Decode(&out) != nil {
		return nil
	}
	return out
}

// TestBridgeLosesNothing is the hybrid log's promise on real PostgreSQL and
// Redis, with the proxy and the bridge in separate processes: during a
// 20,000-request run the bridge is killed with SIGKILL mid-batch and
// restarted, and the database is cut off mid-flush and restored; in the
// end every answered request's entry is in the long-term store exactly
// once.
func TestBridgeLosesNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("long: 20,000 requests")
	}
	shared := sharedStores(t)
	pg, err := url.Parse(shared["DATABASE_URL"])
	if err != nil {
		t.Fatal(err)
	}
	cut := newTCPCut(t, pg.Host)
	viaCut := *pg
	viaCut.Host = cut.addr
	q := viaCut.Query()
	q.Set("connect_timeout", "2")
	viaCut.RawQuery = q.Encode()

	fake := providertest.NewOpenAI(t)
	g := start(t, fake, with(shared, "SERVICE_TYPE", "proxy,api-server"))
	key, _ := g.newKey(nil)
	env := []string{"DATABASE_URL=" + viaCut.String(), "REDIS_URL=" + shared["REDIS_URL"],
		"SVC_REDIS_PREFIX=" + shared["SVC_REDIS_PREFIX"], "SVC_MASTER_KEY=" + shared["SVC_MASTER_KEY"],
		"ADMIN_API_KEY=" + adminKey, "SVC_BRIDGE_CONSUMER=bridge-e2e", "SVC_BRIDGE_BATCH=256"}
	br := startBridge(t, env)

	const total, workers = 20000, 32
	var (
		sent    atomic.Int64
		mu      sync.Mutex
		ids     = make(map[string]bool, total)
		wg      sync.WaitGroup
		body, _ = json.Marshal(chatParams("gpt-4o-mini", "hello"))
	)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: workers}}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for sent.Add(1) <= total {
				req, _ := http.NewRequest("POST", g.proxy+"/v1/chat/completions", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+key)
				req.Header.Set("Content-Type", "application/json")
				resp, err := client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Errorf("status %d", resp.StatusCode)
					return
				}
				mu.Lock()
				ids[resp.Header.Get("x-svc-request-id")] = true
				mu.Unlock()
			}
		}()
	}
	progress := func(n int64) {
		for sent.Load() < n && !t.Failed() {
			time.Sleep(5 * time.Millisecond)
		}
	}
	progress(total / 4)
	if err := br.cmd.Process.Kill(); err != nil { // SIGKILL, mid-batch
		t.Fatal(err)
	}
	_ = br.cmd.Wait()
	progress(total / 3)
	br = startBridge(t, env)
	progress(total / 2)
	cut.cut() // the database goes away mid-flush
	progress(3 * total / 4)
	time.Sleep(time.Second)
	cut.restore(t)
	restored := time.Now()
	wg.Wait()
	if t.Failed() {
		t.Fatalf("the load failed; bridge logs:\n%s", br.logs.String())
	}
	if len(ids) != total {
		t.Fatalf("%d distinct request ids answered, want %d", len(ids), total)
	}

	db := storetest.OpenSQL(t, shared["DATABASE_URL"])
	count := func() (rows, distinct int) {
		if err := db.QueryRow(t.Context(), `SELECT COUNT(*), COUNT(DISTINCT request_id) FROM audit_logs`).Scan(&rows, &distinct); err != nil {
			t.Fatal(err)
		}
		return rows, distinct
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		rows, _ := count()
		if rows >= total+1 || time.Now().After(deadline) { // the key's creation made no entry; +1 never comes
			break
		}
		if h := br.hybrid(); h != nil && rows == total {
			if hot, _ := h["hot"].(map[string]any); hot != nil && hot["backlog"] == float64(0) {
				break
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	caughtUp := time.Since(restored)
	rows, distinct := count()
	if rows != total || distinct != total {
		t.Fatalf("long-term store: %d rows, %d distinct; want %d each\nbridge logs:\n%s", rows, distinct, total, br.logs.String())
	}
	stored := map[string]bool{}
	rs, err := db.Query(t.Context(), `SELECT request_id FROM audit_logs`)
	if err != nil {
		t.Fatal(err)
	}
	for rs.Next() {
		var id string
		_ = rs.Scan(&id)
		stored[id] = true
	}
	rs.Close()
	for id := range ids {
		if !stored[id] {
			t.Fatalf("entry %s answered but not stored", id)
		}
	}
	t.Logf("20,000 entries stored exactly once; caught up %.1fs after the database returned", caughtUp.Seconds())
	_ = sqlstore.DialectPostgres
}

// TestRedisDownSpills cuts the proxy off from Redis mid-run: requests still
// answer, their entries wait in the proxy's spool, and once Redis is back
// they reach the hot tier and the bridge writes every one exactly once.
func TestRedisDownSpills(t *testing.T) {
	shared := sharedStores(t)
	ru, err := url.Parse(shared["REDIS_URL"])
	if err != nil {
		t.Fatal(err)
	}
	cut := newTCPCut(t, ru.Host)
	viaCut := *ru
	viaCut.Host = cut.addr
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, with(shared, "SERVICE_TYPE", "proxy,api-server", "REDIS_URL", viaCut.String(),
		"SVC_AUDIT_FLUSH_INTERVAL", "20ms"))
	start(t, nil, with(shared, "SERVICE_TYPE", "bridge"))
	key, _ := g.newKey(nil)
	body, _ := json.Marshal(chatParams("gpt-4o-mini", "hello"))
	ids := map[string]bool{}
	send := func(n int) {
		for range n {
			resp, _ := g.post("/v1/chat/completions", key, body, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
			ids[resp.Header.Get("x-svc-request-id")] = true
		}
	}
	send(50)
	cut.cut()
	send(100)
	// The entries of the outage wait in the spool: the forwarder failed.
	for deadline := time.Now().Add(5 * time.Second); !strings.Contains(g.logs.String(), "audit forward to the hot tier failed"); {
		if time.Now().After(deadline) {
			t.Fatal("no failed forward logged while Redis was cut off")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cut.restore(t)
	send(50)

	db := storetest.OpenSQL(t, shared["DATABASE_URL"])
	deadline := time.Now().Add(30 * time.Second)
	var rows, distinct int
	for time.Now().Before(deadline) {
		if err := db.QueryRow(t.Context(), `SELECT COUNT(*), COUNT(DISTINCT request_id) FROM audit_logs`).Scan(&rows, &distinct); err != nil {
			t.Fatal(err)
		}
		if rows >= len(ids) {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if rows != len(ids) || distinct != len(ids) || len(ids) != 200 {
		t.Fatalf("long-term store: %d rows, %d distinct; want %d each (200 answered)\n%s", rows, distinct, len(ids), grepLines(g.logs.String(), "audit"))
	}
	rs, err := db.Query(t.Context(), `SELECT request_id FROM audit_logs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	for rs.Next() {
		var id string
		_ = rs.Scan(&id)
		delete(ids, id)
	}
	if len(ids) != 0 {
		t.Fatalf("%d answered requests have no entry", len(ids))
	}
}
