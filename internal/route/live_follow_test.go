package route_test

import (
	"context"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// loadSignal is a config store that signals each load.
type loadSignal struct {
	route.ConfigStore
	loads chan struct{}
}

func (s *loadSignal) LoadRouting(ctx context.Context) (route.Config, int64, error) {
	select {
	case s.loads <- struct{}{}:
	default:
	}
	return s.ConfigStore.LoadRouting(ctx)
}

// afterPoll waits for the next load, having dropped those signalled
// before: with no change announced meanwhile, a poll.
func (s *loadSignal) afterPoll(t *testing.T) {
	t.Helper()
drain:
	for {
		select {
		case <-s.loads:
		default:
			break drain
		}
	}
	select {
	case <-s.loads:
	case <-time.After(3 * time.Second):
		t.Fatal("no poll within 3s")
	}
}

// TestLiveFollowsNotices: an update announced on the bus is followed at
// once, not at the next poll, also after the subscription ended (Run
// subscribes again).
func TestLiveFollowsNotices(t *testing.T) {
	db := openDB(t)
	bus := &storetest.EndableBus{KV: newKV(t)}
	writer := route.NewLive(db, bus, nil)
	loads := &loadSignal{ConfigStore: db, loads: make(chan struct{}, 16)}
	follower := route.NewLive(loads, bus, nil)
	run(t, follower)
	storetest.Until(t, 5*time.Second, "the subscription", func() bool { return bus.Subscriptions() == 1 })
	// Just after a poll the next is a second away: converging well before
	// it takes the notice.
	quick := func(provider string) {
		t.Helper()
		loads.afterPoll(t)
		start := time.Now()
		if _, err := writer.Update(t.Context(), setDefault(provider)); err != nil {
			t.Fatalf("Update: %v", err)
		}
		storetest.Until(t, 5*time.Second, "the notice followed", func() bool { return follower.Current().DefaultProvider == provider })
		if d := time.Since(start); d > 500*time.Millisecond {
			t.Errorf("%s followed after %v, want the notice's few milliseconds (the poll is every second)", provider, d)
		}
	}
	quick("groq")
	bus.EndAll()
	storetest.Until(t, 5*time.Second, "a new subscription", func() bool { return bus.Subscriptions() == 2 })
	quick("mistral")
}
