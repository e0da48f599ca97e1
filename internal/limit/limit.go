// Package limit owns the per-principal limits of every gateway's request
// path: requests per minute, requests per hour (RATE_LIMIT_REQUESTS_PER_HOUR,
// virtual keys only), tokens per minute and the spend cap per budget period.
// Every counter lives in the shared hot-state store and is changed only by
// its atomic operations (Admit, Settle, Reserve: Lua scripts in Redis, a
// mutex in memory), so limits hold across replicas. It also answers a key's
// exact current-period spend (Limiter.Spend) and raises a budget event the
// first time a key reaches its cap in a period.
//
// The core is plain: Limiter.Admit(ctx, principal, Limits, Estimate) counts
// a call before it is made and returns an Admission, whose Settle(ctx, Used)
// corrects the counters when the call has ended. The limits come from the
// principal's records (a Source), never from the Principal itself. Stage is
// the thin pipeline wrapper the proxy uses: it resolves the limits, estimates
// the exchange, admits, and settles when the exchange ends; the tool and
// agent gateways call the core with their own estimates.
//
// limit imports apierr, identity, llm, pipeline, pricing, store and tokens; the
// proxy, mgmt (budget endpoint) and wire import it.
//
// # One store call before the provider call
//
// A request's checks (rpm, then the hourly cap, then tpm, then the spend
// reservation) are one store Admit: one round trip, all or nothing. A
// request refused by any of them counts in no window and reserves nothing;
// the refusal names the first window that refused (429), else the spend cap
// (402). Every key of a principal carries the hash tag {<kind>:<id>}, so the
// call stays in one Redis Cluster slot.
//
// # Windows
//
// Request and token limits are exact sliding windows (store.Counters.Window
// semantics): a unit counts from its admission until one window later, with
// no approximation. Before the call the estimated tokens are admitted into
// the tpm window; when the call ends the request's window entry is rewritten
// to the actual total (Settle), whichever way the estimate missed: the entry
// keeps its admission time, so the window stays exact and holds one entry per
// request. A call that fails without usage leaves 0 tokens. (When the call
// outlasted the window, the entry is gone and only an excess over the
// estimate is counted, from then.)
//
// # Spend
//
// The spend counter is an integer of micro-US-dollars per key and period
// start (calendar UTC: daily, weekly from Monday, monthly), expiring a day
// after its period. Before the call the estimated cost is reserved, in the
// Admit call, capped at the budget: a reservation that would pass the cap is
// refused with 402 budget_exceeded, so concurrent requests cannot push the
// counter past the cap through their estimates. When the call ends the
// counter is settled by the actual cost minus the estimate, which always
// applies; a call that fails before answering gives its reservation back,
// and so does a panic below the stage. The overshoot past a cap is therefore
// bounded by what requests in flight spend beyond their estimates. A request
// whose estimate is 0 is refused once the counter has reached the cap. A
// positive cap always caps: one below a micro-dollar counts as one
// micro-dollar, never as "no cap".
//
// # When the store is down
//
// Spend caps fail closed: when the Admit call fails for a key with a spend
// cap, the request is refused with 503 ("limits store unavailable"), because
// spending money that cannot be accounted for is worse than refusing a
// request. Rate limits (rpm, hourly, tpm) fail open: for a key without a
// spend cap the request passes without them and a warning is logged (at most
// one every ten seconds), because an outage of the hot-state store should
// not take the gateway down with it. Failed settlements are logged; the
// counters then keep the estimates. Only a store failure fails open: nothing
// a request sends (an absurd max_tokens) can make a check fail.
package limit

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/pricing"
	"github.com/svc-gateway/svc/internal/store"
)

// Options configure a Limiter.
type Options struct {
	// HourlyRequests is the requests-per-hour cap of every virtual key
	// (RATE_LIMIT_REQUESTS_PER_HOUR); 0 turns it off.
	HourlyRequests int64
	// Now is the clock that chooses budget periods; nil: time.Now. Windows
	// use the store's clock.
	Now func() time.Time
	// OnBudget, when set, is called once per key and period, by whichever
	// replica sees it first, when the key's spend (reservations in flight
	// included) first reaches its cap. It is called on the request's
	// goroutine and must not block.
	OnBudget func(ev BudgetEvent)
	// MeterSpend counts the spend of virtual keys without a cap too (added
	// up in memory and to their counters once a second by Run; a key with
	// limits but no cap, in its settlement), so Spends reports every key
	// that spent (the svc_vkey_spend_usd gauge).
	MeterSpend bool
	// Log receives warnings (store down, failed settlements); nil:
	// slog.Default().
	Log *slog.Logger
	// Counter counts prompt tokens for the estimates; nil: OpenAI's
	// tokenizers for OpenAI models and a measured upper bound for others
	// (package tokens).
	Counter PromptCounter
}

// BudgetEvent says that a key's spend reached a level of its cap in a
// period: 80 (percent: a warning) or 100 (the cap).
type BudgetEvent struct {
	KeyID    string
	Period   string // daily, weekly, monthly
	CapUSD   float64
	SpentUSD float64
	Level    int
}

// BudgetLevels are the percentages of a cap whose first crossing raises a
// BudgetEvent.
var BudgetLevels = []int{80, 100}

// ErrNotMetered is returned by Spend for a key without a spend cap: the
// stage keeps no counter for it (keys without limits never touch the store),
// so its spend is to be read from the audit records instead.
var ErrNotMetered = errors.New("limit: the key has no spend cap, so its spend is not metered")

// settleTimeout bounds the store calls made after the request's own context
// may have ended (settling a finished stream).
const settleTimeout = 5 * time.Second

// warnEvery is the least time between two "store down" warnings.
const warnEvery = 10 * time.Second

// Store is what the limiter needs of the hot-state store: atomic counters
// and windows, and reading a counter back.
type Store interface {
	store.Counters
	Get(ctx context.Context, key string) ([]byte, error)
}

// Limiter enforces the limits of principals against a shared Store. It is
// safe for concurrent use.
type Limiter struct {
	kv         Store
	prices     *pricing.Table
	hourly     int64
	now        func() time.Time
	onBudget   func(BudgetEvent)
	meterSpend bool
	// spenders are the virtual keys whose spend counter this process
	// changed, with their budget period: Spends reads their counters.
	spenders sync.Map // key id → period
	// meter holds the spend of keys without limits until Run adds it to
	// their counters.
	meter    spendMeter
	log      *slog.Logger
	counter  PromptCounter
	lastWarn atomic.Int64 // unix nanoseconds of the last fail-open warning
	// settling counts settlements running off the response path.
	settling sync.WaitGroup
}

// Settled waits until every settlement this limiter started has applied,
// and adds the metered spend not yet flushed to its counters.
func (l *Limiter) Settled() {
	l.settling.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), settleTimeout)
	defer cancel()
	l.flushSpend(ctx)
}

// New returns a Limiter keeping its counters in kv and pricing estimates
// with prices (nil: every model is unpriced).
func New(kv Store, prices *pricing.Table, opts Options) *Limiter {
	l := &Limiter{kv: kv, prices: prices, hourly: opts.HourlyRequests, now: opts.Now, onBudget: opts.OnBudget, meterSpend: opts.MeterSpend, log: opts.Log, counter: opts.Counter}
	if l.counter == nil {
		l.counter = tokenizer{}
	}
	if l.now == nil {
		l.now = time.Now
	}
	if l.log == nil {
		l.log = slog.Default()
	}
	return l
}

// Period names the budget period p applies: its BudgetPeriod when it is
// daily, weekly or monthly, else monthly (auth's default).
func Period(p string) string {
	switch p {
	case "daily", "weekly", "monthly":
		return p
	}
	return "monthly"
}

// tag is the hash tag every KV key of a principal carries, so that one
// Admit can check its windows and reserve its spend in one Redis Cluster
// slot.
func tag(kind identity.Kind, id string) string { return "{" + kind.String() + ":" + id + "}" }

// windowKey is the KV key of p's sliding window name (rpm, rph, tpm).
func windowKey(p *identity.Principal, name string) string {
	return "limit:" + tag(p.Kind, p.ID) + ":" + name
}

// spendKey is the KV key of keyID's spend counter for the period starting at
// start.
func spendKey(kind identity.Kind, id, period string, start time.Time) string {
	return "limit:" + tag(kind, id) + ":spend:" + period + ":" + start.Format("20060102")
}

// alertKey marks that the budget event of a counter was raised.
func alertKey(counter string, level int) string {
	if level == 100 {
		return counter + ":alerted"
	}
	return counter + ":alerted" + strconv.Itoa(level)
}

// periodTTL is how long a counter of the period starting at start lives: the
// period's length plus a day.
func periodTTL(period string, start time.Time) time.Duration {
	return PeriodEnd(period, start).Sub(start) + 24*time.Hour
}

// Spend returns keyID's spend in its current budget period, in US dollars,
// read from the counter the stage keeps: it includes the reservations of
// requests still in flight (their estimates until they settle), so it is
// exact as of the last settlement and never below what has been spent.
// maxBudget is the key's cap: with no cap (≤ 0) the key is not metered and
// Spend returns ErrNotMetered. A store failure is returned as is.
func (l *Limiter) Spend(ctx context.Context, keyID, period string, maxBudget float64) (float64, error) {
	if maxBudget <= 0 {
		return 0, ErrNotMetered
	}
	l.Settled() // this process's finished requests are counted at their cost
	period = Period(period)
	key := spendKey(identity.VirtualKey, keyID, period, PeriodStart(period, l.now()))
	b, err := l.kv.Get(ctx, key)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("limit: read spend of key %s: %w", keyID, err)
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("limit: spend counter of key %s is %q: %w", keyID, b, err)
	}
	return usd(n), nil
}

// capMicros is a cap in whole micro-dollars: a positive cap is at least one
// micro-dollar, so that no cap ever rounds to "no cap".
func capMicros(v float64) int64 {
	if v > 0 && !math.IsNaN(v) {
		return max(micros(v), 1)
	}
	return 0
}

// Spends is the current-period spend, in US dollars, of every virtual key
// whose spend this process counted, read from the shared counters (so
// every process reports the fleet's figure); keys whose counter cannot be
// read are left out.
func (l *Limiter) Spends(ctx context.Context) map[string]float64 {
	out := map[string]float64{}
	now := l.now()
	l.spenders.Range(func(k, v any) bool {
		id, period := k.(string), v.(string)
		b, err := l.kv.Get(ctx, spendKey(identity.VirtualKey, id, period, PeriodStart(period, now)))
		switch {
		case errors.Is(err, store.ErrNotFound):
			out[id] = 0 // a new period
		case err == nil:
			if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
				out[id] = usd(n)
			}
		}
		return ctx.Err() == nil
	})
	return out
}

// micros converts US dollars to whole micro-dollars, rounding to nearest.
func micros(v float64) int64 {
	if v <= 0 || math.IsNaN(v) {
		return 0
	}
	if v >= math.MaxInt64/1e6 {
		return math.MaxInt64
	}
	return int64(math.Round(v * 1e6))
}

func usd(micros int64) float64 { return float64(micros) / 1e6 }

// failOpen logs, at most once every warnEvery, that a rate limit was skipped.
func (l *Limiter) failOpen(what string, err error) {
	if errors.Is(err, context.Canceled) {
		return // the caller went away; the store is not at fault
	}
	now := time.Now().UnixNano()
	last := l.lastWarn.Load()
	if now-last < int64(warnEvery) || !l.lastWarn.CompareAndSwap(last, now) {
		return
	}
	l.log.Warn("limits store unavailable: rate limit not enforced (fail open)", "limit", what, "err", err)
}
