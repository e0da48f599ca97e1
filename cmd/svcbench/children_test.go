package main

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The fake child serves the fake with the upstream key and the chunk
// settings; the reverse-proxy and relay children forward to it, streams
// included; all end cleanly when their stdin closes.
func TestChildren(t *testing.T) {
	fake, err := startChild(context.Background(), "fake upstream", fakeChildEnv("127.0.0.1:0", 3, 2*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer fake.stop()
	if !strings.HasSuffix(fake.url, "/v1") || fake.pid == os.Getpid() {
		t.Fatalf("fake: url %q, pid %d", fake.url, fake.pid)
	}
	proxy, err := startChild(context.Background(), "reverse proxy", baselineChildEnv(strings.TrimSuffix(fake.url, "/v1"), 0))
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.stop()
	relay, err := startChild(context.Background(), "tcp relay", relayChildEnv(fake.url))
	if err != nil {
		t.Fatal(err)
	}
	defer relay.stop()

	for _, tt := range []struct {
		name, url string
	}{
		{"fake", fake.url + "/chat/completions"},
		{"reverse proxy", proxy.url + "/v1/chat/completions"},
		{"tcp relay", relay.url + "/v1/chat/completions"},
	} {
		for _, stream := range []bool{false, true} {
			r := phaseAgainst(t, tt.url, stream, 2, 10)
			if r.failures != 0 || len(r.latency) != 10 {
				t.Errorf("%s, stream %v: %d failures (%v)", tt.name, stream, r.failures, r.firstError)
			}
			// Three chunks 2ms apart.
			if stream && r.latency[0] < 4*time.Millisecond {
				t.Errorf("%s: a stream took %v, want the chunk settings applied", tt.name, r.latency[0])
			}
		}
		// The fake demands the upstream key, through the proxy too.
		resp, err := http.Post(tt.url, "application/json", strings.NewReader(string(requestBody("m", false))))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Errorf("%s without a key: status %d, want 401", tt.name, resp.StatusCode)
		}
	}

	// Without full duplex a few streams in a thousand were cut (a fake
	// without chunk delays keeps this quick); a pooled proxy works too.
	quick, err := startChild(context.Background(), "quick fake upstream", fakeChildEnv("127.0.0.1:0", 5, 0))
	if err != nil {
		t.Fatal(err)
	}
	defer quick.stop()
	quickBase := strings.TrimSuffix(quick.url, "/v1")
	streams := 1000
	if raceEnabled {
		streams = 200
	}
	var proxies []*child
	for _, idle := range []int{0, 16} {
		p, err := startChild(context.Background(), "reverse proxy", baselineChildEnv(quickBase, idle))
		if err != nil {
			t.Fatal(err)
		}
		defer p.stop()
		proxies = append(proxies, p)
		if r := phaseAgainst(t, p.url+"/v1/chat/completions", true, 2, streams); r.failures != 0 {
			t.Errorf("reverse proxy keeping %d idle, %d streams: %d failures (%v)", idle, streams, r.failures, r.firstError)
		}
	}

	// Each helper exits on its own, with status 0, when its stdin closes:
	// stop reports an error if it had to kill one (or it exited otherwise).
	// How long that takes is the machine's business (a loaded CI machine
	// took 4.5 s once), so the grace before the kill is long here; what is
	// checked is that the helper ends by itself and stops listening.
	defer func(g time.Duration) { stopGrace = g }(stopGrace)
	stopGrace = time.Minute
	for _, c := range append(proxies, proxy, relay, fake, quick) {
		if err := c.stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
		waitRefused(t, c.url)
	}
}

func TestChildFailsToStart(t *testing.T) {
	_, err := startChild(context.Background(), "fake upstream", fakeChildEnv("127.0.0.1:0", 3, 0)[:1])
	if err == nil || !strings.Contains(err.Error(), "exited before it was ready") || !strings.Contains(err.Error(), envChunks) {
		t.Errorf("got %v, want the child's complaint about %s", err, envChunks)
	}
	_, err = startChild(context.Background(), "reverse proxy", baselineChildEnv("not a url", 0))
	if err == nil || !strings.Contains(err.Error(), envUpstream) {
		t.Errorf("got %v, want the child's complaint about %s", err, envUpstream)
	}
}

// The helpers end when svcbench dies without stopping them.
func TestChildrenExitWithParent(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	parent := exec.Command(exe)
	parent.Env = append(os.Environ(), testParentEnv+"=1")
	parent.Stderr = os.Stderr
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = parent.Process.Kill(); _ = parent.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the URLs: %v", err)
	}
	urls := strings.Fields(line)
	if len(urls) != 2 {
		t.Fatalf("parent printed %q", line)
	}
	for _, u := range urls {
		if r := phaseAgainst(t, strings.TrimSuffix(u, "/v1")+"/v1/chat/completions", false, 1, 2); r.failures != 0 {
			t.Fatalf("%s: %v", u, r.firstError)
		}
	}
	if err := parent.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, u := range urls {
		waitRefused(t, u)
	}
}

// waitRefused waits until nothing listens on base's address any more.
func waitRefused(t *testing.T, base string) {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			if !errors.Is(err, syscall.ECONNREFUSED) {
				t.Logf("dialing %s: %v", u.Host, err)
			}
			return
		}
		conn.Close()
		if time.Now().After(deadline) {
			t.Errorf("%s still answers 5s after its parent let go", base)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
