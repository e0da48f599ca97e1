package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/providertest"
)

func phaseAgainst(t *testing.T, url string, stream bool, c, n int) phaseResult {
	t.Helper()
	client := newClient(c, 10*time.Second)
	t.Cleanup(client.CloseIdleConnections)
	return runPhase(context.Background(), client, phaseSpec{
		target:      target{name: "direct", url: url, auth: "Bearer " + upstreamKey},
		body:        requestBody("gpt-4o-mini", stream),
		stream:      stream,
		concurrency: c,
		n:           n,
	})
}

func TestRunPhase(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithAPIKey(upstreamKey), providertest.WithChunkDelay(time.Millisecond))
	for _, tt := range []struct {
		name   string
		stream bool
		c, n   int
	}{
		{"non-stream c=1", false, 1, 20},
		{"non-stream c=7", false, 7, 50},
		{"stream c=1", true, 1, 10},
		{"stream c=5", true, 5, 31},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fake.Reset()
			r := phaseAgainst(t, fake.URL()+"/chat/completions", tt.stream, tt.c, tt.n)
			if r.firstError != nil {
				t.Fatal(r.firstError)
			}
			if r.requests != tt.n || r.failures != 0 || len(r.latency) != tt.n || fake.Count() != tt.n {
				t.Errorf("got %d requests, %d failures, %d latencies, %d at the fake; want %d, 0, %d, %d",
					r.requests, r.failures, len(r.latency), fake.Count(), tt.n, tt.n, tt.n)
			}
			wantTTFB := 0
			if tt.stream {
				wantTTFB = tt.n
				// 5 chunks 1ms apart: [DONE] comes at least 5ms in, after the first byte.
				if r.latency[0] < 5*time.Millisecond || r.ttfb[len(r.ttfb)-1] > r.latency[len(r.latency)-1] {
					t.Errorf("stream times: latency min %v, ttfb max %v", r.latency[0], r.ttfb[len(r.ttfb)-1])
				}
			}
			if len(r.ttfb) != wantTTFB {
				t.Errorf("ttfb: got %d, want %d", len(r.ttfb), wantTTFB)
			}
			for i := 1; i < len(r.latency); i++ {
				if r.latency[i] < r.latency[i-1] {
					t.Fatal("latencies are not sorted")
				}
			}
		})
	}
}

func TestRunPhaseDuration(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithRecording(0))
	client := newClient(2, 10*time.Second)
	start := time.Now()
	r := runPhase(context.Background(), client, phaseSpec{
		target: target{name: "direct", url: fake.URL() + "/chat/completions"}, body: requestBody("m", false),
		concurrency: 2, duration: 100 * time.Millisecond,
	})
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("a 100ms phase took %v", d)
	}
	if r.requests == 0 || r.failures != 0 || len(r.latency) != r.requests {
		t.Errorf("got %d requests, %d failures (%v)", r.requests, r.failures, r.firstError)
	}
}

// TestRunPhaseOpenLoad: with -rate, requests are due on a schedule and a
// request held up behind a slow one counts its wait (a closed loop would
// time each from when it was sent, and hide the wait).
func TestRunPhaseOpenLoad(t *testing.T) {
	// slow is long enough that no fast request of a loaded machine takes
	// it, so the closed loop's fast requests stay under what the open
	// loop's waits must reach.
	const slow = 400 * time.Millisecond
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		if calls.Add(1) == 1 {
			time.Sleep(slow)
		}
		_, _ = io.WriteString(w, `{"choices":[]}`)
	}))
	t.Cleanup(srv.Close)
	client := newClient(1, 10*time.Second)
	t.Cleanup(client.CloseIdleConnections)
	// 200/s: due at 0, 5, … 25 ms; one in flight, the first takes slow.
	r := runPhase(context.Background(), client, phaseSpec{
		target: target{name: "direct", url: srv.URL}, body: requestBody("m", false),
		concurrency: 1, n: 6, rate: 200,
	})
	if r.requests != 6 || r.failures != 0 || len(r.latency) != 6 {
		t.Fatalf("got %d requests, %d failures (%v), %d latencies", r.requests, r.failures, r.firstError, len(r.latency))
	}
	// The five behind it were handed out after slow, all late. The first
	// is due at the phase's start: it counts late too when the worker
	// took it over lateBy after (a goroutine started late on a busy
	// machine), which is no wait behind a slow answer.
	if r.late != 5 && r.late != 6 {
		t.Errorf("%d requests counted late, want the 5 behind the slow one (6 if the worker started late)", r.late)
	}
	// The second request was due at 5 ms and sent after slow.
	wait := slow - 5*time.Millisecond
	if got := r.latency[4]; got < wait {
		t.Errorf("latencies %v: the second largest is under %v, so the wait behind the slow request was not counted", r.latency, wait)
	}
	// A closed loop over the same server times each request from when it
	// was sent: only the slow one is slow.
	calls.Store(0)
	closed := runPhase(context.Background(), client, phaseSpec{
		target: target{name: "direct", url: srv.URL}, body: requestBody("m", false), concurrency: 1, n: 6,
	})
	if len(closed.latency) != 6 || closed.latency[4] >= wait || closed.latency[5] < slow || closed.late != 0 {
		t.Errorf("closed loop: latencies %v, %d late; want one of %v or more, the rest under %v, none late", closed.latency, closed.late, slow, wait)
	}
}

func TestRunPhaseFailures(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	sse := func(body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, body)
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	tests := []struct {
		name    string
		url     string
		header  string // X-Fake-Cut-After or X-Fake-Status value
		stream  bool
		wantErr string
	}{
		{"status 500", fake.URL() + "/chat/completions", "status=500", false, "status 500"},
		{"status 429 stream", fake.URL() + "/chat/completions", "status=429", true, "rate_limit_exceeded"},
		{"cut stream", fake.URL() + "/chat/completions", "cut=2", true, "unexpected EOF"},
		{"cut body", fake.URL() + "/chat/completions", "cut=0", false, "unexpected EOF"},
		{"no [DONE]", sse("data: {\"choices\":[]}\n\n"), "", true, "without data: [DONE]"},
		{"error event", sse("data: {\"choices\":[]}\n\ndata: {\"error\":{\"message\":\"upstream broke\"}}\n\ndata: [DONE]\n\n"), "", true, "upstream broke"},
		{"not a completion", sse(`{"object":"list"}`), "", false, "not a chat completion"},
		{"refused", "http://127.0.0.1:1/v1/chat/completions", "", false, "refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fake.Set(providertest.WithStatus(0), providertest.WithCutAfter(-1))
			switch k, v, _ := strings.Cut(tt.header, "="); k {
			case "status":
				fake.Set(providertest.WithStatus(atoi(t, v)))
			case "cut":
				fake.Set(providertest.WithCutAfter(atoi(t, v)))
			}
			r := phaseAgainst(t, tt.url, tt.stream, 2, 6)
			if r.failures != 6 || len(r.latency) != 0 {
				t.Errorf("got %d failures, %d latencies; want 6, 0", r.failures, len(r.latency))
			}
			if r.firstError == nil || !strings.Contains(r.firstError.Error(), tt.wantErr) || !strings.HasPrefix(r.firstError.Error(), "direct: ") {
				t.Errorf("first error: got %v, want one from direct containing %q", r.firstError, tt.wantErr)
			}
		})
	}
}

func atoi(t *testing.T, s string) int {
	var n int
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

func TestMatcherTail(t *testing.T) {
	stream := []byte("data: {\"choices\":[{\"delta\":{\"content\":\"hello\"}}]}\n\ndata: [DONE]\n\n")
	for split1 := 1; split1 < len(stream); split1++ {
		for _, step := range []int{1, 3, 7} {
			var tail matcherTail
			found := false
			parts := [][]byte{stream[:split1]}
			for rest := stream[split1:]; len(rest) > 0; {
				n := min(step, len(rest))
				parts = append(parts, rest[:n])
				rest = rest[n:]
			}
			for _, p := range parts {
				found = found || tail.contains(p, doneEvent)
				tail.keep(p)
			}
			if !found {
				t.Fatalf("split at %d, step %d: [DONE] not found", split1, step)
			}
		}
	}
	var tail matcherTail
	for _, p := range [][]byte{[]byte("data: [DON"), []byte("E"), []byte("]")} {
		if tail.contains(p, []byte("[DONE]x")) {
			t.Error("found a pattern that is not there")
		}
		tail.keep(p)
	}
	if got := string(tail.b[:tail.n]); got != "data: [DONE]" {
		t.Errorf("tail: got %q", got)
	}
	tail.keep(bytes.Repeat([]byte("z"), 40))
	if tail.n != len(tail.b) {
		t.Errorf("tail after a long chunk: got %d bytes, want %d", tail.n, len(tail.b))
	}
}
