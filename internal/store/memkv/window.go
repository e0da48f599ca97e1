package memkv

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// Window admits cost into the sliding window at key under the mutex: the
// entries admitted at or before now-window are dropped, and cost is admitted
// when the sum of the rest plus cost stays ≤ limit. Each admitted cost is one
// entry stamped with the admission time, so memory is bounded by the entries
// admitted within one window. The key expires window after the last call that
// left entries in it.
func (kv *KV) Window(ctx context.Context, key string, win time.Duration, limit, cost int64) (store.WindowResult, error) {
	r, err := kv.Admit(ctx, store.AdmitRequest{Windows: []store.WindowCheck{{Key: key, Window: win, Limit: limit, Cost: cost}}})
	if err != nil {
		return store.WindowResult{}, err
	}
	return r.Windows[0], nil
}

// checkWindow validates one window's parameters.
func checkWindow(key string, win time.Duration, cost int64) error {
	if cost < 0 {
		return fmt.Errorf("memkv: window %q: negative cost %d", key, cost)
	}
	if win <= 0 {
		return fmt.Errorf("memkv: window %q: window %v is not positive", key, win)
	}
	return nil
}

// Admit checks every window and the reservation under the mutex and counts
// them all only when each has room.
func (kv *KV) Admit(ctx context.Context, req store.AdmitRequest) (store.AdmitResult, error) {
	for _, w := range req.Windows {
		if err := checkWindow(w.Key, w.Window, w.Cost); err != nil {
			return store.AdmitResult{}, err
		}
	}
	if rs := req.Reserve; rs != nil && rs.Amount < 0 {
		return store.AdmitResult{}, fmt.Errorf("memkv: admit: negative reservation %d on %q", rs.Amount, rs.Key)
	}
	if err := kv.begin(ctx); err != nil {
		return store.AdmitResult{}, err
	}
	defer kv.mu.Unlock()
	now := time.Now()
	items := make([]*item, len(req.Windows))
	res := store.AdmitResult{Allowed: true, Reserved: true, Windows: make([]store.WindowResult, len(req.Windows))}
	for i, c := range req.Windows {
		it, err := kv.windowItem(c.Key, now, c.Window)
		if err != nil {
			return store.AdmitResult{}, err
		}
		items[i] = it
		w := it.win
		res.Windows[i] = store.WindowResult{Limit: c.Limit, Allowed: c.Cost <= c.Limit && w.sum <= c.Limit-c.Cost}
		res.Allowed = res.Allowed && res.Windows[i].Allowed
	}
	var counter *item
	if rs := req.Reserve; rs != nil {
		var cur int64
		var err error
		counter, cur, err = kv.counter(rs.Key, now)
		if err != nil {
			return store.AdmitResult{}, fmt.Errorf("memkv: admit: reserve %q: %w", rs.Key, err)
		}
		res.Total = cur
		if rs.Cap > 0 && (cur >= rs.Cap || rs.Amount > rs.Cap-cur) {
			res.Reserved, res.Allowed = false, false
		} else if cur > math.MaxInt64-rs.Amount {
			return store.AdmitResult{}, fmt.Errorf("memkv: admit: reserve %q: increment would overflow", rs.Key)
		}
	}
	if res.Allowed {
		if rs := req.Reserve; rs != nil {
			res.Total += rs.Amount
			if counter == nil {
				kv.items[rs.Key] = &item{value: strconv.AppendInt(nil, res.Total, 10), expires: expiry(now, rs.TTL)}
			} else {
				counter.value = strconv.AppendInt(counter.value[:0], res.Total, 10)
			}
			kv.changed(rs.Key)
		}
		for i, c := range req.Windows {
			if c.Cost > 0 {
				res.Windows[i].Entry = kv.push(items[i].win, now, c.Cost)
			}
		}
	}
	for i, c := range req.Windows {
		kv.finish(c.Key, items[i], now, c.Window, &res.Windows[i])
	}
	return res, nil
}

// parseEntry splits an entry id "<seq>:<cost>" (see push); "" is seq 0.
func parseEntry(key, entry string) (seq uint64, orig int64, err error) {
	if entry == "" {
		return 0, 0, nil
	}
	s, c, ok := strings.Cut(entry, ":")
	seq, err1 := strconv.ParseUint(s, 10, 64)
	orig, err2 := strconv.ParseInt(c, 10, 64)
	if !ok || err1 != nil || err2 != nil || seq == 0 || orig < 0 {
		return 0, 0, fmt.Errorf("memkv: settle %q: malformed entry %q", key, entry)
	}
	return seq, orig, nil
}

// Settle rewrites window entries and adjusts a counter under the mutex; see
// store.KV.Settle. Everything is checked before anything changes.
func (kv *KV) Settle(ctx context.Context, req store.SettleRequest) (store.SettleResult, error) {
	type parsed struct {
		seq  uint64
		orig int64
	}
	ps := make([]parsed, len(req.Windows))
	for i, a := range req.Windows {
		if err := checkWindow(a.Key, a.Window, a.Cost); err != nil {
			return store.SettleResult{}, err
		}
		seq, orig, err := parseEntry(a.Key, a.Entry)
		if err != nil {
			return store.SettleResult{}, err
		}
		ps[i] = parsed{seq, orig}
	}
	if err := kv.begin(ctx); err != nil {
		return store.SettleResult{}, err
	}
	defer kv.mu.Unlock()
	now := time.Now()
	items := make([]*item, len(req.Windows))
	for i, a := range req.Windows {
		it, err := kv.windowItem(a.Key, now, a.Window)
		if err != nil {
			return store.SettleResult{}, err
		}
		items[i] = it
	}
	var counter *item
	var total int64
	if c := req.Counter; c != nil {
		var err error
		if counter, total, err = kv.counter(c.Key, now); err != nil {
			return store.SettleResult{}, fmt.Errorf("memkv: settle %q: %w", c.Key, err)
		}
		if (c.Delta > 0 && total > math.MaxInt64-c.Delta) || (c.Delta < 0 && total < math.MinInt64-c.Delta) {
			return store.SettleResult{}, fmt.Errorf("memkv: settle %q: increment would overflow", c.Key)
		}
	}
	res := store.SettleResult{Windows: make([]store.WindowResult, len(req.Windows))}
	for i, a := range req.Windows {
		r := store.WindowResult{Allowed: true, Limit: math.MaxInt64}
		w := items[i].win
		seq, cost := ps[i].seq, a.Cost
		j := sort.Search(len(w.entries), func(j int) bool { return w.entries[j].seq >= seq })
		switch {
		case seq != 0 && j < len(w.entries) && w.entries[j].seq == seq:
			// A zero cost stays as an entry until it leaves the window
			// (removing it from the middle would copy the window); finish
			// drops zero entries from the front.
			e := &w.entries[j]
			w.sum += cost - e.cost
			e.cost = cost
			if cost > 0 {
				r.Entry = strconv.FormatUint(e.seq, 10) + ":" + strconv.FormatInt(cost, 10)
			}
		case cost > ps[i].orig:
			r.Entry = kv.push(w, now, cost-ps[i].orig)
		}
		kv.finish(a.Key, items[i], now, a.Window, &r)
		res.Windows[i] = r
	}
	if c := req.Counter; c != nil {
		total += c.Delta
		if counter == nil {
			kv.items[c.Key] = &item{value: strconv.AppendInt(nil, total, 10), expires: expiry(now, c.TTL)}
		} else {
			counter.value = strconv.AppendInt(counter.value[:0], total, 10)
		}
		kv.changed(c.Key)
		res.Total = total
	}
	return res, nil
}

// windowItem returns the window at key with the entries that left it by now
// dropped, creating an empty one (not yet stored) when the key is missing.
// kv.mu must be held.
func (kv *KV) windowItem(key string, now time.Time, win time.Duration) (*item, error) {
	it := kv.live(key, now)
	if it == nil {
		return &item{win: &window{}}, nil
	}
	if it.win == nil {
		return nil, fmt.Errorf("memkv: window %q: %w", key, errWrongType)
	}
	w := it.win
	drop := sort.Search(len(w.entries), func(i int) bool { return w.entries[i].at.Add(win).After(now) })
	for _, e := range w.entries[:drop] {
		w.sum -= e.cost
	}
	w.entries = w.entries[drop:]
	return it, nil
}

// push appends an entry of cost admitted at now and returns its id,
// "<seq>:<cost>". kv.mu must be held.
func (kv *KV) push(w *window, now time.Time, cost int64) string {
	// Keep stamps non-decreasing even if the wall clock steps back.
	at := now
	if n := len(w.entries); n > 0 && at.Before(w.entries[n-1].at) {
		at = w.entries[n-1].at
	}
	kv.seq++
	w.entries = append(w.entries, windowEntry{at: at, seq: kv.seq, cost: cost})
	w.sum += cost
	return strconv.FormatUint(kv.seq, 10) + ":" + strconv.FormatInt(cost, 10)
}

// finish fills res's count and reset time and stores (or, when empty,
// deletes) the window at key, which expires win from now. kv.mu must be held.
func (kv *KV) finish(key string, it *item, now time.Time, win time.Duration, res *store.WindowResult) {
	w := it.win
	res.Used = w.sum
	zero := 0
	for zero < len(w.entries) && w.entries[zero].cost == 0 {
		zero++
	}
	w.entries = w.entries[zero:]
	if len(w.entries) == 0 {
		delete(kv.items, key)
		return
	}
	res.ResetIn = max(w.entries[0].at.Add(win).Sub(now), 0)
	it.expires = now.Add(win)
	kv.items[key] = it
}

// counter returns the integer counter at key (nil and 0 when missing).
// kv.mu must be held.
func (kv *KV) counter(key string, now time.Time) (*item, int64, error) {
	it := kv.live(key, now)
	if it == nil {
		return nil, 0, nil
	}
	if !it.plain() {
		return nil, 0, errWrongType
	}
	cur, err := strconv.ParseInt(string(it.value), 10, 64)
	if err != nil {
		return nil, 0, errors.New("value is not an integer")
	}
	return it, cur, nil
}
