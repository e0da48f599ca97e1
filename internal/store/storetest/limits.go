package storetest

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// exerciseWindow checks KV.Window: admission up to the limit, costs, the
// window sliding, refused costs not counted, ResetIn, and atomicity under
// concurrent callers.
func exerciseWindow(t *testing.T, open func(t *testing.T) CounterKV) {
	t.Run("WindowAdmitsThenRefuses", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		const limit = 5
		for i := range limit {
			r, err := kv.Window(ctx, "w", time.Minute, limit, 1)
			if err != nil {
				t.Fatalf("Window #%d: %v", i+1, err)
			}
			if !r.Allowed || r.Used != int64(i+1) || r.Limit != limit {
				t.Fatalf("Window #%d: got %+v, want allowed, used %d, limit %d", i+1, r, i+1, limit)
			}
			if r.ResetIn <= 0 || r.ResetIn > time.Minute {
				t.Errorf("Window #%d: ResetIn = %v, want in (0, 1m]", i+1, r.ResetIn)
			}
		}
		r, err := kv.Window(ctx, "w", time.Minute, limit, 1)
		if err != nil {
			t.Fatalf("Window over the limit: %v", err)
		}
		if r.Allowed || r.Used != limit {
			t.Errorf("Window over the limit: got %+v, want refused, used %d", r, limit)
		}
		if r.ResetIn <= 0 || r.ResetIn > time.Minute {
			t.Errorf("Window over the limit: ResetIn = %v, want in (0, 1m]", r.ResetIn)
		}
		// Another key has its own window.
		if r, err := kv.Window(ctx, "other", time.Minute, limit, 1); err != nil || !r.Allowed || r.Used != 1 {
			t.Errorf("Window on another key: got %+v, %v, want allowed, used 1", r, err)
		}
	})

	t.Run("WindowCosts", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		steps := []struct {
			cost    int64
			allowed bool
			used    int64
		}{
			{4, true, 4},
			{4, true, 8},
			{3, false, 8}, // refused: not counted
			{3, false, 8},
			{2, true, 10},
			{0, true, 10}, // a zero cost reads the state
			{1, false, 10},
		}
		for i, s := range steps {
			r, err := kv.Window(ctx, "w", time.Minute, 10, s.cost)
			if err != nil {
				t.Fatalf("step %d: Window(cost %d): %v", i, s.cost, err)
			}
			if r.Allowed != s.allowed || r.Used != s.used {
				t.Errorf("step %d: Window(cost %d): got allowed %v, used %d, want %v, %d", i, s.cost, r.Allowed, r.Used, s.allowed, s.used)
			}
		}
		// A cost above the limit is refused even on an empty window.
		r, err := kv.Window(ctx, "big", time.Minute, 10, 11)
		if err != nil || r.Allowed || r.Used != 0 || r.ResetIn != 0 {
			t.Errorf("Window(cost 11, limit 10) on an empty window: got %+v, %v, want refused, used 0, ResetIn 0", r, err)
		}
		// An empty window reads as empty.
		r, err = kv.Window(ctx, "empty", time.Minute, 10, 0)
		if err != nil || !r.Allowed || r.Used != 0 || r.ResetIn != 0 {
			t.Errorf("Window(cost 0) on an empty window: got %+v, %v, want allowed, used 0, ResetIn 0", r, err)
		}
		if _, err := kv.Window(ctx, "w", time.Minute, 10, -1); err == nil {
			t.Errorf("Window(cost -1): got nil error, want an error")
		}
	})

	t.Run("WindowSlides", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		const win = 200 * time.Millisecond
		window := func(cost int64) store.WindowResult {
			t.Helper()
			r, err := kv.Window(ctx, "w", win, 3, cost)
			if err != nil {
				t.Fatalf("Window: %v", err)
			}
			return r
		}
		// The first entry's time lies between start and placed: start
		// bounds when it leaves from below, placed from above.
		start := time.Now()
		if r := window(2); !r.Allowed {
			t.Fatalf("first Window(2): got %+v, want allowed", r)
		}
		placed := time.Now()
		time.Sleep(win / 2)
		// The first entry counts while its window lasts: a call that ends
		// before start+win saw it (on a loaded machine the sleep may
		// overshoot the window, and then only "allowed" holds).
		if r := window(1); !r.Allowed || time.Since(start) < win && r.Used != 3 {
			t.Fatalf("second Window(1): got %+v, want allowed, used 3", r)
		}
		r := window(1)
		if time.Since(start) < win*9/10 {
			// Still within the first entry's window: refused, and the
			// oldest entry leaves in at most what is left of its window.
			if r.Allowed || r.Used != 3 {
				t.Fatalf("Window(1) at the limit: got %+v, want refused, used 3", r)
			}
			if left := win - time.Since(placed); r.ResetIn <= 0 || r.ResetIn > left+5*time.Millisecond {
				t.Errorf("Window(1) at the limit: ResetIn = %v, want in (0, %v]", r.ResetIn, left)
			}
		}
		// Once the first cost (2) has left, 2 units fit again, but not 3.
		time.Sleep(time.Until(start.Add(win + 20*time.Millisecond)))
		if time.Since(start) < win*3/2-10*time.Millisecond {
			if r := window(3); r.Allowed {
				t.Errorf("Window(3) after the first cost left: got %+v, want refused (the second is still counted)", r)
			}
			if r := window(2); !r.Allowed || r.Used != 3 {
				t.Errorf("Window(2) after the first cost left: got %+v, want allowed, used 3", r)
			}
		}
		// After a whole window of quiet, the window is empty.
		deadline := time.Now().Add(waitFor)
		for {
			r := window(0)
			if r.Used == 0 {
				if r.ResetIn != 0 {
					t.Errorf("empty window: ResetIn = %v, want 0", r.ResetIn)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("window still counts %d units %v later", r.Used, waitFor)
			}
			time.Sleep(20 * time.Millisecond)
		}
		if r := window(3); !r.Allowed || r.Used != 3 {
			t.Errorf("Window(3) on an emptied window: got %+v, want allowed, used 3", r)
		}
	})

	t.Run("WindowConcurrent", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		const workers, each = 64, 20
		tests := []struct {
			name        string
			limit, cost int64
		}{
			{"cost 1", 100, 1},
			{"cost 3", 100, 3},
		}
		for _, tt := range tests {
			var (
				wg       sync.WaitGroup
				admitted atomic.Int64
				maxUsed  atomic.Int64
				errs     = make(chan error, workers)
			)
			for range workers {
				wg.Go(func() {
					for range each {
						r, err := kv.Window(ctx, tt.name, time.Minute, tt.limit, tt.cost)
						if err != nil {
							errs <- err
							return
						}
						if r.Allowed {
							admitted.Add(1)
						}
						for {
							m := maxUsed.Load()
							if r.Used <= m || maxUsed.CompareAndSwap(m, r.Used) {
								break
							}
						}
					}
				})
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Fatalf("%s: Window: %v", tt.name, err)
			}
			// Every attempt happens within the minute: exactly limit/cost admitted.
			if got, want := admitted.Load(), tt.limit/tt.cost; got != want {
				t.Errorf("%s: %d goroutines admitted %d costs, want exactly %d", tt.name, workers, got, want)
			}
			if got := maxUsed.Load(); got > tt.limit {
				t.Errorf("%s: a Window reported %d units used, over the limit %d", tt.name, got, tt.limit)
			}
		}
	})
}

// exerciseReserve checks KV.Reserve: the cap, settlements that always apply,
// ttl on creation, and atomicity under concurrent callers.
func exerciseReserve(t *testing.T, open func(t *testing.T) CounterKV) {
	t.Run("Reserve", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		steps := []struct {
			amount, cap int64
			ok          bool
			total       int64
		}{
			{5, 10, true, 5},
			{5, 10, true, 10},
			{1, 10, false, 10}, // over the cap: refused, not applied
			{-3, 10, true, 7},  // settlements always apply
			{-20, 10, true, -13},
			{100, 0, true, 87}, // cap ≤ 0: no cap
			{0, 1, true, 87},   // the cap is checked only for positive amounts
			{-80, 1, true, 7},  // even when the counter is over the cap
			{1, 5, false, 7},
		}
		for i, s := range steps {
			ok, total, err := kv.Reserve(ctx, "r", s.amount, s.cap, time.Hour)
			if err != nil {
				t.Fatalf("step %d: Reserve(%d, cap %d): %v", i, s.amount, s.cap, err)
			}
			if ok != s.ok || total != s.total {
				t.Errorf("step %d: Reserve(%d, cap %d): got %v, %d, want %v, %d", i, s.amount, s.cap, ok, total, s.ok, s.total)
			}
		}
		if got, err := kv.Get(ctx, "r"); err != nil || string(got) != "7" {
			t.Errorf("Get(r) after Reserve: got %q, %v, want %q", got, err, "7")
		}
		// A refused reservation does not create the key.
		if ok, total, err := kv.Reserve(ctx, "new", 5, 3, time.Hour); err != nil || ok || total != 0 {
			t.Errorf("Reserve(5, cap 3) on a missing key: got %v, %d, %v, want false, 0, nil", ok, total, err)
		}
		if _, err := kv.Get(ctx, "new"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get after a refused Reserve on a missing key: got error %v, want store.ErrNotFound", err)
		}
		// A negative amount on a missing key creates it.
		if ok, total, err := kv.Reserve(ctx, "neg", -4, 3, time.Hour); err != nil || !ok || total != -4 {
			t.Errorf("Reserve(-4) on a missing key: got %v, %d, %v, want true, -4, nil", ok, total, err)
		}
		if err := kv.Set(ctx, "text", []byte("not a number"), 0); err != nil {
			t.Fatalf("Set: %v", err)
		}
		if _, _, err := kv.Reserve(ctx, "text", 1, 0, 0); err == nil {
			t.Errorf("Reserve on a non-integer value: got nil error, want an error")
		}
	})

	t.Run("ReserveTTL", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		const short = 80 * time.Millisecond
		if _, _, err := kv.Reserve(ctx, "period", 3, 10, short); err != nil {
			t.Fatalf("Reserve: %v", err)
		}
		// Later reservations do not extend the ttl.
		if _, _, err := kv.Reserve(ctx, "period", 3, 10, time.Hour); err != nil {
			t.Fatalf("Reserve: %v", err)
		}
		if _, _, err := kv.Reserve(ctx, "forever", 3, 10, 0); err != nil {
			t.Fatalf("Reserve: %v", err)
		}
		if _, _, err := kv.Reserve(ctx, "forever", 3, 10, short); err != nil {
			t.Fatalf("Reserve: %v", err)
		}
		waitNotFound(t, kv, "period")
		if ok, total, err := kv.Reserve(ctx, "period", 9, 10, time.Hour); err != nil || !ok || total != 9 {
			t.Errorf("Reserve after the counter expired: got %v, %d, %v, want true, 9, nil", ok, total, err)
		}
		time.Sleep(2 * short)
		if got, err := kv.Get(ctx, "forever"); err != nil || string(got) != "6" {
			t.Errorf("Get(forever): got %q, %v, want %q (ttl applies only on creation)", got, err, "6")
		}
	})

	t.Run("ReserveConcurrent", func(t *testing.T) {
		kv := open(t)
		ctx := t.Context()
		const (
			workers, each = 64, 20
			amount, cap   = 3, 100
		)
		var (
			wg       sync.WaitGroup
			reserved atomic.Int64
			over     atomic.Int64
			errs     = make(chan error, workers)
		)
		for i := range workers {
			wg.Go(func() {
				for j := range each {
					ok, total, err := kv.Reserve(ctx, "spend", amount, cap, time.Hour)
					if err != nil {
						errs <- err
						return
					}
					if total > cap {
						over.Store(total)
					}
					if !ok {
						continue
					}
					reserved.Add(1)
					// Every few calls, settle a reservation back and forth:
					// settlements must always apply.
					if (i+j)%7 == 0 {
						if ok, _, err := kv.Reserve(ctx, "spend", -amount, cap, time.Hour); err != nil || !ok {
							errs <- errors.Join(err, errors.New("a settlement was refused"))
							return
						}
						reserved.Add(-1)
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatalf("Reserve: %v", err)
		}
		if got := over.Load(); got != 0 {
			t.Errorf("a Reserve reported a total of %d, over the cap %d", got, cap)
		}
		ok, total, err := kv.Reserve(ctx, "spend", 0, cap, time.Hour)
		if err != nil || !ok {
			t.Fatalf("Reserve(0): %v, %v", ok, err)
		}
		if want := reserved.Load() * amount; total != want {
			t.Errorf("counter after the concurrent reservations = %d, want %d (reserved minus settled)", total, want)
		}
		if total > cap {
			t.Errorf("counter after %d attempts = %d, over the cap %d", workers*each, total, cap)
		}
	})
}
