package anthropic_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
)

// This file holds the error half of TestGolden: want_error.json and the
// checks that no credential reaches the caller.

// errorOut is want_error.json, and the error ending a stream or a decode.
type errorOut struct {
	Kind    string `json:"kind"`
	Status  int    `json:"status"`
	Type    string `json:"type"`
	Code    string `json:"code,omitempty"`
	Param   string `json:"param,omitempty"`
	Message string `json:"message"`
	// RetryAfter is the error's RetryAfter, a time.Duration.
	RetryAfter string `json:"retry_after,omitempty"`
	// Header is what the caller's response carries (apierr SetHeaders).
	Header map[string]string `json:"header,omitempty"`
	// Cause is the wrapped error: logged, never sent to the caller.
	Cause string `json:"cause,omitempty"`
}

var kindNames = map[apierr.Kind]string{
	apierr.Internal:        "Internal",
	apierr.InvalidRequest:  "InvalidRequest",
	apierr.Unauthenticated: "Unauthenticated",
	apierr.BudgetExceeded:  "BudgetExceeded",
	apierr.Forbidden:       "Forbidden",
	apierr.NotFound:        "NotFound",
	apierr.Conflict:        "Conflict",
	apierr.TooLarge:        "TooLarge",
	apierr.RateLimited:     "RateLimited",
	apierr.ClientClosed:    "ClientClosed",
	apierr.UpstreamError:   "UpstreamError",
	apierr.Unavailable:     "Unavailable",
	apierr.UpstreamTimeout: "UpstreamTimeout",
}

func errorOf(err error) *errorOut {
	if err == nil {
		return nil
	}
	var e *apierr.Error
	if !errors.As(err, &e) {
		return &errorOut{Kind: "not an *apierr.Error", Message: err.Error()}
	}
	o := &errorOut{
		Kind: kindNames[e.Kind], Status: e.Status(), Type: e.Kind.Type(),
		Code: e.Code, Param: e.Param, Message: e.Message,
	}
	if e.RetryAfter != 0 {
		o.RetryAfter = e.RetryAfter.String()
	}
	h := http.Header{}
	e.SetHeaders(h)
	if len(h) > 0 {
		o.Header = flatten(h)
	}
	if e.Err != nil {
		o.Cause = e.Err.Error()
	}
	return o
}

// keyLike finds credentials in a provider's answer.
var keyLike = regexp.MustCompile(`(sk-ant|sk|pk|rk)-[A-Za-z0-9_\-]{6,}`)

// checkNoLeak checks that no credential in the provider's answer reaches the
// caller, and that on 401 and 403 the provider's message is not relayed at
// all (providers echo parts of the key in it).
func checkNoLeak(t *testing.T, status int, body []byte, e *apierr.Error) {
	t.Helper()
	sent := string(apierr.JSON(e)) + "\n" + e.Error()
	for _, k := range keyLike.FindAll(body, -1) {
		if strings.Contains(sent, string(k)) {
			t.Errorf("the provider's %q reaches the caller or the log: %s", k, sent)
		}
	}
	if status != http.StatusUnauthorized && status != http.StatusForbidden {
		return
	}
	var b struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &b) == nil && b.Error.Message != "" && strings.Contains(sent, b.Error.Message) {
		t.Errorf("HTTP %d: the provider's message %q is relayed: %s", status, b.Error.Message, sent)
	}
}
