package httpapi

import (
	"net/http/httptest"
	"regexp"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// TestMetrics: a scan counts in svc_compliance_scans_total by endpoint,
// action and risk level, its findings in svc_compliance_detections_total
// by type, and its time in svc_compliance_scan_seconds.
func TestMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	eng := compliance.New(reDetector{detect.SSN, regexp.MustCompile(`\d{3}-\d{2}-\d{4}`)})
	srv := httptest.NewServer(New(Deps{Auth: testAuth(), Engine: eng, Metrics: m}).Handler())
	defer srv.Close()
	for _, body := range []string{`{"content":"SSN 536-22-1234","policy":"hipaa"}`, `{"content":"hello"}`} {
		if code, b := call(t, srv, "POST", "/v1/compliance/scan", adminKey, []byte(body)); code != 200 {
			t.Fatalf("scan: %d %v", code, b)
		}
	}
	got := gather(t, reg)
	for series, want := range map[string]float64{
		"svc_compliance_scans_total{action=Block,endpoint=scan,risk_level=critical}": 1,
		"svc_compliance_scans_total{action=Allow,endpoint=scan,risk_level=low}":      1,
		"svc_compliance_detections_total{type=SSN}":                                  1,
		"svc_compliance_scan_seconds{endpoint=scan}":                                 2, // observations
	} {
		if got[series] != want {
			t.Errorf("%s = %v, want %v (all: %v)", series, got[series], want, got)
		}
	}
}

// gather reads every series of reg as name{label=value,…} → value (a
// histogram's sample count).
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			key := f.GetName() + "{" + labels(m) + "}"
			switch {
			case m.GetCounter() != nil:
				out[key] = m.GetCounter().GetValue()
			case m.GetHistogram() != nil:
				out[key] = float64(m.GetHistogram().GetSampleCount())
			}
		}
	}
	return out
}

func labels(m *dto.Metric) string {
	s := ""
	for i, l := range m.GetLabel() {
		if i > 0 {
			s += ","
		}
		s += l.GetName() + "=" + l.GetValue()
	}
	return s
}
