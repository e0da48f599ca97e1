// Package metrics owns svc's Prometheus collectors (svc_* names of the spec)
// and the /metrics handler. Each process builds one Metrics on its own
// registry, so tests can run several side by side.
//
// wire, proxy, audit and mgmt import metrics; it imports only client_golang.
package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the collectors.
type Metrics struct {
	Registry *prometheus.Registry

	Requests       *prometheus.CounterVec   // provider, model, status
	Latency        *prometheus.HistogramVec // provider
	Tokens         *prometheus.CounterVec   // provider, direction
	Cost           *prometheus.CounterVec   // provider
	ProviderErrors *prometheus.CounterVec   // provider, status_code
	CacheHits      *prometheus.CounterVec   // tier
	CacheMisses    prometheus.Counter
	MCPCalls       *prometheus.CounterVec // server, tool
	VKeySpend      *keySpend              // key: read from the limits' counters at each scrape
	AuditDirect    prometheus.Counter     // entries sent to the hot tier directly: the spool refused them
	AuditDropped   prometheus.Counter     // entries that could not be written at all
	AuditQueue     prometheus.GaugeFunc   // entries in this process's spool not yet forwarded
	InFlight       prometheus.Gauge

	AuditForwardFailures prometheus.Counter // failed moves of spool entries to the hot tier (retried)
	// The bridge's figures.
	AuditWritten     prometheus.Counter // entries written to the long-term store for the first time
	AuditRedelivered prometheus.Counter // entries delivered again and found already written
	AuditUnwritable  prometheus.Counter // entries the long-term store refused for their data, or undecodable
	BridgeFailures   prometheus.Counter // batch writes that failed (retried)
	BridgeBacklog    prometheus.Gauge   // hot-tier entries not yet written
	BridgeLag        prometheus.Gauge   // age of the oldest entry not yet written, seconds
}

// New registers every collector on a fresh registry, with the Go and process
// collectors. queueLen may be nil.
func New(queueLen func() float64) *Metrics {
	r := prometheus.NewRegistry()
	if queueLen == nil {
		queueLen = func() float64 { return 0 }
	}
	m := &Metrics{
		Registry: r,
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_requests_total", Help: "Proxied requests by provider, model and answered HTTP status.",
		}, []string{"provider", "model", "status"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "svc_request_latency_seconds", Help: "Total latency of proxied requests, by provider.",
			Buckets: []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}, []string{"provider"}),
		Tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_tokens_total", Help: "Tokens by provider and direction (prompt, completion).",
		}, []string{"provider", "direction"}),
		Cost: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_cost_usd_total", Help: "Estimated cost in USD by provider.",
		}, []string{"provider"}),
		ProviderErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_provider_errors_total", Help: "Errors answered by providers, by status code (0 = no answer).",
		}, []string{"provider", "status_code"}),
		CacheHits: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_cache_hits_total", Help: "Semantic cache hits by tier (L1, L2, L3).",
		}, []string{"tier"}),
		CacheMisses: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "svc_cache_misses_total", Help: "Semantic cache misses.",
		}),
		MCPCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_mcp_calls_total", Help: "Tool gateway calls by server and tool.",
		}, []string{"server", "tool"}),
		VKeySpend: &keySpend{desc: prometheus.NewDesc("svc_vkey_spend_usd",
			"Spend of a virtual key in its current period, USD (fleet-wide; reservations of calls in flight included), by masked key and key id.",
			[]string{"key", "key_id"}, nil), masks: map[string]string{}},
		AuditDirect: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "svc_audit_direct_writes_total", Help: "Audit entries written on the request path because the queue was full.",
		}),
		AuditDropped: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "svc_audit_write_failures_total", Help: "Audit batches that failed to persist and were retried.",
		}),
		AuditQueue: prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "svc_audit_queue_length", Help: "Audit entries in this process's spool, not yet in the hot tier.",
		}, queueLen),
		AuditForwardFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "svc_audit_forward_failures_total", Help: "Failed moves of spooled audit entries to the hot tier (retried).",
		}),
		AuditWritten: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "svc_audit_entries_written_total", Help: "Audit entries the bridge wrote to the long-term store.",
		}),
		AuditRedelivered: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "svc_audit_entries_redelivered_total", Help: "Audit entries delivered to the bridge again and already written (skipped).",
		}),
		AuditUnwritable: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "svc_audit_entries_unwritable_total", Help: "Audit entries the long-term store refused for their data, or that could not be decoded.",
		}),
		BridgeFailures: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "svc_bridge_write_failures_total", Help: "Bridge batch writes that failed and were retried.",
		}),
		BridgeBacklog: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "svc_bridge_backlog", Help: "Hot-tier audit entries not yet written to the long-term store.",
		}),
		BridgeLag: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "svc_bridge_lag_seconds", Help: "Age of the oldest hot-tier audit entry not yet written to the long-term store.",
		}),
		InFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "svc_requests_in_flight", Help: "Proxied requests being served.",
		}),
	}
	r.MustRegister(m.Requests, m.Latency, m.Tokens, m.Cost, m.ProviderErrors, m.CacheHits, m.CacheMisses,
		m.MCPCalls, m.VKeySpend, m.AuditDirect, m.AuditDropped, m.AuditQueue, m.InFlight,
		m.AuditForwardFailures, m.AuditWritten, m.AuditRedelivered, m.AuditUnwritable, m.BridgeFailures,
		m.BridgeBacklog, m.BridgeLag,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// keySpend is the svc_vkey_spend_usd collector: at each scrape it asks
// for every key's current spend (the limits' counters, which every process
// shares), so the gauge is never set out of order by settlements racing.
type keySpend struct {
	desc  *prometheus.Desc
	mu    sync.Mutex
	spent func() map[string]float64
	mask  func(id string) string
	masks map[string]string // key id → masked key, once known (a key's mask never changes)
}

// SetSource sets where the spends come from, by key id, and how a key id
// is shown masked (sk-svc-1a2b…; nil or "": the id alone). f nil: none.
func (k *keySpend) SetSource(f func() map[string]float64, mask func(id string) string) {
	k.mu.Lock()
	k.spent, k.mask = f, mask
	k.mu.Unlock()
}

// masked returns id's masked key, looked up once.
func (k *keySpend) masked(id string) string {
	k.mu.Lock()
	m, ok := k.masks[id]
	f := k.mask
	k.mu.Unlock()
	if ok || f == nil {
		return m
	}
	m = f(id)
	if m != "" {
		k.mu.Lock()
		if len(k.masks) < 100000 {
			k.masks[id] = m
		}
		k.mu.Unlock()
	}
	return m
}

// Describe implements prometheus.Collector.
func (k *keySpend) Describe(ch chan<- *prometheus.Desc) { ch <- k.desc }

// Collect implements prometheus.Collector.
func (k *keySpend) Collect(ch chan<- prometheus.Metric) {
	k.mu.Lock()
	f := k.spent
	k.mu.Unlock()
	if f == nil {
		return
	}
	for id, v := range f() {
		ch <- prometheus.MustNewConstMetric(k.desc, prometheus.GaugeValue, v, k.masked(id), id)
	}
}

// Handler serves the registry in Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}

// Other is the label of every model svc does not know (Request.Model).
const Other = "other"

// Request is what one finished proxied request reports.
type Request struct {
	Provider         string
	Model            string
	Status           int
	Latency          time.Duration
	PromptTokens     int64
	CompletionTokens int64
	Cost             float64
	// UpstreamStatus is the provider's error status (0 when the provider
	// answered successfully or was never called); UpstreamFailed marks a call
	// that failed without an answer.
	UpstreamStatus int
	UpstreamFailed bool
}

var statusText = func() [600]string {
	var s [600]string
	for i := range s {
		s[i] = strconv.Itoa(i)
	}
	return s
}()

func code(n int) string {
	if n >= 0 && n < len(statusText) {
		return statusText[n]
	}
	return strconv.Itoa(n)
}

// Observe records one finished request.
func (m *Metrics) Observe(r Request) {
	provider := r.Provider
	if provider == "" {
		provider = "none"
	}
	m.Requests.WithLabelValues(provider, r.Model, code(r.Status)).Inc()
	m.Latency.WithLabelValues(provider).Observe(r.Latency.Seconds())
	if r.PromptTokens > 0 {
		m.Tokens.WithLabelValues(provider, "prompt").Add(float64(r.PromptTokens))
	}
	if r.CompletionTokens > 0 {
		m.Tokens.WithLabelValues(provider, "completion").Add(float64(r.CompletionTokens))
	}
	if r.Cost > 0 {
		m.Cost.WithLabelValues(provider).Add(r.Cost)
	}
	if r.UpstreamStatus >= 400 || r.UpstreamFailed {
		m.ProviderErrors.WithLabelValues(provider, code(r.UpstreamStatus)).Inc()
	}
}

// CacheHit counts a semantic cache hit in tier (L1, L2, L3).
func (m *Metrics) CacheHit(tier string) { m.CacheHits.WithLabelValues(tier).Inc() }

// CacheMiss counts a semantic cache miss.
func (m *Metrics) CacheMiss() { m.CacheMisses.Inc() }
