package memkv

import (
	"context"
	"github.com/svc-gateway/svc/internal/store"
	"testing"
	"time"
)

// TestSweep checks that the background sweeper removes expired keys that are
// never read again, so they do not hold memory.
func TestSweep(t *testing.T) {
	kv := newKV(10 * time.Millisecond)
	t.Cleanup(func() { kv.Close() })
	ctx := context.Background()
	if err := kv.Set(ctx, "gone", []byte("x"), 20*time.Millisecond); err != nil {
		t.Fatalf("Set: %v", err)
	}
	if err := kv.AppendLog(ctx, "log", store.LogLimit{MaxAge: 20 * time.Millisecond}, []byte("x")); err != nil {
		t.Fatalf("AppendLog: %v", err)
	}
	if err := kv.Set(ctx, "kept", []byte("x"), 0); err != nil {
		t.Fatalf("Set: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		kv.mu.Lock()
		n := len(kv.items)
		kv.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("items after the sweep: got %d, want 1", n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	kv.mu.Lock()
	_, ok := kv.items["kept"]
	kv.mu.Unlock()
	if !ok {
		t.Errorf("the key without ttl was swept")
	}
}
