package alerts_test

import (
	"context"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/alerts"
	"github.com/svc-gateway/svc/internal/store/memkv"
)

// BenchmarkSend measures Send on the request path: with a running Notifier
// draining the queue (one subject, so each is deduplicated in the store; no
// platform) and with the queue full (the drop path).
func BenchmarkSend(b *testing.B) {
	a := alerts.NewCustom("bench", "message", alerts.Warning, time.Now())
	b.Run("queued", func(b *testing.B) {
		n := benchNotifier(b, 1<<16, true)
		b.ReportAllocs()
		for b.Loop() {
			n.Send(a)
		}
	})
	b.Run("full", func(b *testing.B) {
		n := benchNotifier(b, 1, false)
		n.Send(a)
		b.ReportAllocs()
		for b.Loop() {
			n.Send(a)
		}
	})
}

func benchNotifier(b *testing.B, queue int, run bool) *alerts.Notifier {
	b.Helper()
	kv := memkv.New()
	b.Cleanup(func() { kv.Close() })
	n, err := alerts.New(alerts.Options{Enabled: true, Store: kv, QueueSize: queue, Dedup: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	if run {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { _ = n.Run(ctx); close(done) }()
		b.Cleanup(func() { cancel(); <-done })
	}
	return n
}

// BenchmarkObserve measures the Watch on every drained audit entry: six
// providers in turn, one failure in ten, so no alert is raised.
func BenchmarkObserve(b *testing.B) {
	w := alerts.NewWatch(&collector{}, alerts.WatchOptions{})
	providers := []string{"openai", "anthropic", "gemini", "bedrock", "mistral", "groq"}
	at := time.Now()
	i := 0
	b.ReportAllocs()
	for b.Loop() {
		i++
		at = at.Add(time.Millisecond)
		w.Observe(alerts.Observation{Provider: providers[i%len(providers)], Time: at, OK: i%10 != 0, Latency: time.Second, RequestID: "req"})
	}
}
