package limit

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/store"
)

// Limits are the limits of one principal, resolved from its records (the
// virtual key today; the team and user records when sign-in lands) by the
// caller: a Principal carries who is calling, never what it may spend.
type Limits struct {
	RPM int64 // requests per minute; 0: none
	TPM int64 // tokens per minute; 0: none
	// MaxBudgetUSD caps the spend per BudgetPeriod; 0: no cap. A positive
	// cap always caps, however small (it is never rounded to "no cap").
	MaxBudgetUSD float64
	BudgetPeriod string // daily, weekly, monthly (default)
	// Owner, when set, owns the counters instead of the caller: a team
	// (identity.Team) whose members share its limits and budget.
	Owner *identity.Principal
}

// Any reports whether any limit is set.
func (l Limits) Any() bool { return l.RPM > 0 || l.TPM > 0 || l.MaxBudgetUSD > 0 }

// Source resolves a principal's limits from its records.
type Source interface {
	Limits(ctx context.Context, p *identity.Principal) (Limits, error)
}

// SourceFunc adapts a function to a Source.
type SourceFunc func(ctx context.Context, p *identity.Principal) (Limits, error)

// Limits implements Source.
func (f SourceFunc) Limits(ctx context.Context, p *identity.Principal) (Limits, error) {
	return f(ctx, p)
}

// Estimate is what a call is expected to use, known before it is made: the
// tokens admitted into the tpm window and the cost reserved against the
// spend cap. Both are corrected to the actual usage by Settle.
type Estimate struct {
	Tokens  int64
	CostUSD float64
}

// Used is what a call actually used, known when it ended.
type Used struct {
	Tokens  int64
	CostUSD float64
}

// Admission is an admitted call: what it counted, to settle when it ends.
// A nil *Admission (nothing to count) is valid: its methods do nothing.
type Admission struct {
	l      *Limiter
	p      *identity.Principal
	lim    Limits
	header http.Header // the x-ratelimit-* headers of the answer
	tpm    *tpmEntry
	res    *reservation
	// EstimateUSD is the cost reserved (0 without a spend cap).
	EstimateUSD float64
}

// tpmEntry is the tpm window's entry for a call, to settle when it ends.
type tpmEntry struct {
	key      string
	entry    string // store.WindowResult.Entry; "" when the estimate was 0
	estimate int64
}

// reservation is a spend reservation to settle when the call ends.
type reservation struct {
	key    string
	amount int64 // micro-USD reserved
	cap    int64
	ttl    time.Duration
	period string
}

// windowCheck is one of the principal's windows: the store check and how the
// refusal names it.
type windowCheck struct {
	store.WindowCheck
	what string // "requests" or "tokens", for the headers and the refusal
	per  string // "minute" or "hour", for the refusal
}

// describe says what c allows, for the refusal message (formatted only then).
func (c *windowCheck) describe() string {
	s := fmt.Sprintf("%d %s per %s", c.Limit, c.what, c.per)
	if c.what == "tokens" {
		s += fmt.Sprintf(" (this request is estimated at %d)", c.Cost)
	}
	return s
}

// Admit checks p's limits for a call estimated at est and counts it: the
// rpm, hourly (virtual keys, RATE_LIMIT_REQUESTS_PER_HOUR) and tpm windows
// and the spend reservation, in one atomic store call, all or nothing. A
// refusal is a 429 (a window, with Retry-After and x-ratelimit-* headers)
// or a 402 (the spend cap). The admission must be settled when the call
// ends. When nothing limits p it makes no store call and returns nil.
//
// A store failure fails closed (503) when a spend cap applies and open
// otherwise (logged); an estimate is never a reason to fail open: a
// negative or overflowing one is clamped before it reaches the store.
func (l *Limiter) Admit(ctx context.Context, p *identity.Principal, lim Limits, est Estimate) (*Admission, error) {
	if lim.Owner != nil && p != nil {
		p = lim.Owner
	}
	if p == nil || (!lim.Any() && !l.hourlyApplies(p)) {
		return nil, nil
	}
	est.Tokens = max(est.Tokens, 0)
	var checks []windowCheck
	if lim.RPM > 0 {
		checks = append(checks, windowCheck{store.WindowCheck{Key: windowKey(p, "rpm"), Window: time.Minute, Limit: lim.RPM, Cost: 1},
			"requests", "minute"})
	}
	if l.hourlyApplies(p) {
		checks = append(checks, windowCheck{store.WindowCheck{Key: windowKey(p, "rph"), Window: time.Hour, Limit: l.hourly, Cost: 1},
			"requests", "hour"})
	}
	tpmAt := -1
	if lim.TPM > 0 {
		tpmAt = len(checks)
		checks = append(checks, windowCheck{store.WindowCheck{Key: windowKey(p, "tpm"), Window: time.Minute, Limit: lim.TPM, Cost: est.Tokens},
			"tokens", "minute"})
	}
	req := store.AdmitRequest{Windows: make([]store.WindowCheck, len(checks))}
	for i, c := range checks {
		req.Windows[i] = c.WindowCheck
	}
	a := &Admission{l: l, p: p, lim: lim, header: make(http.Header, 6)}
	if lim.MaxBudgetUSD > 0 {
		period := Period(lim.BudgetPeriod)
		start := PeriodStart(period, l.now())
		a.res = &reservation{key: spendKey(p.Kind, p.ID, period, start), amount: micros(est.CostUSD),
			cap: capMicros(lim.MaxBudgetUSD), ttl: periodTTL(period, start), period: period}
		a.EstimateUSD = usd(a.res.amount)
		req.Reserve = &store.Reservation{Key: a.res.key, Amount: a.res.amount, Cap: a.res.cap, TTL: a.res.ttl}
	}
	r, err := l.kv.Admit(ctx, req)
	if err != nil {
		if errors.Is(err, context.Canceled) && ctx.Err() != nil {
			return nil, apierr.Wrap(apierr.ClientClosed, "client_closed", "the client closed the request", err)
		}
		if a.res != nil { // spend caps fail closed
			return nil, apierr.Wrap(apierr.Unavailable, "limits_store_unavailable", "limits store unavailable", err)
		}
		l.failOpen("rate", err) // rate limits fail open
		return nil, nil
	}
	a.setHeaders(checks, r.Windows)
	if i := r.Refused(); i >= 0 {
		return nil, refuse(a.header, checks[i].what, &r.Windows[i], checks[i].describe())
	}
	if a.res != nil {
		if !r.Reserved {
			return nil, apierr.Newf(apierr.BudgetExceeded, "budget_exceeded",
				"budget exceeded: this key's %s spend cap of %s is reached (spent %s; the period resets at %s)",
				a.res.period, dollars(lim.MaxBudgetUSD), dollars(usd(r.Total)), PeriodEnd(a.res.period, l.now()).Format(time.RFC3339))
		}
		l.crossed(ctx, p, lim, a.res, r.Total-a.res.amount, r.Total)
	}
	if tpmAt >= 0 {
		a.tpm = &tpmEntry{key: req.Windows[tpmAt].Key, entry: r.Windows[tpmAt].Entry, estimate: est.Tokens}
	}
	return a, nil
}

// hourlyApplies reports whether the hourly cap applies to p (virtual keys).
func (l *Limiter) hourlyApplies(p *identity.Principal) bool {
	return l.hourly > 0 && p.Kind == identity.VirtualKey
}

// setHeaders records the x-ratelimit-* headers: the tighter request window,
// and the token window.
func (a *Admission) setHeaders(checks []windowCheck, res []store.WindowResult) {
	var reqs *store.WindowResult
	for i, c := range checks {
		w := &res[i]
		switch {
		case c.what == "tokens":
			setHeaders(a.header, "tokens", w)
		case reqs == nil || (reqs.Allowed && (!w.Allowed || remaining(w) < remaining(reqs))):
			reqs = w // the first refused, else the one with less left
		}
	}
	if reqs != nil {
		setHeaders(a.header, "requests", reqs)
	}
}

// Header copies the admission's x-ratelimit-* headers to h.
func (a *Admission) Header(h http.Header) {
	if a == nil {
		return
	}
	for k, v := range a.header {
		h[k] = v
	}
}

// Settle corrects, off the caller's path, what the admission counted to
// what the call used: the tpm entry is rewritten to the actual tokens
// (keeping its admission time, so the window stays exact) and the
// reservation adjusted by the actual cost minus the estimate, in one store
// call. Without a spend cap the cost goes to the spend meter instead (when
// spend is metered). It must be called exactly once, when the call has
// ended (for a stream, when it ended or was closed). Limiter.Settled waits
// for it.
func (a *Admission) Settle(ctx context.Context, used Used) {
	if !a.settleLocally(used) {
		return
	}
	l := a.l
	l.settling.Add(1)
	go func() {
		defer l.settling.Done()
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
		defer cancel()
		a.settle(ctx, used)
	}()
}

// SettleNow is Settle on the caller's path: it returns when the store has
// the correction (or settleTimeout passed), so the caller's next call is
// admitted against what this one really cost, not its reservation. For
// calls whose answer may wait for one store round trip (tool calls).
func (a *Admission) SettleNow(ctx context.Context, used Used) {
	if !a.settleLocally(used) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
	defer cancel()
	a.settle(ctx, used)
}

// settleLocally does the part of settling that needs no store: the cost
// of an admission without a reservation goes to the spend meter (when
// spend is metered). It reports whether the store needs a correction too.
func (a *Admission) settleLocally(used Used) (needsStore bool) {
	if a == nil {
		return false
	}
	if a.res == nil {
		a.l.meterSpent(a.p, a.lim, used.CostUSD)
	}
	return a.tpm != nil || a.res != nil
}

func (a *Admission) settle(ctx context.Context, used Used) {
	var req store.SettleRequest
	if a.tpm != nil {
		if actual := max(used.Tokens, 0); actual != a.tpm.estimate {
			req.Windows = []store.Amendment{{Key: a.tpm.key, Window: time.Minute, Entry: a.tpm.entry, Cost: actual}}
		}
	}
	var delta int64
	if a.res != nil {
		if delta = saturatingSub(micros(used.CostUSD), a.res.amount); delta != 0 {
			req.Counter = &store.Adjustment{Key: a.res.key, Delta: delta, TTL: a.res.ttl}
		}
	}
	if req.Windows == nil && req.Counter == nil {
		return
	}
	l, p := a.l, a.p
	r, err := l.kv.Settle(ctx, req)
	if err != nil {
		l.log.Error("limits: could not settle a request's tokens and spend", "principal", p.Kind.String()+":"+p.ID,
			"tokens", used.Tokens, "delta_usd", usd(delta), "err", err)
		return
	}
	if req.Counter != nil {
		l.crossed(ctx, p, a.lim, a.res, r.Total-delta, r.Total)
		if p.Kind == identity.VirtualKey {
			l.spenders.Store(p.ID, a.res.period)
		}
	}
}

// crossed raises a budget event for each level of the cap (BudgetLevels)
// the counter went from below (before) to at or above (after), once per
// counter and level across replicas.
func (l *Limiter) crossed(ctx context.Context, p *identity.Principal, lim Limits, res *reservation, before, after int64) {
	if l.onBudget == nil {
		return
	}
	for _, level := range BudgetLevels {
		mark := res.cap * int64(level) / 100
		if before >= mark || after < mark {
			continue
		}
		first, _, err := l.kv.Reserve(ctx, alertKey(res.key, level), 1, 1, res.ttl)
		if err != nil {
			l.log.Error("limits: could not record a budget event", "principal", p.Kind.String()+":"+p.ID, "err", err)
			return
		}
		if first {
			l.onBudget(BudgetEvent{KeyID: p.ID, Period: res.period, CapUSD: lim.MaxBudgetUSD, SpentUSD: usd(after), Level: level})
		}
	}
}

// saturatingSub is a-b, clamped to the int64 range.
func saturatingSub(a, b int64) int64 {
	d := a - b
	if (b > 0 && d > a) || (b < 0 && d < a) {
		if b > 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return d
}

// dollars formats v in US dollars to the micro-dollar, without trailing zeros.
func dollars(v float64) string {
	if v > 0 && v < 1e-6 {
		return "$" + strconv.FormatFloat(v, 'g', -1, 64)
	}
	return "$" + strconv.FormatFloat(math.Round(v*1e6)/1e6, 'f', -1, 64)
}

// remaining is what is left in a window, never negative.
func remaining(r *store.WindowResult) int64 { return max(r.Limit-r.Used, 0) }

// setHeaders sets the x-ratelimit-*-<what> headers from r.
func setHeaders(h http.Header, what string, r *store.WindowResult) {
	limit, rem, reset := HeaderLimitRequests, HeaderRemainingRequests, HeaderResetRequests
	if what == "tokens" {
		limit, rem, reset = HeaderLimitTokens, HeaderRemainingTokens, HeaderResetTokens
	}
	h.Set(limit, strconv.FormatInt(r.Limit, 10))
	h.Set(rem, strconv.FormatInt(remaining(r), 10))
	h.Set(reset, resetString(r.ResetIn))
}

// resetString formats d as OpenAI does ("6s", "1m0s", "20ms").
func resetString(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	if d < time.Second {
		return d.Round(time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// refuse returns the 429 for a refused window, with the x-ratelimit headers.
func refuse(h http.Header, what string, r *store.WindowResult, limit string) *apierr.Error {
	setHeaders(h, what, r)
	eh := make(http.Header, 6)
	for _, k := range rateHeaders {
		if v := h.Values(k); len(v) > 0 {
			eh[k] = append([]string(nil), v...)
		}
	}
	return &apierr.Error{
		Kind:       apierr.RateLimited,
		Code:       "rate_limit_exceeded",
		Message:    fmt.Sprintf("rate limit exceeded: this key allows %s; retry in %s", limit, resetString(r.ResetIn)),
		RetryAfter: max(r.ResetIn, time.Second),
		Header:     eh,
	}
}
