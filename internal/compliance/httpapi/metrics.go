package httpapi

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// Metrics are the compliance component's collectors.
type Metrics struct {
	Scans      *prometheus.CounterVec   // endpoint, action, risk_level
	Detections *prometheus.CounterVec   // type
	Latency    *prometheus.HistogramVec // endpoint
}

// NewMetrics registers the compliance collectors on reg (nil: not
// registered, still usable).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		Scans: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_compliance_scans_total", Help: "Compliance scans by endpoint (scan, intelligent, redact), recommended action and risk level.",
		}, []string{"endpoint", "action", "risk_level"}),
		Detections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "svc_compliance_detections_total", Help: "Detector findings by entity type (after overlaps were resolved).",
		}, []string{"type"}),
		Latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "svc_compliance_scan_seconds", Help: "Time to scan one content, by endpoint (detectors, policy, model; not the HTTP exchange).",
			Buckets: []float64{.0001, .00025, .0005, .001, .002, .005, .01, .025, .05, .1, .25, 1},
		}, []string{"endpoint"}),
	}
	if reg != nil {
		reg.MustRegister(m.Scans, m.Detections, m.Latency)
	}
	return m
}

func (m *Metrics) found(fs []detect.Finding) {
	for _, f := range fs {
		m.Detections.WithLabelValues(string(f.Type)).Inc()
	}
}
