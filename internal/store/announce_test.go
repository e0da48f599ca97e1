package store_test

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// countingBus records what it published and fails while down.
type countingBus struct {
	mu   sync.Mutex
	down bool
	sent map[string]int
}

func (b *countingBus) Publish(ctx context.Context, _ string, msg []byte) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.down {
		return errors.New("bus down")
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b.sent[string(msg)]++
	return nil
}

// TestAnnouncerRetriesOnce: notices that failed wait once each however
// often they failed, one goroutine publishes each once when the bus is
// back, and then stops.
func TestAnnouncerRetriesOnce(t *testing.T) {
	bus := &countingBus{down: true, sent: map[string]int{}}
	a := &store.Announcer{Bus: bus, Channel: "ch", For: time.Minute, Log: slog.New(slog.DiscardHandler)}
	for _, msg := range []string{"aa", "bb", "aa"} {
		if err := a.Announce(context.Background(), msg); err == nil {
			t.Fatal("published through a bus that is down")
		}
	}
	if n, _ := a.Waiting(); n != 2 {
		t.Fatalf("%d notices waiting, want 2 (one per notice)", n)
	}
	bus.mu.Lock()
	bus.down = false
	bus.mu.Unlock()
	storetest.Eventually(t, 5*time.Second, func() error {
		if _, running := a.Waiting(); running {
			return errors.New("the retrying goroutine still runs after the bus came back")
		}
		return nil
	})
	bus.mu.Lock()
	defer bus.mu.Unlock()
	if bus.sent["aa"] != 1 || bus.sent["bb"] != 1 {
		t.Errorf("published %v, want each notice once", bus.sent)
	}
}

// TestAnnouncerOutlivesItsContext: a notice is published even when the
// caller's context has ended (the change it announces is made).
func TestAnnouncerOutlivesItsContext(t *testing.T) {
	bus := &countingBus{sent: map[string]int{}}
	a := &store.Announcer{Bus: bus, Channel: "ch", For: time.Minute, Log: slog.New(slog.DiscardHandler)}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Announce(ctx, "aa"); err != nil || bus.sent["aa"] != 1 {
		t.Errorf("Announce with an ended context: %v, published %v", err, bus.sent)
	}
}
