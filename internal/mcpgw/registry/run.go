package registry

import (
	"context"
	"errors"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

const (
	tickEvery = time.Second // Run's checks of the bus
	// healAgain is how long after the bus came back Run reloads everything
	// a second time: the bus's subscription may reconnect after its pings
	// do, and a notice published between the two is lost.
	healAgain = 5 * time.Second
	// retryEvery is how soon a failed reload is retried by a full one.
	retryEvery = 5 * time.Second
)

// pinger is the optional ability of a bus to say whether it is up
// (memkv and rediskv have it).
type pinger interface {
	Ping(ctx context.Context) error
}

// Run keeps this process's view in step with the store until ctx ends: it
// subscribes to Channel and reloads the row of every id announced there,
// reloads everything at once, every ReloadEvery, when its subscription is
// made again, and when the bus answers again after failing (checked every
// second when the bus can Ping). It returns nil when ctx ends. Call it
// once per Registry.
func (r *Registry) Run(ctx context.Context) error {
	if !r.running.CompareAndSwap(false, true) {
		return errors.New("registry: Run is already running")
	}
	defer r.running.Store(false)
	f := &follower{r: r}
	defer func() {
		if f.sub != nil {
			_ = f.sub.Close()
		}
	}()
	f.subscribe(ctx) // before the load, so no change between them is missed
	f.reloadAll(ctx)
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	for {
		var msgs <-chan []byte
		if f.sub != nil {
			msgs = f.sub.C()
		}
		select {
		case <-ctx.Done():
			return nil
		case msg, ok := <-msgs:
			if !ok {
				f.sub, f.busDown = nil, true
				continue
			}
			f.reload(ctx, string(msg))
		case <-tick.C:
			f.tick(ctx, time.Now())
		}
	}
}

// follower is Run's state.
type follower struct {
	r       *Registry
	sub     store.Subscription
	busDown bool      // the bus failed a ping or a subscribe since it last worked
	next    time.Time // the next full reload
	again   time.Time // a second full reload after the bus came back
}

// subscribe subscribes to Channel unless subscribed; it reports whether a
// new subscription was made.
func (f *follower) subscribe(ctx context.Context) bool {
	if f.r.bus == nil || f.sub != nil {
		return false
	}
	s, err := f.r.bus.Subscribe(ctx, Channel)
	if err != nil {
		if !f.busDown && ctx.Err() == nil {
			f.r.log.Warn("registry: cannot subscribe to change notices; reloading every "+f.r.every.String()+" until it can", "err", err)
		}
		f.busDown = true
		return false
	}
	f.sub = s
	return true
}

// reloadAll reloads every registration and schedules the next full reload
// (sooner after a failure).
func (f *follower) reloadAll(ctx context.Context) {
	f.next = time.Now().Add(f.r.every)
	if err := f.r.Load(ctx); err != nil && ctx.Err() == nil {
		f.r.log.Warn("registry: reload failed; retrying in "+retryEvery.String(), "err", err)
		f.next = time.Now().Add(min(retryEvery, f.r.every))
	}
}

// reload applies one change notice.
func (f *follower) reload(ctx context.Context, id string) {
	if err := f.r.reload(ctx, id); err != nil && ctx.Err() == nil {
		f.r.log.Warn("registry: reload of a changed server failed; a full reload retries in "+retryEvery.String(), "id", id, "err", err)
		f.next = time.Now().Add(min(retryEvery, f.r.every, time.Until(f.next)))
	}
}

// tick checks the bus every second: a new subscription or a bus that
// answers again heals at once (and once more healAgain later); otherwise
// the full reload comes when due.
func (f *follower) tick(ctx context.Context, now time.Time) {
	subscribed := f.subscribe(ctx)
	up := f.r.ping(ctx) && (f.r.bus == nil || f.sub != nil)
	heal := up && (f.busDown || subscribed)
	if !up && !f.busDown && ctx.Err() == nil {
		f.r.log.Warn("registry: the bus does not answer; changes from other processes wait for the next full reload")
	}
	f.busDown = !up
	if heal {
		f.r.log.Info("registry: change notices are back; reloading every server")
		f.again = now.Add(healAgain)
	}
	due := !f.again.IsZero() && !now.Before(f.again)
	if due {
		f.again = time.Time{}
	}
	if heal || due || !now.Before(f.next) {
		f.reloadAll(ctx)
	}
}

// ping reports whether the bus answers; true for a bus without Ping (a
// failing bus then shows only as a failed subscription).
func (r *Registry) ping(ctx context.Context) bool {
	p, ok := r.bus.(pinger)
	if !ok {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, tickEvery)
	defer cancel()
	return p.Ping(ctx) == nil
}
