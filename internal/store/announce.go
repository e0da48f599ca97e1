package store

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Announcing a change: each attempt is bounded by AnnounceTimeout; a
// notice that could not be published is published again every
// AnnounceRetry, for at least MinAnnounceFor (the caching processes' TTLs
// may be longer than the announcer's), at most MaxUnannounced waiting.
const (
	AnnounceTimeout = 2 * time.Second
	AnnounceRetry   = time.Second
	MinAnnounceFor  = 5 * time.Minute
	MaxUnannounced  = 10_000
)

// Publisher is the part of a Bus an Announcer uses.
type Publisher interface {
	Publish(ctx context.Context, channel string, msg []byte) error
}

// Announcer publishes change notices on one channel for the processes
// that cache what changed. A notice that could not be published waits and
// is published again by one goroutine, running while any wait, every
// AnnounceRetry until it is or For (at least MinAnnounceFor) has passed: as
// long as another process may cache the thing it names; a notice waits once however often it
// failed. Its zero value is not usable: set Bus, Channel, For and Log.
type Announcer struct {
	Bus     Publisher
	Channel string
	For     time.Duration
	Log     *slog.Logger

	mu      sync.Mutex
	waiting map[string]time.Time // notice → given up at
	running bool
}

// Announce publishes msg now, whatever becomes of ctx (the change is
// made); when that fails it returns the error and publishes msg again
// later.
func (a *Announcer) Announce(ctx context.Context, msg string) error {
	err := a.publish(context.WithoutCancel(ctx), msg)
	if err != nil {
		a.later(msg)
	}
	return err
}

func (a *Announcer) publish(ctx context.Context, msg string) error {
	ctx, cancel := context.WithTimeout(ctx, AnnounceTimeout)
	defer cancel()
	return a.Bus.Publish(ctx, a.Channel, []byte(msg))
}

// later queues msg and starts the retrying goroutine unless it runs.
func (a *Announcer) later(msg string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.waiting) >= MaxUnannounced {
		a.Log.Warn("change notices waiting to be published are at their bound; this one is dropped", "channel", a.Channel)
		return
	}
	if a.waiting == nil {
		a.waiting = make(map[string]time.Time)
	}
	a.waiting[msg] = time.Now().Add(max(a.For, MinAnnounceFor))
	if !a.running {
		a.running = true
		go a.retry()
	}
}

// retry publishes the waiting notices every AnnounceRetry until none is
// left. A failed publish ends a round (the bus is down; the others would
// wait for their timeouts too).
func (a *Announcer) retry() {
	for {
		time.Sleep(AnnounceRetry)
		a.mu.Lock()
		batch := make([]string, 0, len(a.waiting))
		for msg := range a.waiting {
			batch = append(batch, msg)
		}
		a.mu.Unlock()
		var sent []string
		for _, msg := range batch {
			if a.publish(context.Background(), msg) != nil {
				break
			}
			sent = append(sent, msg)
		}
		if !a.settle(sent, time.Now()) {
			return
		}
	}
}

// settle drops the notices sent and those past their time; it reports
// whether any are left (else the goroutine ends, running cleared).
func (a *Announcer) settle(sent []string, now time.Time) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, msg := range sent {
		delete(a.waiting, msg)
	}
	if len(sent) > 0 {
		a.Log.Info("change notices published after a retry", "channel", a.Channel, "notices", len(sent))
	}
	gaveUp := 0
	for msg, until := range a.waiting {
		if now.After(until) {
			delete(a.waiting, msg)
			gaveUp++
		}
	}
	if gaveUp > 0 {
		a.Log.Warn("gave up publishing change notices", "channel", a.Channel, "notices", gaveUp)
	}
	if len(a.waiting) == 0 {
		a.running = false
		return false
	}
	return true
}

// Waiting is how many notices wait to be published again, and whether the
// retrying goroutine runs.
func (a *Announcer) Waiting() (n int, running bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.waiting), a.running
}
