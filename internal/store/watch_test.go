package store_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// TestWatchPing: a failing ping reports down once with its error, an
// answering one up once; no call while the answer stays the same.
func TestWatchPing(t *testing.T) {
	var failing atomic.Bool
	failing.Store(true)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	flips := make(chan bool, 8)
	boom := errors.New("down")
	go store.WatchPing(ctx, func(context.Context) error {
		if failing.Load() {
			return boom
		}
		return nil
	}, func(down bool, err error) {
		if down != (err != nil) || (down && !errors.Is(err, boom)) {
			t.Errorf("changed(%v, %v): the error must come with down only", down, err)
		}
		flips <- down
	})
	wait := func(want bool) {
		t.Helper()
		select {
		case got := <-flips:
			if got != want {
				t.Fatalf("flip to down=%v, want %v", got, want)
			}
		case <-time.After(3 * store.WatchEvery):
			t.Fatalf("no flip to down=%v", want)
		}
	}
	wait(true)
	failing.Store(false)
	wait(false)
	select {
	case got := <-flips:
		t.Fatalf("a flip (down=%v) while the answer stayed the same", got)
	case <-time.After(2 * store.WatchEvery):
	}
}

// TestPoll: load runs every tick until ctx ends; its failures are passed
// on, and Poll returns nil.
func TestPoll(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var n atomic.Int64
	failed := make(chan error, 10)
	done := make(chan error, 1)
	go func() {
		done <- store.Poll(ctx, 5*time.Millisecond, func(context.Context) error {
			if n.Add(1)%2 == 0 {
				return errors.New("down")
			}
			return nil
		}, func(err error) {
			// Never block Poll: a test stalled past the buffer's ten
			// failures would keep it from seeing ctx end.
			select {
			case failed <- err:
			default:
			}
		})
	}()
	select {
	case err := <-failed:
		if err.Error() != "down" {
			t.Errorf("failure %v", err)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("no failure passed on")
	}
	cancel()
	select {
	case err := <-done:
		if err != nil || n.Load() < 2 {
			t.Errorf("Poll returned %v after %d loads", err, n.Load())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Poll did not return within 5s of ctx's end")
	}
}
