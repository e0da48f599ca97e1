package store

import (
	"context"
	"sync"
	"sync/atomic"
)

// PingSubscriber is the part of a Bus a Trust uses: it follows a channel
// and tells whether the bus is up.
type PingSubscriber interface {
	Subscriber
	Ping(ctx context.Context) error
}

// Trust tells a process-local cache that a bus's change notices keep fresh
// whether it may serve: only while Run is subscribed to the notices'
// channel and the bus answers its pings. Otherwise a notice may be lost
// (none is heard, or one published meanwhile goes nowhere), and the cache's
// owner asks its store instead. Trusted reads two atomics and takes no
// lock, so every lookup can ask it. The zero value trusts nothing until Run
// has subscribed. auth's key lookups and the MCP grants use it.
type Trust struct {
	following atomic.Bool // Run is subscribed to the channel
	busDown   atomic.Bool // the bus did not answer the last ping
}

// TrustHooks are what a Trust's owner does when Run follows its channel
// and watches its bus. A nil hook does nothing. The Follow hooks run from
// one goroutine, one at a time; Flush and BusFlipped also from Run's ping
// goroutine, concurrently with them.
type TrustHooks struct {
	// Flush empties the cache. Run calls it when a subscription is made,
	// before the cache is trusted (what was cached before it may have
	// missed a notice), and on each flip of the bus's pings, after Trusted
	// changed.
	Flush func()
	// BusFlipped runs after each flip's Flush: down with the ping's error
	// when the bus stops answering, up (nil) when it answers again. It is
	// where the owner logs the outage.
	BusFlipped func(down bool, err error)
	// Message runs for each notice, in the order received.
	Message func(msg []byte)
	// Lost runs as FollowHooks.Lost does, after the cache stopped being
	// trusted: whether and how the owner empties it then is its own.
	Lost func(err error) error
}

// Trusted reports whether the cache may serve: Run is subscribed and the
// bus answered its last ping.
func (t *Trust) Trusted() bool { return t.following.Load() && !t.busDown.Load() }

// Following reports whether Run is subscribed, whatever the pings say.
func (t *Trust) Following() bool { return t.following.Load() }

// Run follows channel on bus (Follow: a subscription lost is made again)
// and pings bus every WatchEvery (WatchPing) until ctx ends, keeping
// Trusted true only while both hold and telling h of each change. It
// returns as Follow does, once its ping goroutine has ended.
func (t *Trust) Run(ctx context.Context, bus PingSubscriber, channel string, h TrustHooks) error {
	// WatchPing starts from "up": a flag left by an earlier Run that ended
	// while the bus was down would never be cleared.
	t.busDown.Store(false)
	var wg sync.WaitGroup
	wg.Go(func() {
		WatchPing(ctx, bus.Ping, func(down bool, err error) {
			t.busDown.Store(down)
			h.flush()
			if h.BusFlipped != nil {
				h.BusFlipped(down, err)
			}
		})
	})
	defer wg.Wait()
	return Follow(ctx, bus, channel, FollowHooks{
		Subscribed: func() {
			h.flush()
			t.following.Store(true)
		},
		Message: h.Message,
		Lost: func(err error) error {
			t.following.Store(false)
			if h.Lost == nil {
				return nil
			}
			return h.Lost(err)
		},
	})
}

func (h *TrustHooks) flush() {
	if h.Flush != nil {
		h.Flush()
	}
}
