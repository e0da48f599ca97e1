package storetest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"golang.org/x/sync/errgroup"

	"github.com/svc-gateway/svc/internal/store"
)

// Admit keys share one hash tag, as callers on Redis Cluster must.
const (
	admitRPM   = "a:{p}:rpm"
	admitTPM   = "a:{p}:tpm"
	admitSpend = "a:{p}:spend"
)

// exerciseAdmit checks KV.Admit (all or nothing over several windows and a
// reservation, the state it reports, atomicity under concurrent callers) and
// KV.Settle (entries rewritten in place, both ways, and a counter adjusted).
// Every subtest opens its own store.
func exerciseAdmit(t *testing.T, open func(t *testing.T) CounterKV) {
	t.Run("AdmitAllOrNothing", func(t *testing.T) { admitAllOrNothing(t, open(t)) })
	t.Run("AdmitWindowsOnly", func(t *testing.T) { admitWindowsOnly(t, open(t)) })
	t.Run("AdmitConcurrent", func(t *testing.T) { admitConcurrent(t, open(t)) })
	t.Run("SettleEntries", func(t *testing.T) { settleEntries(t, open(t)) })
	t.Run("SettleConcurrent", func(t *testing.T) { settleConcurrent(t, open(t)) })
	t.Run("SettleAdmission", func(t *testing.T) { settleAdmission(t, open(t)) })
}

// amend settles one entry of a one-minute window, without a counter, and
// returns an error unless Settle reports that one window and a total of 0.
func amend(ctx context.Context, kv CounterKV, key, entry string, cost int64) (store.WindowResult, error) {
	r, err := kv.Settle(ctx, store.SettleRequest{Windows: []store.Amendment{{Key: key, Window: time.Minute, Entry: entry, Cost: cost}}})
	if err != nil {
		return store.WindowResult{}, err
	}
	if len(r.Windows) != 1 || r.Total != 0 {
		return store.WindowResult{}, fmt.Errorf("settle of one window: got %+v, want one window and total 0", r)
	}
	return r.Windows[0], nil
}

// admitRequest builds a request: rpm (limit 3, cost 1), tpm (limit 100, cost
// tokens) and a reservation of amount against cap 10.
func admitRequest(tokens, amount int64) store.AdmitRequest {
	return store.AdmitRequest{
		Windows: []store.WindowCheck{
			{Key: admitRPM, Window: time.Minute, Limit: 3, Cost: 1},
			{Key: admitTPM, Window: time.Minute, Limit: 100, Cost: tokens},
		},
		Reserve: &store.Reservation{Key: admitSpend, Amount: amount, Cap: 10, TTL: time.Hour},
	}
}

// admitState reads the three counters (rpm, tpm, spend) without changing
// them.
func admitState(t *testing.T, kv CounterKV) [3]int64 {
	t.Helper()
	r, err := kv.Admit(t.Context(), store.AdmitRequest{
		Windows: []store.WindowCheck{
			{Key: admitRPM, Window: time.Minute, Limit: 3, Cost: 0},
			{Key: admitTPM, Window: time.Minute, Limit: 100, Cost: 0},
		},
		Reserve: &store.Reservation{Key: admitSpend, Amount: 0, Cap: 0},
	})
	if err != nil {
		t.Fatalf("Admit (read): %v", err)
	}
	return [3]int64{r.Windows[0].Used, r.Windows[1].Used, r.Total}
}

// admitAllOrNothing checks, over successive calls on one store, that Admit
// counts every window and the reservation when all allow it and nothing when
// any refuses, and what it reports: each window's use, Refused(), the tpm
// entry of an admitted call, and ResetIn.
func admitAllOrNothing(t *testing.T, kv CounterKV) {
	ignore := cmpopts.IgnoreFields(store.WindowResult{}, "ResetIn", "Entry")
	steps := []struct {
		name          string
		tokens, spend int64
		want          store.AdmitResult
		refused       int
		after         [3]int64
	}{
		{"admitted", 40, 4, store.AdmitResult{Allowed: true, Reserved: true, Total: 4, Windows: []store.WindowResult{
			{Allowed: true, Used: 1, Limit: 3}, {Allowed: true, Used: 40, Limit: 100}}}, -1, [3]int64{1, 40, 4}},
		{"tpm refuses", 70, 1, store.AdmitResult{Allowed: false, Reserved: true, Total: 4, Windows: []store.WindowResult{
			{Allowed: true, Used: 1, Limit: 3}, {Allowed: false, Used: 40, Limit: 100}}}, 1, [3]int64{1, 40, 4}},
		{"reservation refuses", 10, 7, store.AdmitResult{Allowed: false, Reserved: false, Total: 4, Windows: []store.WindowResult{
			{Allowed: true, Used: 1, Limit: 3}, {Allowed: true, Used: 40, Limit: 100}}}, -1, [3]int64{1, 40, 4}},
		{"admitted to the cap", 60, 6, store.AdmitResult{Allowed: true, Reserved: true, Total: 10, Windows: []store.WindowResult{
			{Allowed: true, Used: 2, Limit: 3}, {Allowed: true, Used: 100, Limit: 100}}}, -1, [3]int64{2, 100, 10}},
		{"zero amount at the cap refuses", 0, 0, store.AdmitResult{Allowed: false, Reserved: false, Total: 10, Windows: []store.WindowResult{
			{Allowed: true, Used: 2, Limit: 3}, {Allowed: true, Used: 100, Limit: 100}}}, -1, [3]int64{2, 100, 10}},
	}
	for _, s := range steps {
		got, err := kv.Admit(t.Context(), admitRequest(s.tokens, s.spend))
		if err != nil {
			t.Fatalf("%s: Admit: %v", s.name, err)
		}
		if diff := cmp.Diff(s.want, got, ignore); diff != "" {
			t.Errorf("%s: Admit result (-want +got):\n%s", s.name, diff)
		}
		if r := got.Refused(); r != s.refused {
			t.Errorf("%s: Refused() = %d, want %d", s.name, r, s.refused)
		}
		for i, w := range got.Windows {
			if (w.Entry != "") != (got.Allowed && s.tokens > 0) && i == 1 {
				t.Errorf("%s: tpm Entry = %q with Allowed %v", s.name, w.Entry, got.Allowed)
			}
			if w.Used > 0 && (w.ResetIn <= 0 || w.ResetIn > time.Minute) {
				t.Errorf("%s: window %d ResetIn = %v, want in (0, 1m]", s.name, i, w.ResetIn)
			}
		}
		if after := admitState(t, kv); after != s.after {
			t.Errorf("%s: counters after (rpm, tpm, spend) = %v, want %v", s.name, after, s.after)
		}
	}
}

// admitWindowsOnly checks Admit without a reservation (windows alone decide,
// Reserved is true and Total 0) and that it refuses malformed requests: a
// negative cost, a zero window, a negative amount.
func admitWindowsOnly(t *testing.T, kv CounterKV) {
	req := store.AdmitRequest{Windows: []store.WindowCheck{{Key: "solo", Window: time.Minute, Limit: 1, Cost: 1}}}
	for i, want := range []bool{true, false} {
		r, err := kv.Admit(t.Context(), req)
		if err != nil {
			t.Fatalf("Admit #%d: %v", i+1, err)
		}
		if r.Allowed != want || !r.Reserved || r.Total != 0 {
			t.Errorf("Admit #%d without a reservation: got %+v, want allowed %v, reserved, total 0", i+1, r, want)
		}
	}
	bad := []store.AdmitRequest{
		{Windows: []store.WindowCheck{{Key: "solo", Window: time.Minute, Limit: 1, Cost: -1}}},
		{Windows: []store.WindowCheck{{Key: "solo", Window: 0, Limit: 1, Cost: 1}}},
		{Reserve: &store.Reservation{Key: "r", Amount: -1}},
	}
	for i, req := range bad {
		if _, err := kv.Admit(t.Context(), req); err == nil {
			t.Errorf("Admit(bad request %d): got nil error, want an error", i)
		}
	}
}

// admitConcurrent checks that Admit is atomic under concurrent callers: 64
// goroutines admit exactly as many calls as the binding limit (the spend
// cap) allows, and refused calls count nothing in any counter.
func admitConcurrent(t *testing.T, kv CounterKV) {
	const workers, each = 64, 10
	// rpm allows 50 calls and tpm 400 tokens (8 tokens a call: 50
	// calls) and spend 120 (3 a call: 40 calls): the reservation binds.
	req := store.AdmitRequest{
		Windows: []store.WindowCheck{
			{Key: admitRPM, Window: time.Minute, Limit: 50, Cost: 1},
			{Key: admitTPM, Window: time.Minute, Limit: 400, Cost: 8},
		},
		Reserve: &store.Reservation{Key: admitSpend, Amount: 3, Cap: 120, TTL: time.Hour},
	}
	var (
		g        errgroup.Group
		admitted atomic.Int64
	)
	for range workers {
		g.Go(func() error {
			for range each {
				r, err := kv.Admit(t.Context(), req)
				if err != nil {
					return err
				}
				if r.Allowed {
					admitted.Add(1)
				}
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("Admit: %v", err)
	}
	n := admitted.Load()
	if n != 40 {
		t.Errorf("%d goroutines admitted %d calls, want exactly 40 (the spend cap)", workers, n)
	}
	// Refused calls counted nothing: every counter is n times its cost.
	want := [3]int64{n, 8 * n, 3 * n}
	if got := admitState(t, kv); got != want {
		t.Errorf("counters after (rpm, tpm, spend) = %v, want %v", got, want)
	}
}

// settleEntries checks Settle on window entries, in steps that share the tpm
// window and run in this order: entries rewritten in place (settleInPlace,
// which leaves the window at 300), entries not in the window
// (settleNotInWindow, which starts from 300), then malformed entries and a
// negative cost refused.
func settleEntries(t *testing.T, kv CounterKV) {
	ctx := t.Context()
	aEntry := settleInPlace(t, kv)
	settleNotInWindow(t, kv)
	for _, bad := range []string{"x", "1:", ":5", "1:-3"} {
		if _, err := amend(ctx, kv, admitTPM, bad, 1); err == nil {
			t.Errorf("Amend(malformed entry %q): got nil error, want an error", bad)
		}
	}
	if _, err := amend(ctx, kv, admitTPM, aEntry, -1); err == nil {
		t.Errorf("Amend(cost -1): got nil error, want an error")
	}
}

// settleInPlace checks, on a fresh store, that amending an entry of the tpm
// window refunds an over-estimate and charges an under-estimate, that an
// amended entry (under the id Settle returns) can be amended again, and that
// an entry amended to zero is gone. It leaves the window at 300 and returns
// the current id of the first entry.
func settleInPlace(t *testing.T, kv CounterKV) string {
	ctx := t.Context()
	used := func() int64 {
		t.Helper()
		r, err := kv.Window(ctx, admitTPM, time.Minute, 1<<40, 0)
		if err != nil {
			t.Fatalf("Window (read): %v", err)
		}
		return r.Used
	}
	a, err := kv.Window(ctx, admitTPM, time.Minute, 5000, 1000)
	if err != nil || !a.Allowed || a.Entry == "" {
		t.Fatalf("Window(1000): got %+v, %v, want allowed with an entry", a, err)
	}
	b, err := kv.Window(ctx, admitTPM, time.Minute, 5000, 50)
	if err != nil || !b.Allowed || b.Entry == "" || b.Entry == a.Entry {
		t.Fatalf("Window(50): got %+v, %v, want allowed with its own entry", b, err)
	}
	steps := []struct {
		name  string
		entry *string
		cost  int64
		used  int64
	}{
		{"over-estimate refunded", &a.Entry, 100, 150},
		{"under-estimate charged", &b.Entry, 80, 180},
		{"amended again", &a.Entry, 300, 380},
		{"to zero", &b.Entry, 0, 300},
	}
	for _, s := range steps {
		r, err := amend(ctx, kv, admitTPM, *s.entry, s.cost)
		if err != nil {
			t.Fatalf("%s: Amend: %v", s.name, err)
		}
		if r.Used != s.used || used() != s.used {
			t.Errorf("%s: Amend to %d: got used %d (window reads %d), want %d", s.name, s.cost, r.Used, used(), s.used)
		}
		if s.cost > 0 {
			*s.entry = r.Entry // the amended entry's id
		}
	}
	return a.Entry
}

// settleNotInWindow checks amending an entry that is not in the tpm window
// (gone, or nothing admitted): only an excess over its original cost is
// counted, as a new entry. The tpm window must stand at 300, as
// settleInPlace leaves it.
func settleNotInWindow(t *testing.T, kv CounterKV) {
	ctx := t.Context()
	other, err := kv.Window(ctx, "elsewhere", time.Minute, 5000, 20)
	if err != nil || other.Entry == "" {
		t.Fatalf("Window(20) on another key: got %+v, %v", other, err)
	}
	gone := []struct {
		entry      string
		cost, used int64
	}{
		{other.Entry, 5, 300},  // below its original 20: nothing to refund here
		{other.Entry, 45, 325}, // 25 above it
		{"", 0, 325},
		{"", 7, 332},
	}
	for _, g := range gone {
		r, err := amend(ctx, kv, admitTPM, g.entry, g.cost)
		if err != nil {
			t.Fatalf("Amend(%q, %d) of an entry not in the window: %v", g.entry, g.cost, err)
		}
		if r.Used != g.used {
			t.Errorf("Amend(%q, %d) of an entry not in the window: used %d, want %d", g.entry, g.cost, r.Used, g.used)
		}
	}
}

// settleConcurrent checks that Window and Settle are atomic under 64
// concurrent callers on one window.
func settleConcurrent(t *testing.T, kv CounterKV) {
	const workers = 64
	// Every call admits 1000 tokens and settles to its index: the window
	// ends at exactly the sum of the actual costs.
	var g errgroup.Group
	for i := range workers {
		g.Go(func() error {
			r, err := kv.Window(t.Context(), "amend", time.Minute, 1<<40, 1000)
			if err != nil {
				return err
			}
			_, err = amend(t.Context(), kv, "amend", r.Entry, int64(i))
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("Window/Amend: %v", err)
	}
	r, err := kv.Window(t.Context(), "amend", time.Minute, 1<<40, 0)
	if err != nil {
		t.Fatal(err)
	}
	if want := int64(workers * (workers - 1) / 2); r.Used != want {
		t.Errorf("window after %d amended calls: used %d, want %d", workers, r.Used, want)
	}
}

// settleAdmission checks that one Settle after an Admit amends the tpm entry
// and adjusts the spend counter together, and that a counter adjustment alone
// always applies, below zero too, and creates a missing counter.
func settleAdmission(t *testing.T, kv CounterKV) {
	ctx := t.Context()
	a, err := kv.Admit(ctx, admitRequest(60, 8))
	if err != nil || !a.Allowed {
		t.Fatalf("Admit: got %+v, %v, want allowed", a, err)
	}
	// The call used 15 tokens and cost 2: one Settle gives back the rest.
	r, err := kv.Settle(ctx, store.SettleRequest{
		Windows: []store.Amendment{{Key: admitTPM, Window: time.Minute, Entry: a.Windows[1].Entry, Cost: 15}},
		Counter: &store.Adjustment{Key: admitSpend, Delta: 2 - 8, TTL: time.Hour},
	})
	if err != nil {
		t.Fatalf("Settle: %v", err)
	}
	if len(r.Windows) != 1 || r.Windows[0].Used != 15 || r.Total != 2 {
		t.Errorf("Settle: got %+v, want tpm used 15, total 2", r)
	}
	if got, want := admitState(t, kv), [3]int64{1, 15, 2}; got != want {
		t.Errorf("counters after (rpm, tpm, spend) = %v, want %v", got, want)
	}
	// A counter adjustment alone always applies, below zero too, and
	// creates a missing counter.
	for _, c := range []struct {
		key         string
		delta, want int64
	}{{admitSpend, -5, -3}, {"a:{p}:new", 4, 4}} {
		r, err := kv.Settle(ctx, store.SettleRequest{Counter: &store.Adjustment{Key: c.key, Delta: c.delta, TTL: time.Hour}})
		if err != nil || r.Total != c.want {
			t.Errorf("Settle(%s by %d): got %+v, %v, want total %d", c.key, c.delta, r, err, c.want)
		}
	}
}
