package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/svc-gateway/svc/internal/store"
)

// exerciseWindow checks KV.Window: admission up to the limit, costs, the
// window sliding, refused costs not counted, ResetIn, and atomicity under
// concurrent callers.
func exerciseWindow(t *testing.T, open func(t *testing.T) CounterKV) {
	t.Run("WindowAdmitsThenRefuses", func(t *testing.T) { windowAdmitsThenRefuses(t, open(t)) })
	t.Run("WindowCosts", func(t *testing.T) { windowCosts(t, open(t)) })
	t.Run("WindowSlides", func(t *testing.T) { windowSlides(t, open(t)) })
	t.Run("WindowConcurrent", func(t *testing.T) { windowConcurrent(t, open(t)) })
}

// windowAdmitsThenRefuses checks that Window admits cost-1 calls up to the
// limit, then refuses, with ResetIn within the window, and that another key
// has a window of its own.
func windowAdmitsThenRefuses(t *testing.T, kv CounterKV) {
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
}

// windowCosts checks that Window counts costs, does not count refused ones,
// reads the state with a zero cost, refuses a cost above the limit even on
// an empty window, and rejects a negative cost.
func windowCosts(t *testing.T, kv CounterKV) {
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
}

// slideWin is the window WindowSlides uses, on key "w" with limit 3.
const slideWin = 200 * time.Millisecond

// slideWindow calls Window with cost on WindowSlides' window, failing t on
// an error.
func slideWindow(t *testing.T, kv CounterKV, cost int64) store.WindowResult {
	t.Helper()
	r, err := kv.Window(t.Context(), "w", slideWin, 3, cost)
	if err != nil {
		t.Fatalf("Window: %v", err)
	}
	return r
}

// windowSlides checks that a window slides: costs count while their window
// lasts, leave when it ends, and a quiet window empties. Its steps run in
// order on one key and time.
func windowSlides(t *testing.T, kv CounterKV) {
	start := windowSlidesToLimit(t, kv)
	windowFirstCostLeaves(t, kv, start)
	windowEmptiesWhenQuiet(t, kv)
}

// windowSlidesToLimit fills WindowSlides' window with a cost of 2, then
// checks that a cost of 1 is admitted and, while the first cost still
// counts, that the next is refused with ResetIn at most what is left of the
// first cost's window. It returns when it started, before the first cost.
func windowSlidesToLimit(t *testing.T, kv CounterKV) (start time.Time) {
	// The first entry's time lies between start and placed: start
	// bounds when it leaves from below, placed from above.
	start = time.Now()
	if r := slideWindow(t, kv, 2); !r.Allowed {
		t.Fatalf("first Window(2): got %+v, want allowed", r)
	}
	placed := time.Now()
	time.Sleep(slideWin / 2)
	// The first entry counts while its window lasts: a call that ends
	// before start+win saw it (on a loaded machine the sleep may
	// overshoot the window, and then only "allowed" holds).
	if r := slideWindow(t, kv, 1); !r.Allowed || time.Since(start) < slideWin && r.Used != 3 {
		t.Fatalf("second Window(1): got %+v, want allowed, used 3", r)
	}
	r := slideWindow(t, kv, 1)
	if time.Since(start) < slideWin*9/10 {
		// Still within the first entry's window: refused, and the
		// oldest entry leaves in at most what is left of its window.
		if r.Allowed || r.Used != 3 {
			t.Fatalf("Window(1) at the limit: got %+v, want refused, used 3", r)
		}
		if left := slideWin - time.Since(placed); r.ResetIn <= 0 || r.ResetIn > left+5*time.Millisecond {
			t.Errorf("Window(1) at the limit: ResetIn = %v, want in (0, %v]", r.ResetIn, left)
		}
	}
	return start
}

// windowFirstCostLeaves checks, once the first cost of windowSlidesToLimit
// (placed after start) has left and while the second still counts, that 2
// units fit again but 3 do not.
func windowFirstCostLeaves(t *testing.T, kv CounterKV, start time.Time) {
	// Once the first cost (2) has left, 2 units fit again, but not 3.
	time.Sleep(time.Until(start.Add(slideWin + 20*time.Millisecond)))
	if time.Since(start) < slideWin*3/2-10*time.Millisecond {
		if r := slideWindow(t, kv, 3); r.Allowed {
			t.Errorf("Window(3) after the first cost left: got %+v, want refused (the second is still counted)", r)
		}
		if r := slideWindow(t, kv, 2); !r.Allowed || r.Used != 3 {
			t.Errorf("Window(2) after the first cost left: got %+v, want allowed, used 3", r)
		}
	}
}

// windowEmptiesWhenQuiet checks that WindowSlides' window empties, with
// ResetIn 0, within waitFor, and then admits the whole limit again.
func windowEmptiesWhenQuiet(t *testing.T, kv CounterKV) {
	// After a whole window of quiet, the window is empty.
	var r store.WindowResult
	Eventually(t, waitFor, func() error {
		if r = slideWindow(t, kv, 0); r.Used != 0 {
			return fmt.Errorf("window still counts %d units", r.Used)
		}
		return nil
	})
	if r.ResetIn != 0 {
		t.Errorf("empty window: ResetIn = %v, want 0", r.ResetIn)
	}
	if r := slideWindow(t, kv, 3); !r.Allowed || r.Used != 3 {
		t.Errorf("Window(3) on an emptied window: got %+v, want allowed, used 3", r)
	}
}

// How many goroutines the concurrent Window and Reserve checks run, and
// how many calls each makes.
const concurrentWorkers, concurrentEach = 64, 20

// windowConcurrent checks, for costs of 1 and 3, that concurrent Window
// callers on one key are admitted exactly limit/cost times and never see
// more than the limit used.
func windowConcurrent(t *testing.T, kv CounterKV) {
	tests := []struct {
		name        string
		limit, cost int64
	}{
		{"cost 1", 100, 1},
		{"cost 3", 100, 3},
	}
	for _, tt := range tests {
		admitted, maxUsed, err := windowHammer(t.Context(), kv, tt.name, tt.limit, tt.cost)
		if err != nil {
			t.Fatalf("%s: Window: %v", tt.name, err)
		}
		// Every attempt happens within the minute: exactly limit/cost admitted.
		if want := tt.limit / tt.cost; admitted != want {
			t.Errorf("%s: %d goroutines admitted %d costs, want exactly %d", tt.name, concurrentWorkers, admitted, want)
		}
		if maxUsed > tt.limit {
			t.Errorf("%s: a Window reported %d units used, over the limit %d", tt.name, maxUsed, tt.limit)
		}
	}
}

// windowHammer has concurrentWorkers goroutines each call Window
// concurrentEach times on key with a one-minute window, limit and cost. It
// returns how many calls were admitted, the most units any call reported
// used, and the first error a call returned, if any.
func windowHammer(ctx context.Context, kv CounterKV, key string, limit, cost int64) (admitted, maxUsed int64, err error) {
	var (
		g    errgroup.Group
		nAdm atomic.Int64
		most atomic.Int64
	)
	for range concurrentWorkers {
		g.Go(func() error {
			for range concurrentEach {
				r, err := kv.Window(ctx, key, time.Minute, limit, cost)
				if err != nil {
					return err
				}
				if r.Allowed {
					nAdm.Add(1)
				}
				storeMax(&most, r.Used)
			}
			return nil
		})
	}
	err = g.Wait()
	return nAdm.Load(), most.Load(), err
}

// storeMax raises m to v if v is larger, atomically.
func storeMax(m *atomic.Int64, v int64) {
	for {
		cur := m.Load()
		if v <= cur || m.CompareAndSwap(cur, v) {
			return
		}
	}
}

// exerciseReserve checks KV.Reserve: the cap, settlements that always apply,
// ttl on creation, and atomicity under concurrent callers.
func exerciseReserve(t *testing.T, open func(t *testing.T) CounterKV) {
	t.Run("Reserve", func(t *testing.T) {
		kv := open(t)
		reserveCap(t, kv)
		reserveEdges(t, kv)
	})
	t.Run("ReserveTTL", func(t *testing.T) { reserveTTL(t, open(t)) })
	t.Run("ReserveConcurrent", func(t *testing.T) { reserveConcurrent(t, open(t)) })
}

// reserveCap checks, on key "r", that Reserve refuses (and does not apply)
// an amount that would go over the cap, always applies settlements and
// zero amounts, has no cap when cap ≤ 0, and leaves the total in the key.
func reserveCap(t *testing.T, kv CounterKV) {
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
}

// reserveEdges checks that a refused Reserve on a missing key does not
// create it, that a negative amount on a missing key does, and that
// Reserve on a non-integer value fails.
func reserveEdges(t *testing.T, kv CounterKV) {
	ctx := t.Context()
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
}

// reserveTTL checks that Reserve sets the ttl only when it creates the
// counter: a later ttl neither extends nor adds one, and an expired counter
// starts again from zero.
func reserveTTL(t *testing.T, kv CounterKV) {
	ctx := t.Context()
	const short = 80 * time.Millisecond
	// Later reservations do not extend the ttl.
	period, _ := BeforeExpiry(t, short, 32*short, "period", func(key string, ttl time.Duration) {
		if _, _, err := kv.Reserve(ctx, key, 3, 10, ttl); err != nil {
			t.Fatalf("Reserve: %v", err)
		}
		if _, _, err := kv.Reserve(ctx, key, 3, 10, time.Hour); err != nil {
			t.Fatalf("Reserve: %v", err)
		}
	})
	if _, _, err := kv.Reserve(ctx, "forever", 3, 10, 0); err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	if _, _, err := kv.Reserve(ctx, "forever", 3, 10, short); err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	waitNotFound(t, kv, period)
	if ok, total, err := kv.Reserve(ctx, period, 9, 10, time.Hour); err != nil || !ok || total != 9 {
		t.Errorf("Reserve after the counter expired: got %v, %d, %v, want true, 9, nil", ok, total, err)
	}
	time.Sleep(2 * short)
	if got, err := kv.Get(ctx, "forever"); err != nil || string(got) != "6" {
		t.Errorf("Get(forever): got %q, %v, want %q (ttl applies only on creation)", got, err, "6")
	}
}

// The amount each reservation of ReserveConcurrent takes on key "spend",
// and the cap on that counter.
const spendAmount, spendCap = 3, 100

// reserveConcurrent checks that concurrent Reserve callers on one key,
// some settling reservations back, never see a total over the cap and
// leave the counter at what was reserved minus what was settled.
func reserveConcurrent(t *testing.T, kv CounterKV) {
	ctx := t.Context()
	reserved, over, err := reserveHammer(ctx, kv)
	if err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	if over != 0 {
		t.Errorf("a Reserve reported a total of %d, over the cap %d", over, spendCap)
	}
	ok, total, err := kv.Reserve(ctx, "spend", 0, spendCap, time.Hour)
	if err != nil || !ok {
		t.Fatalf("Reserve(0): %v, %v", ok, err)
	}
	if want := reserved * spendAmount; total != want {
		t.Errorf("counter after the concurrent reservations = %d, want %d (reserved minus settled)", total, want)
	}
	if total > spendCap {
		t.Errorf("counter after %d attempts = %d, over the cap %d", concurrentWorkers*concurrentEach, total, spendCap)
	}
}

// reserveHammer has concurrentWorkers goroutines each call Reserve
// concurrentEach times on key "spend", settling every few successful
// reservations back. It returns how many reservations stand (made minus
// settled), a total over the cap that a call reported (0 if none), and the
// first error a call returned or a settlement refused, if any.
func reserveHammer(ctx context.Context, kv CounterKV) (reserved, over int64, err error) {
	var (
		g     errgroup.Group
		nRes  atomic.Int64
		nOver atomic.Int64
	)
	for i := range concurrentWorkers {
		g.Go(func() error {
			for j := range concurrentEach {
				ok, total, err := kv.Reserve(ctx, "spend", spendAmount, spendCap, time.Hour)
				if err != nil {
					return err
				}
				if total > spendCap {
					nOver.Store(total)
				}
				if !ok {
					continue
				}
				nRes.Add(1)
				// Every few calls, settle a reservation back and forth:
				// settlements must always apply.
				if (i+j)%7 == 0 {
					if ok, _, err := kv.Reserve(ctx, "spend", -spendAmount, spendCap, time.Hour); err != nil || !ok {
						return errors.Join(err, errors.New("a settlement was refused"))
					}
					nRes.Add(-1)
				}
			}
			return nil
		})
	}
	err = g.Wait()
	return nRes.Load(), nOver.Load(), err
}
