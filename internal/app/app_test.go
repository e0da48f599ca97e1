package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestHealthAndReady(t *testing.T) {
	var down bool
	mux := http.NewServeMux()
	Health(mux, map[string]Probe{"kv": func(context.Context) error {
		if down {
			return errors.New("down")
		}
		return nil
	}})
	s, err := Listen("test", "127.0.0.1:0", mux, time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	base := "http://" + s.Addr().String()
	get := func(p string) (int, string) {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/health"); code != 200 || body != `{"status":"ok"}` {
		t.Errorf("health = %d %s", code, body)
	}
	if code, _ := get("/ready"); code != 200 {
		t.Errorf("ready = %d, want 200", code)
	}
	down = true
	if code, _ := get("/ready"); code != 503 {
		t.Errorf("ready with a store down = %d, want 503", code)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run after cancel = %v, want nil", err)
	}
}

func TestDrainWaitsForInFlight(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		close(started)
		<-release
		_, _ = w.Write([]byte("done"))
	})
	s, err := Listen("test", "127.0.0.1:0", mux, 5*time.Second, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	got := make(chan string, 1)
	go func() {
		resp, err := http.Get("http://" + s.Addr().String() + "/slow")
		if err != nil {
			got <- err.Error()
			return
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		got <- string(b)
	}()
	<-started
	cancel()
	select {
	case err := <-done:
		t.Fatalf("Run returned %v before the in-flight request finished", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if b := <-got; b != "done" {
		t.Errorf("in-flight answer = %q, want done", b)
	}
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}

func TestRecover(t *testing.T) {
	h := Recover(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { panic("boom") }),
		slog.New(slog.NewTextHandler(io.Discard, nil)))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != 500 || !strings.Contains(rec.Body.String(), `"type":"server_error"`) {
		t.Errorf("got %d %s, want an OpenAI-shaped 500", rec.Code, rec.Body.String())
	}
}

func TestServiceBackground(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	listen := func() *Server {
		s, err := Listen("test", "127.0.0.1:0", http.NotFoundHandler(), time.Second, quiet)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}

	// A failing background task stops the service with its error.
	boom := errors.New("boom")
	svc := &Service{Server: listen(), Background: []Component{Func{N: "bg", F: func(context.Context) error { return boom }}}}
	done := make(chan error, 1)
	go func() { done <- svc.Run(context.Background()) }()
	select {
	case err := <-done:
		if !errors.Is(err, boom) || !strings.Contains(err.Error(), "bg") {
			t.Errorf("got %v, want the background task's error", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the service did not stop when its background task failed")
	}

	// A task that ends on its own leaves the server serving; the others
	// stop only after the server has closed its listener.
	sawStopped := make(chan bool, 1)
	var addr string
	svc = &Service{Server: listen(), Background: []Component{
		Func{N: "short", F: func(context.Context) error { return nil }},
		Func{N: "long", F: func(ctx context.Context) error {
			<-ctx.Done()
			conn, err := net.Dial("tcp", addr)
			if err == nil {
				conn.Close()
			}
			sawStopped <- err != nil
			return nil
		}},
	}}
	addr = svc.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	go func() { done <- svc.Run(ctx) }()
	time.Sleep(50 * time.Millisecond)
	if resp, err := http.Get("http://" + addr + "/"); err != nil {
		t.Fatalf("the server stopped with a background task: %v", err)
	} else {
		resp.Body.Close()
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !<-sawStopped {
		t.Error("a background task was stopped before the server")
	}
}

// TestBodyReadTimeout: a body that never arrives ends its connection within
// the timeout, whether the handler waits for it or refuses the request
// unread; a body that arrived never cuts the answer, however long.
func TestBodyReadTimeout(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/refuse" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		for range 8 { // a long answer: 0.8 s, after the body deadline
			_, _ = io.WriteString(w, "data: x\n\n")
			http.NewResponseController(w).Flush()
			time.Sleep(100 * time.Millisecond)
		}
	})
	s, err := Listen("test", "127.0.0.1:0", BodyReadTimeout(h, 300*time.Millisecond), time.Second, quiet)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	addr := s.Addr().String()

	for _, path := range []string{"/read", "/refuse"} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\n\r\nslow", path)
		_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.Copy(io.Discard, conn) // until the server closes the connection
		conn.Close()
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s: the connection with a body that never came was held %v, want it closed within the timeout", path, d)
		}
	}

	resp, err := http.Post("http://"+addr+"/read", "text/plain", strings.NewReader("body"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || strings.Count(string(b), "data: x") != 8 {
		t.Errorf("the long answer was cut: %d events, %v", strings.Count(string(b), "data: x"), err)
	}
}
