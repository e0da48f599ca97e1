package store

import (
	"context"
	"errors"
	"time"
)

// FollowRetry is how long Follow waits before subscribing again after
// Subscribe failed, unless FollowHooks.Retry says otherwise.
const FollowRetry = time.Second

// ErrSubscriptionEnded is what FollowHooks.Lost receives when a
// subscription's channel closed (the store ended it) before ctx ended.
var ErrSubscriptionEnded = errors.New("store: subscription ended")

// Subscriber is the part of a Bus that Follow uses.
type Subscriber interface {
	Subscribe(ctx context.Context, channel string) (Subscription, error)
}

// FollowHooks are what a follower of a channel does when Follow makes a
// subscription, receives a message and loses the subscription. A nil hook
// does nothing. Follow calls them from its own goroutine, one at a time, in
// the order of the events.
type FollowHooks struct {
	// Subscribed runs after each subscription is made, before its first
	// message: where a follower drops what it cached while it was not
	// listening.
	Subscribed func()
	// Message runs for each message, in the order received.
	Message func(msg []byte)
	// Lost runs once after each failed Subscribe and after each
	// subscription ends (then after it was closed). err is ctx's error
	// when ctx has ended, else Subscribe's error or ErrSubscriptionEnded.
	// A nil return follows on: Follow subscribes again at once after an
	// end (one that ended within a second, or Retry if shorter, with no
	// message is treated as a failure), after Retry after a failure. An error ends Follow, which
	// returns it (unless ctx has ended).
	Lost func(err error) error
	// Retry is the wait after a failed Subscribe (≤ 0: FollowRetry).
	Retry time.Duration
}

// Follow subscribes to channel on bus and passes each message to
// h.Message until ctx ends, subscribing again whenever Subscribe fails or
// the subscription ends, with h.Subscribed and h.Lost told of each. It
// returns nil when ctx ends, promptly (a Subscribe in flight returns when
// ctx ends, as memkv's and rediskv's do), or the error h.Lost returned. It
// starts no goroutine, and leaves no subscription open.
func Follow(ctx context.Context, bus Subscriber, channel string, h FollowHooks) error {
	retry := h.Retry
	if retry <= 0 {
		retry = FollowRetry
	}
	for ctx.Err() == nil {
		sub, err := bus.Subscribe(ctx, channel)
		failed := err != nil
		if !failed {
			made := time.Now()
			var got int
			got, err = h.read(ctx, sub)
			_ = sub.Close()
			// A subscription that ended as soon as it was made, with no
			// message, is a store refusing it: waiting as after a failure
			// keeps Follow from spinning on it.
			failed = got == 0 && time.Since(made) < min(retry, time.Second)
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		if h.Lost != nil {
			if err := h.Lost(err); err != nil && ctx.Err() == nil {
				return err
			}
		}
		if failed {
			pause(ctx, retry)
		}
	}
	return nil
}

// read runs h.Subscribed, then h.Message for each message of sub until its
// channel closes (ErrSubscriptionEnded) or ctx ends (ctx's error); it
// returns how many messages it passed on.
func (h *FollowHooks) read(ctx context.Context, sub Subscription) (int, error) {
	if h.Subscribed != nil {
		h.Subscribed()
	}
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return n, ctx.Err()
		case msg, ok := <-sub.C():
			if !ok {
				return n, ErrSubscriptionEnded
			}
			if h.Message != nil {
				h.Message(msg)
			}
		}
	}
}

// pause returns after d or when ctx ends, whichever comes first.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}
