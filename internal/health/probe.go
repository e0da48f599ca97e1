package health

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// ProbeWindow is how far back Probe looks at this process's calls.
const ProbeWindow = time.Minute

// probeSlotSeconds is the width of one slot of outcomes; probeSlots cover
// ProbeWindow.
const (
	probeSlotSeconds = 10
	probeSlots       = int(ProbeWindow / (probeSlotSeconds * time.Second))
)

// outcomes counts one provider's calls and failures of this process in a
// ring of 10-second slots.
type outcomes struct {
	slot         [probeSlots]int64 // the slot number (unix seconds / 10) each entry counts
	calls, fails [probeSlots]int64
}

func (o *outcomes) add(slot int64, failed bool) {
	i := int(slot % int64(probeSlots))
	if o.slot[i] != slot {
		o.slot[i], o.calls[i], o.fails[i] = slot, 0, 0
	}
	o.calls[i]++
	if failed {
		o.fails[i]++
	}
}

// sum is the calls and failures of the slots after from, up to to.
func (o *outcomes) sum(from, to int64) (calls, fails int64) {
	for i := range o.slot {
		if o.slot[i] > from && o.slot[i] <= to {
			calls += o.calls[i]
			fails += o.fails[i]
		}
	}
	return calls, fails
}

// Probe is a readiness check (app.Probe) of provider reachability from this
// process, from the outcomes it already records (no call of its own). It
// fails when, over the last ProbeWindow, this process finished at least
// MinRequests provider calls and every provider it called failed at least
// UnhealthyErrorRate of them (5xx, 429, no answer): no provider it uses is
// reachable. A process with no calls in the window (just started, or taken
// out of the load balancer) is ready, so a replica returns to service once
// its failures are a minute old. It reads this process's figures only: a
// replica cut off from the providers leaves the pool while the others stay.
func (t *Tracker) Probe(context.Context) error {
	to := t.now().Unix() / probeSlotSeconds
	from := to - int64(probeSlots)
	type tally struct {
		provider     string
		calls, fails int64
	}
	var all []tally
	var calls int64
	t.mu.Lock()
	for p, o := range t.recent {
		c, f := o.sum(from, to)
		if c == 0 {
			continue
		}
		if float64(f) < UnhealthyErrorRate*float64(c) {
			t.mu.Unlock()
			return nil // one provider answers
		}
		all = append(all, tally{p, c, f})
		calls += c
	}
	t.mu.Unlock()
	if calls < MinRequests {
		return nil
	}
	sort.Slice(all, func(i, j int) bool { return all[i].provider < all[j].provider })
	parts := make([]string, len(all))
	for i, a := range all {
		parts[i] = fmt.Sprintf("%s %d of %d", a.provider, a.fails, a.calls)
	}
	return fmt.Errorf("health: no provider is reachable: calls failed in the last %v: %s", ProbeWindow, strings.Join(parts, ", "))
}
