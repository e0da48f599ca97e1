package analytics_test

import (
	"net/url"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/analytics"
	"github.com/svc-gateway/svc/internal/apierr"
)

var testNow = time.Date(2026, 5, 20, 10, 37, 12, 345678000, time.UTC)

func TestParseWindow(t *testing.T) {
	day := 24 * time.Hour
	for _, tc := range []struct {
		query string
		want  analytics.Window
	}{
		{"", analytics.Window{From: at("2026-05-19T11:00:00Z"), To: at("2026-05-20T11:00:00Z"), Bucket: time.Hour, Period: "24h"}},
		{"period=24h", analytics.Window{From: at("2026-05-19T11:00:00Z"), To: at("2026-05-20T11:00:00Z"), Bucket: time.Hour, Period: "24h"}},
		{"period=7d", analytics.Window{From: at("2026-05-13T12:00:00Z"), To: at("2026-05-20T12:00:00Z"), Bucket: 6 * time.Hour, Period: "7d"}},
		{"period=30d", analytics.Window{From: at("2026-04-21T00:00:00Z"), To: at("2026-05-21T00:00:00Z"), Bucket: day, Period: "30d"}},
		// Recent and at most 6 h: minute rollups, the smallest bucket giving ≤ 200.
		{"from=2026-05-20T08:00:00Z&to=2026-05-20T10:00:00Z", analytics.Window{From: at("2026-05-20T08:00:00Z"), To: at("2026-05-20T10:00:00Z"), Bucket: time.Minute}},
		{"from=2026-05-20T04:10:30Z&to=2026-05-20T10:10:00Z", analytics.Window{From: at("2026-05-20T04:10:00Z"), To: at("2026-05-20T10:10:00Z"), Bucket: 2 * time.Minute}},
		{"from=2026-05-20T04:30:00%2B02:00&to=2026-05-20T05:00:00%2B02:00", analytics.Window{From: at("2026-05-20T02:30:00Z"), To: at("2026-05-20T03:00:00Z"), Bucket: time.Minute}},
		// Short but older than the minute rollups: hour rollups.
		{"from=2026-05-10T08:10:00Z&to=2026-05-10T09:20:00Z", analytics.Window{From: at("2026-05-10T08:00:00Z"), To: at("2026-05-10T10:00:00Z"), Bucket: time.Hour}},
		// Longer than 6 h: hour rollups.
		{"from=2026-05-20T01:00:00Z&to=2026-05-20T10:00:00Z", analytics.Window{From: at("2026-05-20T01:00:00Z"), To: at("2026-05-20T10:00:00Z"), Bucket: time.Hour}},
		{"from=2026-05-01T00:00:00Z&to=2026-05-20T00:00:00Z", analytics.Window{From: at("2026-05-01T00:00:00Z"), To: at("2026-05-20T00:00:00Z"), Bucket: 3 * time.Hour}},
		{"from=2025-04-20T00:00:00Z&to=2026-05-25T00:00:00Z", analytics.Window{From: at("2025-04-20T00:00:00Z"), To: at("2026-05-25T00:00:00Z"), Bucket: 2 * day}},
	} {
		t.Run(tc.query, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			got, err := analytics.ParseWindow(q, testNow)
			if err != nil {
				t.Fatalf("ParseWindow: %v", err)
			}
			if !got.From.Equal(tc.want.From) || !got.To.Equal(tc.want.To) || got.Bucket != tc.want.Bucket || got.Period != tc.want.Period {
				t.Errorf("got %v – %v by %v (%q), want %v – %v by %v (%q)", got.From, got.To, got.Bucket, got.Period,
					tc.want.From, tc.want.To, tc.want.Bucket, tc.want.Period)
			}
			if n := got.To.Sub(got.From) / got.Bucket; n > analytics.MaxBuckets+2 {
				t.Errorf("%d buckets, want at most about %d", n, analytics.MaxBuckets)
			}
		})
	}
}

func TestParseWindowInvalid(t *testing.T) {
	for _, tc := range []struct{ query, param string }{
		{"period=1y", "period"},
		{"period=", "period"},
		{"period=24H", "period"},
		{"period=24h&from=2026-05-01T00:00:00Z&to=2026-05-02T00:00:00Z", "period"},
		{"period=24h&from=2026-05-01T00:00:00Z", "period"},
		{"from=2026-05-01T00:00:00Z", "to"},
		{"to=2026-05-01T00:00:00Z", "from"},
		{"from=2026-05-02T00:00:00Z&to=2026-05-01T00:00:00Z", "to"},
		{"from=2026-05-01T00:00:00Z&to=2026-05-01T00:00:00Z", "to"},
		{"from=2025-01-01T00:00:00Z&to=2026-05-01T00:00:00Z", "to"},
		{"from=2025-03-26T00:00:00Z&to=2026-04-30T00:00:01Z", "to"},
		{"from=yesterday&to=2026-05-01T00:00:00Z", "from"},
		{"from=2026-05-01&to=2026-05-02", "from"},
		{"from=2026-05-01T00:00:00Z&to=%00", "to"},
		{"from=&to=", "from"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			q, err := url.ParseQuery(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			_, err = analytics.ParseWindow(q, testNow)
			if err == nil {
				t.Fatal("ParseWindow: no error")
			}
			e := apierr.From(err)
			if e.Status() != 400 || e.Param != tc.param {
				t.Errorf("got status %d param %q (%v), want 400 naming %q", e.Status(), e.Param, err, tc.param)
			}
		})
	}
}

func at(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
