package bedrock_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider/bedrock"
)

// TestDecodeErrorShapes covers the error shapes beyond the golden cases: the
// type in "__type" instead of the header, "Message" capitalised, a type that
// decides over the status, and credentials in a message.
func TestDecodeErrorShapes(t *testing.T) {
	tests := []struct {
		name     string
		status   int
		header   http.Header
		body     string
		wantKind apierr.Kind
		wantCode string
		wantIn   string // in the message
		wantOut  string // not in the message nor the cause
	}{
		{"__type and Message", 400, http.Header{}, `{"__type":"com.amazon.coral.validate#ValidationException","Message":"Malformed input request"}`, apierr.InvalidRequest, "ValidationException", "Malformed input request", ""},
		{"throttling as 400 type", 400, http.Header{"X-Amzn-Errortype": {"ThrottlingException"}}, `{"message":"slow down"}`, apierr.RateLimited, "ThrottlingException", "slow down", ""},
		{"expired token", 400, http.Header{"X-Amzn-Errortype": {"ExpiredTokenException"}}, `{"message":"The security token included in the request is expired"}`, apierr.UpstreamError, "upstream_auth_failed", "credentials", "expired"},
		{"401 bearer", 401, http.Header{}, `{"message":"Invalid API Key format: ABSKQmVkcm9ja0FQSUtleS1leGFtcGxl"}`, apierr.UpstreamError, "upstream_auth_failed", "", "ABSK"},
		{"key in a 400", 400, http.Header{"X-Amzn-Errortype": {"ValidationException:x"}}, `{"message":"bad request from AKIAIOSFODNN7EXAMPLE"}`, apierr.InvalidRequest, "ValidationException", "[redacted]", "AKIAIOSFODNN7EXAMPLE"},
		{"424 model error", 424, http.Header{"X-Amzn-Errortype": {"ModelErrorException"}}, `{"message":"The model failed"}`, apierr.UpstreamError, "upstream_error", "The model failed", ""},
		{"not JSON", 502, http.Header{"Content-Type": {"text/html"}}, `<html>bad gateway</html>`, apierr.UpstreamError, "upstream_error", "HTTP 502", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := bedrock.New().DecodeError("bedrock", tc.status, tc.header, []byte(tc.body))
			if e.Kind != tc.wantKind || e.Code != tc.wantCode {
				t.Errorf("got kind %d code %q, want %d %q", e.Kind, e.Code, tc.wantKind, tc.wantCode)
			}
			if !strings.Contains(e.Message, tc.wantIn) {
				t.Errorf("message %q: want it to contain %q", e.Message, tc.wantIn)
			}
			if tc.wantOut != "" && strings.Contains(e.Error(), tc.wantOut) {
				t.Errorf("message %q: want no %q", e.Error(), tc.wantOut)
			}
		})
	}
}
