package alerts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// delivery is one alert's payload for one platform.
type delivery struct {
	p    *pending
	i    int // the platform's index in p's Delivery
	body []byte
}

// Reasons of svc_alerts_dropped_total.
const (
	reasonQueueFull = "queue_full"        // the alert queue or a platform's queue was full
	reasonExhausted = "retries_exhausted" // every attempt failed
	reasonRejected  = "rejected"          // the receiver refused the payload (a 4xx other than 408 and 429)
)

// maxDrain bounds how much of a receiver's answer is read (so the
// connection can be reused).
const maxDrain = 64 << 10

func (n *Notifier) deliverLoop(ctx context.Context, t *target) {
	for {
		select {
		case <-ctx.Done():
			return
		case d := <-t.jobs:
			n.deliver(ctx, t, d)
		}
	}
}

// deliver posts d to t, retrying with backoff, and records the outcome.
func (n *Notifier) deliver(ctx context.Context, t *target, d *delivery) {
	typ := string(d.p.sent.Type) // the alert part of pending never changes after dispatch
	var err error
	for attempt := 1; attempt <= n.attempts; attempt++ {
		if attempt > 1 && !sleep(ctx, n.wait(attempt, err)) {
			n.finish(ctx, d.p, d.i, Delivery{Status: StatusDropped, Attempts: attempt - 1, Error: "svc stopped before the delivery ended"})
			return
		}
		var retry bool
		retry, err = n.post(ctx, t.url, d.body)
		if err == nil {
			n.m.sent.WithLabelValues(typ, t.name).Inc()
			n.finish(ctx, d.p, d.i, Delivery{Status: StatusSent, Attempts: attempt})
			return
		}
		n.m.failed.WithLabelValues(typ, t.name).Inc()
		if ctx.Err() != nil {
			n.finish(ctx, d.p, d.i, Delivery{Status: StatusDropped, Attempts: attempt, Error: "svc stopped before the delivery ended"})
			return
		}
		if !retry {
			n.m.dropped.WithLabelValues(reasonRejected).Inc()
			n.log.Warn("alerts: the webhook refused the alert", "platform", t.name, "id", d.p.sent.ID, "type", typ, "err", err)
			n.finish(ctx, d.p, d.i, Delivery{Status: StatusFailed, Attempts: attempt, Error: err.Error()})
			return
		}
	}
	n.m.dropped.WithLabelValues(reasonExhausted).Inc()
	n.log.Warn("alerts: the webhook delivery failed; alert dropped", "platform", t.name, "id", d.p.sent.ID,
		"type", typ, "attempts", n.attempts, "err", err)
	n.finish(ctx, d.p, d.i, Delivery{Status: StatusFailed, Attempts: n.attempts, Error: err.Error()})
}

// wait is the pause before attempt (≥ 2): Backoff doubled per attempt
// after the second, or the receiver's Retry-After when longer, at most
// maxBackoff.
func (n *Notifier) wait(attempt int, last error) time.Duration {
	d := n.backoff << (attempt - 2)
	var se *statusError
	if errors.As(last, &se) && se.retryAfter > d {
		d = se.retryAfter
	}
	return min(d, maxBackoff)
}

// sleep waits d or until ctx ends; it reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// statusError is a receiver's non-2xx answer.
type statusError struct {
	code       int
	retryAfter time.Duration
}

func (e *statusError) Error() string { return "the webhook answered HTTP " + strconv.Itoa(e.code) }

// post sends body to rawURL within n.timeout. It reports whether a failure
// is worth retrying: a transport error, a timeout, 408, 429 or a 5xx.
// Errors never carry the URL (a webhook URL is a credential).
func (n *Notifier) post(ctx context.Context, rawURL string, body []byte) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, n.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return false, errors.New("the webhook URL is not valid")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "svc-alerts")
	resp, err := n.client.Do(req)
	if err != nil {
		return true, transportError(ctx, err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	code := resp.StatusCode
	switch {
	case code >= 200 && code < 300:
		return false, nil
	case code == http.StatusRequestTimeout || code == http.StatusTooManyRequests || code >= 500:
		return true, &statusError{code: code, retryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	default:
		return false, &statusError{code: code}
	}
}

// transportError describes a failed round trip without its URL.
func transportError(ctx context.Context, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return errors.New("the webhook did not answer in time")
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("the webhook could not be reached: %v", err)
}

// retryAfter reads a Retry-After header given in seconds (0 otherwise).
func retryAfter(v string) time.Duration {
	secs, err := strconv.Atoi(v)
	if err != nil || secs <= 0 {
		return 0
	}
	return time.Duration(min(secs, int(maxBackoff/time.Second))) * time.Second
}

// metrics are the svc_alerts_* collectors.
type metrics struct {
	sent, failed *prometheus.CounterVec // type, platform
	dropped      *prometheus.CounterVec // reason
	deduplicated prometheus.Counter
	queueFull    prometheus.Counter // dropped{reason="queue_full"}, resolved once for Send
}

func newMetrics() *metrics {
	m := &metrics{
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_alerts_sent_total", Help: "Alerts delivered, by alert type and platform.",
		}, []string{"type", "platform"}),
		failed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_alerts_failed_total", Help: "Failed alert delivery attempts (each try), by alert type and platform.",
		}, []string{"type", "platform"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_alerts_dropped_total", Help: "Alerts or deliveries given up, by reason: queue_full, retries_exhausted, rejected (a 4xx answer).",
		}, []string{"reason"}),
		deduplicated: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "svc_alerts_deduplicated_total", Help: "Alerts not sent because their subject alerted within SVC_ALERT_DEDUP somewhere in the fleet.",
		}),
	}
	m.queueFull = m.dropped.WithLabelValues(reasonQueueFull)
	m.dropped.WithLabelValues(reasonExhausted)
	m.dropped.WithLabelValues(reasonRejected)
	return m
}

func (m *metrics) register(r prometheus.Registerer) error {
	for _, c := range []prometheus.Collector{m.sent, m.failed, m.dropped, m.deduplicated} {
		if err := r.Register(c); err != nil {
			return fmt.Errorf("alerts: register metrics: %w", err)
		}
	}
	return nil
}
