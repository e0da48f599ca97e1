package toolcache

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// ServerStats are one server's fleet-wide cache statistics.
type ServerStats struct {
	ServerID string  `json:"server_id"`
	Hits     int64   `json:"hits"`
	Misses   int64   `json:"misses"`
	HitRate  float64 `json:"hit_rate"` // hits / (hits + misses); 0 with no lookups
	SavedUSD float64 `json:"saved_usd"`
}

// StatsInterval is how often Run adds the statistics counted in process
// to the shared counters: another replica's counts show in Stats within it.
const StatsInterval = time.Second

// Run flushes the statistics every StatsInterval until ctx ends, then once
// more. A failed flush keeps its counts for the next one.
func (c *Cache) Run(ctx context.Context) error {
	tick := time.NewTicker(StatsInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.o.StoreTimeout)
			defer cancel()
			c.FlushStats(fctx)
			return nil
		case <-tick.C:
			c.FlushStats(ctx)
		}
	}
}

// counter names one statistic of one server.
type counter struct{ server, name string }

// FlushStats adds the statistics counted in process to the store's
// counters; what the store refuses stays pending (and is logged).
func (c *Cache) FlushStats(ctx context.Context) {
	c.pending.Range(func(k, v any) bool {
		n := v.(*atomic.Int64).Swap(0)
		if n == 0 {
			return true
		}
		sctx, cancel := context.WithTimeout(ctx, c.o.StoreTimeout)
		ct := k.(counter)
		_, err := c.kv.IncrBy(sctx, statsKey(ct.server, ct.name), n, 0)
		cancel()
		if err != nil {
			v.(*atomic.Int64).Add(n)
			c.kvFailed("stats", err)
			return false
		}
		return true
	})
}

// Stats reads the statistics of each server, in order, after adding this
// replica's pending counts (another's show after its next flush, within
// StatsInterval); a server never looked up has zeros.
func (c *Cache) Stats(ctx context.Context, serverIDs []string) ([]ServerStats, error) {
	c.FlushStats(ctx)
	out := make([]ServerStats, 0, len(serverIDs))
	for _, id := range serverIDs {
		var v [3]int64
		for i, name := range []string{"hits", "misses", "saved_micro_usd"} {
			n, err := c.readCounter(ctx, statsKey(id, name))
			if err != nil {
				return nil, fmt.Errorf("toolcache: stats of %q: %w", id, err)
			}
			v[i] = n
		}
		s := ServerStats{ServerID: id, Hits: v[0], Misses: v[1], SavedUSD: float64(v[2]) / 1e6}
		if n := s.Hits + s.Misses; n > 0 {
			s.HitRate = math.Round(float64(s.Hits)/float64(n)*1e4) / 1e4
		}
		out = append(out, s)
	}
	return out, nil
}

// readCounter reads a counter (0 when absent).
func (c *Cache) readCounter(ctx context.Context, key string) (int64, error) {
	b, err := c.kv.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(b), 10, 64)
}
