package limit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/pricing"
	"github.com/svc-gateway/svc/internal/store"
)

// Response headers, as OpenAI names them.
const (
	HeaderLimitRequests     = "X-Ratelimit-Limit-Requests"
	HeaderRemainingRequests = "X-Ratelimit-Remaining-Requests"
	HeaderResetRequests     = "X-Ratelimit-Reset-Requests"
	HeaderLimitTokens       = "X-Ratelimit-Limit-Tokens"
	HeaderRemainingTokens   = "X-Ratelimit-Remaining-Tokens"
	HeaderResetTokens       = "X-Ratelimit-Reset-Tokens"
)

// rateHeaders are the headers the stage sets.
var rateHeaders = [...]string{
	HeaderLimitRequests, HeaderRemainingRequests, HeaderResetRequests,
	HeaderLimitTokens, HeaderRemainingTokens, HeaderResetTokens,
}

// Stage returns the limits middleware. It runs after auth, decode and route:
// x.Principal, x.Provider, x.UpstreamModel and x.Chat or x.Body are set. A
// principal without limits passes through without any store call.
func (l *Limiter) Stage() pipeline.Middleware {
	return func(next pipeline.Handler) pipeline.Handler {
		return func(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
			p := x.Principal
			if p == nil || !l.limited(p) {
				return next(ctx, x)
			}
			return l.serve(ctx, x, p, next)
		}
	}
}

// limited reports whether any limit applies to p.
func (l *Limiter) limited(p *identity.Principal) bool {
	return p.RPMLimit > 0 || p.TPMLimit > 0 || p.MaxBudgetUSD > 0 ||
		(l.hourly > 0 && p.Kind == identity.VirtualKey)
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

func (l *Limiter) serve(ctx context.Context, x *pipeline.Exchange, p *identity.Principal, next pipeline.Handler) (*pipeline.Response, error) {
	if x.Header == nil {
		x.Header = make(http.Header)
	}
	est := estimate(x)

	// One atomic store call before the provider call: rpm, the hourly cap
	// and tpm (the estimate; settled to the actual usage at the end), and
	// the spend reservation. All or nothing: a refused request counts in no
	// window and reserves nothing.
	var checks []windowCheck
	if p.RPMLimit > 0 {
		checks = append(checks, windowCheck{store.WindowCheck{Key: windowKey(p, "rpm"), Window: time.Minute, Limit: int64(p.RPMLimit), Cost: 1},
			"requests", "minute"})
	}
	if l.hourly > 0 && p.Kind == identity.VirtualKey {
		checks = append(checks, windowCheck{store.WindowCheck{Key: windowKey(p, "rph"), Window: time.Hour, Limit: l.hourly, Cost: 1},
			"requests", "hour"})
	}
	tpmAt := -1
	if p.TPMLimit > 0 {
		tpmAt = len(checks)
		checks = append(checks, windowCheck{store.WindowCheck{Key: windowKey(p, "tpm"), Window: time.Minute, Limit: int64(p.TPMLimit), Cost: est.tokens()},
			"tokens", "minute"})
	}
	req := store.AdmitRequest{Windows: make([]store.WindowCheck, len(checks))}
	for i, c := range checks {
		req.Windows[i] = c.WindowCheck
	}
	var res *reservation
	if p.MaxBudgetUSD > 0 {
		res = l.reservation(x, p, est)
		req.Reserve = &store.Reservation{Key: res.key, Amount: res.amount, Cap: res.cap, TTL: res.ttl}
	}
	r, err := l.kv.Admit(ctx, req)
	if err != nil {
		if res != nil {
			// Spend caps fail closed.
			if errors.Is(err, context.Canceled) && ctx.Err() != nil {
				return nil, apierr.Wrap(apierr.ClientClosed, "client_closed", "the client closed the request", err)
			}
			return nil, apierr.Wrap(apierr.Unavailable, "limits_store_unavailable", "limits store unavailable", err)
		}
		l.failOpen("rate", err) // rate limits fail open
		return next(ctx, x)
	}

	// Headers: the tighter request window, and the token window.
	var reqs *store.WindowResult
	for i, c := range checks {
		w := &r.Windows[i]
		switch {
		case c.what == "tokens":
			setHeaders(x.Header, "tokens", w)
		case reqs == nil || (reqs.Allowed && (!w.Allowed || remaining(w) < remaining(reqs))):
			reqs = w // the first refused, else the one with less left
		}
	}
	if reqs != nil {
		setHeaders(x.Header, "requests", reqs)
	}
	if i := r.Refused(); i >= 0 {
		return nil, refuse(x.Header, checks[i].what, &r.Windows[i], checks[i].describe())
	}
	if res != nil {
		if !r.Reserved {
			now := l.now()
			return nil, apierr.Newf(apierr.BudgetExceeded, "budget_exceeded",
				"budget exceeded: this key's %s spend cap of %s is reached (spent %s; the period resets at %s)",
				res.period, dollars(p.MaxBudgetUSD), dollars(usd(r.Total)), auth.PeriodEnd(res.period, now).Format(time.RFC3339))
		}
		l.crossed(ctx, p, res, r.Total-res.amount, r.Total)
	}
	var tpm *tokens
	if tpmAt >= 0 {
		tpm = &tokens{key: req.Windows[tpmAt].Key, entry: r.Windows[tpmAt].Entry, estimate: est.tokens()}
	}
	if tpm == nil && res == nil {
		return next(ctx, x)
	}
	return l.call(ctx, x, p, next, tpm, res)
}

// tokens is the tpm window's entry for a request, to settle when it ends.
type tokens struct {
	key      string
	entry    string // store.WindowResult.Entry; "" when the estimate was 0
	estimate int64
}

// call runs next and settles the tpm entry and the spend reservation when the
// call ends: at once, at the end of a stream or raw body, or when next
// panics (a deferred settlement, so that the proxy's recovery into a 500
// leaves no reservation or estimate behind; the panic goes on unchanged).
func (l *Limiter) call(ctx context.Context, x *pipeline.Exchange, p *identity.Principal, next pipeline.Handler,
	tpm *tokens, res *reservation) (*pipeline.Response, error) {
	settle := func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
		defer cancel()
		l.settle(ctx, p, x, tpm, res)
	}
	// Settlements run off the response path: they only correct a counter
	// the reservation already bounded (Settled waits for them).
	settleAsync := func() {
		l.settling.Add(1)
		go func() {
			defer l.settling.Done()
			settle(ctx)
		}()
	}
	returned := false
	defer func() {
		if !returned {
			settleAsync() // next panicked: settle with what was used (usually nothing)
		}
	}()
	resp, err := next(ctx, x)
	returned = true
	switch {
	case err != nil || resp == nil:
		settleAsync()
	case resp.Stream != nil:
		resp.Stream = pipeline.Observe(resp.Stream, nil, func(error) { settleAsync() })
	case resp.Raw != nil:
		resp.Raw = pipeline.ObserveReader(resp.Raw, func(error) { settleAsync() })
	default:
		settleAsync()
	}
	return resp, err
}

// reservation prices the reservation of x's estimated cost against p's
// spend cap in the current period.
func (l *Limiter) reservation(x *pipeline.Exchange, p *identity.Principal, est estimated) *reservation {
	period := Period(p.BudgetPeriod)
	start := auth.PeriodStart(period, l.now())
	return &reservation{
		key:    spendKey(p.Kind, p.ID, period, start),
		amount: micros(l.cost(x, est)),
		cap:    micros(p.MaxBudgetUSD),
		ttl:    periodTTL(period, start),
		period: period,
	}
}

// settle corrects, in one store call, the request's tpm entry to the actual
// tokens (both ways: the entry keeps its admission time, so the window stays
// exact) and its spend reservation by the actual cost minus the estimate;
// both always apply.
func (l *Limiter) settle(ctx context.Context, p *identity.Principal, x *pipeline.Exchange, tpm *tokens, res *reservation) {
	var req store.SettleRequest
	if tpm != nil {
		if actual := max(x.Usage.Total(), 0); actual != tpm.estimate {
			req.Windows = []store.Amendment{{Key: tpm.key, Window: time.Minute, Entry: tpm.entry, Cost: actual}}
		}
	}
	var delta int64
	if res != nil {
		if delta = micros(x.Cost) - res.amount; delta != 0 {
			req.Counter = &store.Adjustment{Key: res.key, Delta: delta, TTL: res.ttl}
		}
	}
	if req.Windows == nil && req.Counter == nil {
		return
	}
	r, err := l.kv.Settle(ctx, req)
	if err != nil {
		l.log.Error("limits: could not settle a request's tokens and spend", "principal", p.Kind.String()+":"+p.ID,
			"tokens", x.Usage.Total(), "delta_usd", usd(delta), "err", err)
		return
	}
	if req.Counter != nil {
		l.crossed(ctx, p, res, r.Total-delta, r.Total)
		if l.onSpend != nil {
			l.onSpend(p.ID, usd(r.Total))
		}
	}
}

// crossed raises the budget event when the counter went from below the cap
// (before) to at or above it (after), once per counter across replicas.
func (l *Limiter) crossed(ctx context.Context, p *identity.Principal, res *reservation, before, after int64) {
	if l.onBudget == nil || before >= res.cap || after < res.cap {
		return
	}
	first, _, err := l.kv.Reserve(ctx, alertKey(res.key), 1, 1, res.ttl)
	if err != nil {
		l.log.Error("limits: could not record a budget event", "principal", p.Kind.String()+":"+p.ID, "err", err)
		return
	}
	if first {
		l.onBudget(BudgetEvent{KeyID: p.ID, Period: res.period, CapUSD: p.MaxBudgetUSD, SpentUSD: usd(after)})
	}
}

// DefaultCompletionReserve is the completion a spend reservation assumes when
// the request sets no maximum: the reservation must bound the actual cost for
// concurrent requests not to overshoot a cap by more than one request's cost
// (the settlement corrects it to the actual cost). The tpm window, which never
// refunds, keeps the plain estimate.
const DefaultCompletionReserve = 4096

// cost is the price of the estimated usage of x; 0 when the model has no price.
func (l *Limiter) cost(x *pipeline.Exchange, est estimated) float64 {
	if est.completion == 0 {
		est.completion = DefaultCompletionReserve
	}
	model := x.UpstreamModel
	if model == "" {
		model = x.Model
	}
	price, ok := l.prices.Lookup(x.Provider, model)
	if !ok {
		return 0
	}
	return price.Cost(pricing.Usage{PromptTokens: est.prompt, CompletionTokens: est.completion})
}

// dollars formats v in US dollars to the micro-dollar, without trailing zeros.
func dollars(v float64) string {
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

// refuse returns the 429 for a refused window, with the x-ratelimit headers
// (also recorded on h, the exchange's headers).
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

// estimated is a request's token estimate before the call.
type estimated struct {
	prompt, completion int64
}

func (e estimated) tokens() int64 { return e.prompt + e.completion }

// estimate estimates x's tokens: one prompt token per four bytes of the chat
// messages' text (of the whole body for other endpoints with a JSON body; 0
// for other bodies, such as multipart audio), plus the requested maximum
// completion tokens.
func estimate(x *pipeline.Exchange) estimated {
	var e estimated
	if c := x.Chat; c != nil {
		n := 0
		for i := range c.Messages {
			m := &c.Messages[i]
			if m.Content.IsParts {
				for _, part := range m.Content.Parts {
					n += len(part.Text)
				}
			} else {
				n += len(m.Content.Text)
			}
			for _, tc := range m.ToolCalls {
				n += len(tc.Function.Arguments)
			}
		}
		e.prompt = int64(n+3) / 4
		switch {
		case c.MaxCompletionTokens != nil:
			e.completion = int64(max(*c.MaxCompletionTokens, 0))
		case c.MaxTokens != nil:
			e.completion = int64(max(*c.MaxTokens, 0))
		}
		return e
	}
	b := bytes.TrimLeft(x.Body, " \t\r\n")
	if len(b) == 0 || b[0] != '{' {
		return e // not JSON (a multipart audio upload): no text to count
	}
	e.prompt = int64(len(b)+3) / 4
	e.completion = maxTokens(b)
	return e
}

// maxTokens reads max_completion_tokens, else max_tokens, from a JSON object
// (completions, native messages); 0 when absent or invalid.
func maxTokens(b []byte) int64 {
	var v struct {
		MaxTokens           *int64 `json:"max_tokens"`
		MaxCompletionTokens *int64 `json:"max_completion_tokens"`
	}
	if json.Unmarshal(b, &v) != nil {
		return 0
	}
	switch {
	case v.MaxCompletionTokens != nil:
		return max(*v.MaxCompletionTokens, 0)
	case v.MaxTokens != nil:
		return max(*v.MaxTokens, 0)
	}
	return 0
}
