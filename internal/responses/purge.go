package responses

import (
	"context"
	"log/slog"
	"time"
)

// PurgeEvery removes expired records from s every interval until ctx ends
// (Load already hides them; this frees their space). A failure is logged
// and retried at the next tick.
func PurgeEvery(ctx context.Context, s Store, every time.Duration, log *slog.Logger) error {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case now := <-t.C:
			if n, err := s.Purge(ctx, now); err != nil && ctx.Err() == nil {
				log.Warn("responses: purge of expired records failed", "err", err)
			} else if n > 0 {
				log.Debug("responses: purged expired records", "count", n)
			}
		}
	}
}
