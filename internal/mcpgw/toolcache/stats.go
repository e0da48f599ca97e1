package toolcache

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"

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

// Stats reads the statistics of each server, in order; a server never
// looked up has zeros.
func (c *Cache) Stats(ctx context.Context, serverIDs []string) ([]ServerStats, error) {
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
