package store

import (
	"context"
	"time"
)

// WatchEvery is how often WatchPing pings; with WatchTimeout it bounds how
// long a consumer trusts a cache kept fresh by bus notices after the bus
// went down.
const (
	WatchEvery   = time.Second
	WatchTimeout = 500 * time.Millisecond
)

// WatchPing pings every WatchEvery (each ping bounded by WatchTimeout)
// until ctx ends, and calls changed each time the answer flips: down with
// the ping's error when it starts failing, up (nil) when it answers again.
// It starts from "up". Consumers that cache what a Bus invalidates use it to
// stop trusting their cache while notices may be lost.
func WatchPing(ctx context.Context, ping func(context.Context) error, changed func(down bool, err error)) {
	t := time.NewTicker(WatchEvery)
	defer t.Stop()
	down := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, WatchTimeout)
		err := ping(pctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if now := err != nil; now != down {
			down = now
			changed(down, err)
		}
	}
}

// Poll calls load every d until ctx ends, passing each failure (none after
// ctx ended) to failed: how a consumer keeps a snapshot of SQL records in
// step without a bus (the sign-in state, the teams). It returns nil.
func Poll(ctx context.Context, d time.Duration, load func(context.Context) error, failed func(error)) error {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := load(ctx); err != nil && ctx.Err() == nil {
				failed(err)
			}
		}
	}
}
