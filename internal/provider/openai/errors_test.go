package openai_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider/openai"
)

// TestDecodeErrorEdges covers what the golden error cases do not: the other
// statuses with a rule of their own, Retry-After's forms, and odd bodies.
func TestDecodeErrorEdges(t *testing.T) {
	future := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		name       string
		status     int
		retryAfter string
		body       string
		wantKind   apierr.Kind
		wantCode   string
		wantMsg    string
		// wantRetry is the least RetryAfter wanted; wantRetryMax, when set,
		// the most.
		wantRetry, wantRetryMax time.Duration
	}{
		{name: "408 is a timeout", status: 408, body: `{"error":{"message":"Request timed out."}}`,
			wantKind: apierr.UpstreamTimeout, wantCode: "upstream_timeout", wantMsg: "openai timed out (HTTP 408): Request timed out."},
		{name: "409 is the caller's", status: 409, body: `{"error":{"message":"Conflict.","code":null}}`,
			wantKind: apierr.InvalidRequest, wantMsg: "Conflict."},
		{name: "400 without a body", status: 400,
			wantKind: apierr.InvalidRequest, wantMsg: "openai rejected the request (HTTP 400)"},
		{name: "numeric code", status: 400, body: `{"error":{"message":"bad","type":"BadRequestError","param":null,"code":400}}`,
			wantKind: apierr.InvalidRequest, wantCode: "400", wantMsg: "bad"},
		{name: "long message is cut", status: 400, body: `{"error":{"message":"` + strings.Repeat("a", 3000) + `"}}`,
			wantKind: apierr.InvalidRequest, wantMsg: strings.Repeat("a", 2000) + "…"},
		{name: "429 without a message", status: 429, body: `{}`,
			wantKind: apierr.RateLimited, wantCode: "upstream_rate_limited", wantMsg: "openai rate limit: too many requests"},
		{name: "Retry-After in fractional seconds", status: 429, retryAfter: "1.5",
			wantKind: apierr.RateLimited, wantCode: "upstream_rate_limited", wantMsg: "openai rate limit: too many requests",
			wantRetry: 1500 * time.Millisecond, wantRetryMax: 1500 * time.Millisecond},
		{name: "Retry-After as an HTTP date", status: 429, retryAfter: future,
			wantKind: apierr.RateLimited, wantCode: "upstream_rate_limited", wantMsg: "openai rate limit: too many requests",
			wantRetry: 58 * time.Minute, wantRetryMax: time.Hour},
		{name: "Retry-After garbage", status: 429, retryAfter: "soon",
			wantKind: apierr.RateLimited, wantCode: "upstream_rate_limited", wantMsg: "openai rate limit: too many requests"},
		{name: "Retry-After negative", status: 429, retryAfter: "-3",
			wantKind: apierr.RateLimited, wantCode: "upstream_rate_limited", wantMsg: "openai rate limit: too many requests"},
	}
	a := openai.New()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := http.Header{}
			if tt.retryAfter != "" {
				h.Set("Retry-After", tt.retryAfter)
			}
			e := a.DecodeError("openai", tt.status, h, []byte(tt.body))
			if e.Kind != tt.wantKind || e.Code != tt.wantCode || e.Message != tt.wantMsg {
				t.Errorf("got kind %d code %q message %q, want kind %d code %q message %q", e.Kind, e.Code, e.Message, tt.wantKind, tt.wantCode, tt.wantMsg)
			}
			if e.RetryAfter < tt.wantRetry || e.RetryAfter > tt.wantRetryMax {
				t.Errorf("RetryAfter: got %v, want between %v and %v", e.RetryAfter, tt.wantRetry, tt.wantRetryMax)
			}
		})
	}
}
