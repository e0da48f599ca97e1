package cache

import (
	"context"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// Store is what a Cache needs of the shared hot-state store: values (the
// entries and the flush generations), logs (the entry log and the
// replicas' gauges), the bus (flush notices) and one counter operation
// (the fleet-wide statistics). store.KV implements it: memkv in-process,
// rediskv on Redis.
type Store interface {
	store.Values
	store.Logs
	store.Bus
	// IncrBy is store.Counters.IncrBy.
	IncrBy(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error)
}

// AdminStore is what an Admin needs of the same store: it reads the
// statistics and the gauges, and flushes by bumping a generation and
// telling the replicas. Every Store is an AdminStore.
type AdminStore interface {
	// Get is store.Values.Get.
	Get(ctx context.Context, key string) ([]byte, error)
	// IncrBy is store.Counters.IncrBy.
	IncrBy(ctx context.Context, key string, delta int64, ttl time.Duration) (int64, error)
	// ReadLog is store.Logs.ReadLog.
	ReadLog(ctx context.Context, key string, since time.Time, limit int) ([][]byte, error)
	// Publish is store.Bus.Publish.
	Publish(ctx context.Context, channel string, msg []byte) error
}

// The whole store, as the wiring holds it, serves both; and so does the
// cache's own store.
var (
	_ Store      = store.KV(nil)
	_ AdminStore = store.KV(nil)
	_ AdminStore = Store(nil)
)
