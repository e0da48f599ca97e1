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

func (l *Limiter) serve(ctx context.Context, x *pipeline.Exchange, p *identity.Principal, next pipeline.Handler) (*pipeline.Response, error) {
	if x.Header == nil {
		x.Header = make(http.Header)
	}
	who := p.Kind.String() + ":" + p.ID
	est := estimate(x)

	// Requests: rpm, then the hourly cap. The headers report the tighter.
	var reqs *store.WindowResult
	if p.RPMLimit > 0 {
		r, err := l.window(ctx, "limit:rpm:"+who, time.Minute, int64(p.RPMLimit), 1)
		if r != nil {
			reqs = r
			if !r.Allowed {
				return nil, refuse(x.Header, "requests", r, fmt.Sprintf("%d requests per minute", p.RPMLimit))
			}
		} else {
			l.failOpen("rpm", err)
		}
	}
	if l.hourly > 0 && p.Kind == identity.VirtualKey {
		r, err := l.window(ctx, "limit:rph:"+who, time.Hour, l.hourly, 1)
		if r != nil {
			if reqs == nil || remaining(r) < remaining(reqs) || !r.Allowed {
				reqs = r
			}
			if !r.Allowed {
				return nil, refuse(x.Header, "requests", r, fmt.Sprintf("%d requests per hour", l.hourly))
			}
		} else {
			l.failOpen("hourly", err)
		}
	}
	if reqs != nil {
		setHeaders(x.Header, "requests", reqs)
	}

	// Tokens: the estimate now, the excess of the actual usage at the end.
	tpm := p.TPMLimit > 0
	if tpm {
		r, err := l.window(ctx, "limit:tpm:"+who, time.Minute, int64(p.TPMLimit), est.tokens())
		if r != nil {
			if !r.Allowed {
				return nil, refuse(x.Header, "tokens", r, fmt.Sprintf("%d tokens per minute (this request is estimated at %d)", p.TPMLimit, est.tokens()))
			}
			setHeaders(x.Header, "tokens", r)
		} else {
			l.failOpen("tpm", err)
			tpm = false
		}
	}

	// Spend: reserve the estimated cost against the cap.
	var res *reservation
	if p.MaxBudgetUSD > 0 {
		var err error
		if res, err = l.reserve(ctx, x, p, est); err != nil {
			return nil, err
		}
	}
	if !tpm && res == nil {
		return next(ctx, x)
	}

	settle := func(ctx context.Context) {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
		defer cancel()
		if tpm {
			if extra := x.Usage.Total() - est.tokens(); extra > 0 {
				if _, err := l.kv.Window(ctx, "limit:tpm:"+who, time.Minute, math.MaxInt64, extra); err != nil {
					l.log.Error("limits: could not count a request's tokens beyond its estimate", "principal", who, "tokens", extra, "err", err)
				}
			}
		}
		if res != nil {
			l.settle(ctx, p, res, micros(x.Cost)-res.amount)
		}
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
	resp, err := next(ctx, x)
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

// window runs one Window call; on a store failure it returns nil and the error.
func (l *Limiter) window(ctx context.Context, key string, win time.Duration, limit, cost int64) (*store.WindowResult, error) {
	r, err := l.kv.Window(ctx, key, win, limit, cost)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// reserve reserves the estimated cost of x against p's spend cap.
func (l *Limiter) reserve(ctx context.Context, x *pipeline.Exchange, p *identity.Principal, est estimated) (*reservation, error) {
	period := Period(p.BudgetPeriod)
	now := l.now()
	start := auth.PeriodStart(period, now)
	res := &reservation{
		key:    spendKey(p.Kind, p.ID, period, start),
		amount: micros(l.cost(x, est)),
		cap:    micros(p.MaxBudgetUSD),
		ttl:    periodTTL(period, start),
		period: period,
	}
	ok, total, err := l.kv.Reserve(ctx, res.key, res.amount, res.cap, res.ttl)
	if err != nil && errors.Is(err, context.Canceled) && ctx.Err() != nil {
		return nil, apierr.Wrap(apierr.ClientClosed, "client_closed", "the client closed the request", err)
	}
	if err != nil {
		return nil, apierr.Wrap(apierr.Unavailable, "limits_store_unavailable", "limits store unavailable", err)
	}
	if ok && res.amount == 0 && total >= res.cap {
		ok = false // nothing to reserve, but the cap is already reached
	}
	if !ok {
		return nil, apierr.Newf(apierr.BudgetExceeded, "budget_exceeded",
			"budget exceeded: this key's %s spend cap of %s is reached (spent %s; the period resets at %s)",
			period, dollars(p.MaxBudgetUSD), dollars(usd(total)), auth.PeriodEnd(period, now).Format(time.RFC3339))
	}
	l.crossed(ctx, p, res, total-res.amount, total)
	return res, nil
}

// settle applies delta micro-USD to a reservation's counter; it always applies.
func (l *Limiter) settle(ctx context.Context, p *identity.Principal, res *reservation, delta int64) {
	if delta == 0 {
		return
	}
	_, total, err := l.kv.Reserve(ctx, res.key, delta, 0, res.ttl)
	if err != nil {
		l.log.Error("limits: could not settle a spend reservation", "principal", p.Kind.String()+":"+p.ID, "delta_usd", usd(delta), "err", err)
		return
	}
	l.crossed(ctx, p, res, total-delta, total)
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
