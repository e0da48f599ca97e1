package limit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// meterEvery is how often the spend of keys without limits is added to
// their counters.
const meterEvery = time.Second

// spendMeter adds up, in memory, what the calls of virtual keys without a
// spend cap cost, and adds it to their shared spend counters once a second
// (Limiter.Run): one store call per key and second instead of one per
// call, and nothing on the calls' path. A key with a spend cap is settled
// call by call instead (Admission.Settle), since its cap needs the exact
// figure.
type spendMeter struct {
	mu sync.RWMutex
	m  map[string]*meterEntry // by key id
}

// meterEntry is one key's spend in one period, not yet in its counter.
type meterEntry struct {
	start  time.Time // the period's start
	period string
	micros atomic.Int64
}

// add counts micros for key id in the period starting at start.
func (m *spendMeter) add(id, period string, start time.Time, micros int64) {
	m.mu.RLock()
	e := m.m[id]
	m.mu.RUnlock()
	if e == nil || !e.start.Equal(start) || e.period != period {
		m.mu.Lock()
		if e = m.m[id]; e == nil || !e.start.Equal(start) || e.period != period {
			if e != nil && e.micros.Load() != 0 {
				// The period turned with spend not yet flushed: keep it under
				// a key of its own until the next flush.
				m.m[id+"\x00"+e.start.String()] = e
			}
			e = &meterEntry{start: start, period: period}
			if m.m == nil {
				m.m = map[string]*meterEntry{}
			}
			m.m[id] = e
		}
		m.mu.Unlock()
	}
	e.micros.Add(micros)
}

// taken is a key's spend taken out of the meter by drain.
type taken struct {
	id     string
	e      *meterEntry
	micros int64
}

// drain takes every pending amount out of the meter.
func (m *spendMeter) drain() []taken {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []taken
	for k, e := range m.m {
		if n := e.micros.Swap(0); n != 0 {
			id := k
			if i := indexNUL(k); i >= 0 {
				id = k[:i]
				delete(m.m, k) // a past period's leftover
			}
			out = append(out, taken{id: id, e: e, micros: n})
		}
	}
	return out
}

func indexNUL(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return i
		}
	}
	return -1
}

// flushSpend adds what the meter holds to the keys' counters. An amount
// the store refused stays in the meter for the next flush.
func (l *Limiter) flushSpend(ctx context.Context) {
	for _, t := range l.meter.drain() {
		key := spendKey(identity.VirtualKey, t.id, t.e.period, t.e.start)
		if _, err := l.kv.IncrBy(ctx, key, t.micros, periodTTL(t.e.period, t.e.start)); err != nil {
			l.log.Warn("limits: could not add metered spend; retrying at the next flush", "key_id", t.id, "err", err)
			t.e.micros.Add(t.micros)
			continue
		}
		l.spenders.Store(t.id, t.e.period)
	}
}

// Run adds the metered spend of keys without limits to their counters
// every second until ctx ends, and once more then.
func (l *Limiter) Run(ctx context.Context) error {
	t := time.NewTicker(meterEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			fctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
			l.flushSpend(fctx)
			cancel()
			return nil
		case <-t.C:
			l.flushSpend(ctx)
		}
	}
}

// meterSpent adds what a call of p without a spend cap cost to the meter,
// when spend is metered and p is a virtual key.
func (l *Limiter) meterSpent(p *identity.Principal, lim Limits, costUSD float64) {
	if !l.meterSpend || p.Kind != identity.VirtualKey {
		return
	}
	if n := micros(costUSD); n > 0 {
		period := Period(lim.BudgetPeriod)
		l.meter.add(p.ID, period, PeriodStart(period, l.now()), n)
	}
}

// meterCall runs next for a principal without limits and, when spend is
// metered, adds what the call cost to the meter once it ended (an
// admission that counted nothing, settled as every other).
func (l *Limiter) meterCall(ctx context.Context, x *pipeline.Exchange, p *identity.Principal, lim Limits, next pipeline.Handler) (*pipeline.Response, error) {
	if !l.meterSpend || p.Kind != identity.VirtualKey {
		return next(ctx, x)
	}
	return l.call(ctx, x, next, &Admission{l: l, p: p, lim: lim})
}
