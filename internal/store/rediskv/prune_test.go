package rediskv_test

import (
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store/storetest"
)

// TestStreamPrune checks that only consumers with nothing pending, idle
// long enough and not the caller are deleted.
func TestStreamPrune(t *testing.T) {
	kv := storetest.RedisKV(t)
	ctx := t.Context()
	if err := kv.StreamAppend(ctx, "s", []byte("a"), []byte("b")); err != nil {
		t.Fatal(err)
	}
	// busy keeps one entry pending; idle acknowledged what it read; me is
	// the caller.
	es, err := kv.StreamRead(ctx, "s", "g", "busy", 1, 0, 0)
	if err != nil || len(es) != 1 {
		t.Fatalf("read: %v %v", es, err)
	}
	es, err = kv.StreamRead(ctx, "s", "g", "idle", 1, 0, 0)
	if err != nil || len(es) != 1 {
		t.Fatalf("read: %v %v", es, err)
	}
	if err := kv.StreamAck(ctx, "s", "g", es[0].ID); err != nil {
		t.Fatal(err)
	}
	if _, err := kv.StreamRead(ctx, "s", "g", "me", 1, 0, 0); err != nil {
		t.Fatal(err)
	}
	if n, err := kv.StreamPrune(ctx, "s", "g", "me", time.Hour); err != nil || n != 0 {
		t.Fatalf("prune idle ≥ 1h: %d (%v), want 0: nobody has been idle that long", n, err)
	}
	time.Sleep(20 * time.Millisecond)
	if n, err := kv.StreamPrune(ctx, "s", "g", "me", 10*time.Millisecond); err != nil || n != 1 {
		t.Fatalf("prune: %d (%v), want 1 (idle)", n, err)
	}
	info, err := kv.StreamInfo(ctx, "s", "g")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range info.Consumers {
		names = append(names, c.Name)
	}
	if len(names) != 2 || info.Pending != 1 {
		t.Errorf("consumers after prune: %v (pending %d), want busy and me, 1 pending", names, info.Pending)
	}
	if n, err := kv.StreamPrune(ctx, "missing", "g", "me", 0); err != nil || n != 0 {
		t.Errorf("prune of a missing stream: %d (%v)", n, err)
	}
}
