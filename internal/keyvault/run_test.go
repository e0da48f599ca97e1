package keyvault

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// refusingKV is a pubsubKV whose Subscribe fails after ok successful ones.
type refusingKV struct {
	*pubsubKV
	ok int
}

var errRefused = errors.New("subscribe refused")

func (kv *refusingKV) Subscribe(ctx context.Context, channel string) (store.Subscription, error) {
	if kv.ok == 0 {
		return nil, errRefused
	}
	kv.ok--
	return kv.pubsubKV.Subscribe(ctx, channel)
}

// TestRunSubscribeFails: Run makes two subscriptions and does not retry:
// when either fails it returns the error, leaving none open.
func TestRunSubscribeFails(t *testing.T) {
	for ok := range 2 {
		kv := &refusingKV{pubsubKV: &pubsubKV{buffer: 4}, ok: ok}
		v := New(newMemStore(), testSealer(1), kv, nil)
		done := make(chan error, 1)
		go func() { done <- v.Run(context.Background()) }()
		select {
		case err := <-done:
			if !errors.Is(err, errRefused) || !strings.Contains(err.Error(), "keyvault: subscribe to "+Channel) {
				t.Errorf("subscription %d refused: Run returned %v, want the refusal", ok+1, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("subscription %d refused: Run did not return", ok+1)
		}
		if n := kv.subscribers(); n != 0 {
			t.Errorf("subscription %d refused: %d subscriptions left open", ok+1, n)
		}
	}
}
