package route_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// TestFailuresFleetWide checks that the last failure noted in one process is
// what every other process reads (a management API in its own process),
// that an older failure written later does not replace a newer one, and
// that a failure noted here is seen here before it is written.
func TestFailuresFleetWide(t *testing.T) {
	stores := map[string]func(t *testing.T) route.FailureStore{
		"memory": func(t *testing.T) route.FailureStore { return newKV(t) },
		"redis":  func(t *testing.T) route.FailureStore { return storetest.RedisKV(t) },
	}
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	older := route.Failure{Provider: "openai", Model: "gpt-4o", Chain: "main", Status: 503, Message: "openai failed (HTTP 503)", At: at}
	newer := route.Failure{Provider: "anthropic", Model: "claude-sonnet-4", Chain: "main", Status: 529, Message: "anthropic failed (HTTP 529): Overloaded", At: at.Add(time.Second)}
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			ctx := t.Context()
			kv := open(t)
			proxyA, proxyB, mgmt := route.NewFailures(kv, nil), route.NewFailures(kv, nil), route.NewFailures(kv, nil)
			if got, err := mgmt.Last(ctx); err != nil || got != nil {
				t.Fatalf("no failure yet: got %+v, %v; want nil, nil", got, err)
			}
			proxyA.Note(older)
			if got, err := proxyA.Last(ctx); err != nil || got == nil || got.Provider != "openai" {
				t.Errorf("noted here, not yet written: got %+v, %v; want the openai failure", got, err)
			}
			if got, _ := mgmt.Last(ctx); got != nil {
				t.Errorf("before a flush another process sees %+v, want nil", got)
			}
			proxyB.Note(newer)
			if err := proxyB.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if err := proxyA.Flush(ctx); err != nil { // older, written later
				t.Fatal(err)
			}
			got, err := mgmt.Last(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(&newer, got); diff != "" {
				t.Errorf("fleet's last failure (-want +got):\n%s", diff)
			}
			// Note keeps the newest of a burst.
			proxyA.Note(route.Failure{Provider: "groq", At: at.Add(3 * time.Second)})
			proxyA.Note(route.Failure{Provider: "mistral", At: at.Add(2 * time.Second)})
			if err := proxyA.Flush(ctx); err != nil {
				t.Fatal(err)
			}
			if got, _ := mgmt.Last(ctx); got == nil || got.Provider != "groq" {
				t.Errorf("after a burst: got %+v, want the groq failure (the newest)", got)
			}
		})
	}
}

// TestFailuresRun checks that Run writes a noted failure within a second or
// two and once more when it stops.
func TestFailuresRun(t *testing.T) {
	kv := newKV(t)
	proxy, mgmt := route.NewFailures(kv, nil), route.NewFailures(kv, nil)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- proxy.Run(ctx) }()
	proxy.Note(route.Failure{Provider: "openai", Status: 500})
	storetest.Until(t, 5*time.Second, "the failure written by Run", func() bool {
		got, _ := mgmt.Last(t.Context())
		return got != nil && got.Provider == "openai" && !got.At.IsZero()
	})
	proxy.Note(route.Failure{Provider: "groq", Status: 502})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if got, _ := mgmt.Last(t.Context()); got == nil || got.Provider != "groq" {
		t.Errorf("after Run stopped: got %+v, want the groq failure flushed at shutdown", got)
	}
}

// TestFailuresBadRecord checks that a stored value that is not a failure is
// an error, not a nil failure.
func TestFailuresBadRecord(t *testing.T) {
	kv := newKV(t)
	if err := kv.Set(t.Context(), "route:last_failure", []byte("{"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if got, err := route.NewFailures(kv, nil).Last(t.Context()); err == nil {
		t.Errorf("Last over a broken record: got %+v, nil; want an error", got)
	}
}
