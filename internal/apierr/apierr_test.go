package apierr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestStatusTable(t *testing.T) {
	cases := []struct {
		kind Kind
		want int
	}{
		{Internal, 500}, {InvalidRequest, 400}, {Unauthenticated, 401}, {BudgetExceeded, 402},
		{Forbidden, 403}, {NotFound, 404}, {Conflict, 409}, {TooLarge, 413}, {RateLimited, 429},
		{ClientClosed, 499}, {UpstreamError, 502}, {Unavailable, 503}, {UpstreamTimeout, 504}, {UnsupportedMedia, 415},
		{Kind(200), 500},
	}
	for _, c := range cases {
		if got := c.kind.Status(); got != c.want {
			t.Errorf("Kind(%d).Status() = %d, want %d", c.kind, got, c.want)
		}
	}
}

func TestFromHidesUnknownCauses(t *testing.T) {
	e := From(errors.New("dial tcp 10.0.0.1: secret detail"))
	if e.Kind != Internal || e.Message != "internal error" {
		t.Fatalf("got kind %v message %q, want Internal and a generic message", e.Kind, e.Message)
	}
	wrapped := fmt.Errorf("ctx: %w", BadParam("model", "model is required"))
	if got := From(wrapped); got.Kind != InvalidRequest || got.Param != "model" {
		t.Fatalf("From(wrapped) = %+v, want the inner InvalidRequest", got)
	}
}

func TestWrite(t *testing.T) {
	rec := httptest.NewRecorder()
	err := &Error{Kind: RateLimited, Code: "rate_limit_exceeded", Message: "slow down", RetryAfter: 1500 * time.Millisecond}
	Write(rec, err)
	if rec.Code != 429 {
		t.Fatalf("status = %d, want 429", rec.Code)
	}
	if got := rec.Header().Get("Retry-After"); got != "2" {
		t.Errorf("Retry-After = %q, want 2", got)
	}
	var b struct {
		Error struct {
			Message, Type string
			Code, Param   *string
		}
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &b); err != nil {
		t.Fatal(err)
	}
	if b.Error.Message != "slow down" || b.Error.Type != "rate_limit_error" || b.Error.Code == nil || *b.Error.Code != "rate_limit_exceeded" || b.Error.Param != nil {
		t.Errorf("body = %s", rec.Body.String())
	}
}

func TestJSONExtra(t *testing.T) {
	e := &Error{Kind: Forbidden, Message: "blocked", Extra: map[string]any{"rule_id": "r1", "message": "must not override"}}
	var b map[string]map[string]any
	if err := json.Unmarshal(JSON(e), &b); err != nil {
		t.Fatal(err)
	}
	if b["error"]["rule_id"] != "r1" || b["error"]["message"] != "blocked" {
		t.Errorf("got %v", b)
	}
}

func TestKindString(t *testing.T) {
	if got := UpstreamTimeout.String(); got != "UpstreamTimeout" {
		t.Errorf("UpstreamTimeout.String() = %q", got)
	}
	if got := Kind(200).String(); got != "Kind(200)" {
		t.Errorf("Kind(200).String() = %q", got)
	}
	for k := Internal; k <= UnsupportedMedia; k++ {
		if k.String() == "" || strings.HasPrefix(k.String(), "Kind(") {
			t.Errorf("kind %d has no name", k)
		}
	}
}

func TestFromCancellation(t *testing.T) {
	for _, err := range []error{
		context.Canceled,
		fmt.Errorf("read body: %w", context.Canceled),
		Wrap(UpstreamError, "upstream_error", "the provider's stream failed", fmt.Errorf("read: %w", context.Canceled)),
	} {
		if e := From(err); e.Kind != ClientClosed || e.Status() != 499 {
			t.Errorf("From(%v) = %v (%d), want 499", err, e.Kind, e.Status())
		}
	}
	if e := From(Wrap(UpstreamTimeout, "t", "timed out", context.DeadlineExceeded)); e.Kind != UpstreamTimeout {
		t.Errorf("a deadline is not a cancellation: got %v", e.Kind)
	}
}
