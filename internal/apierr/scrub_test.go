package apierr

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// opaqueKey has no credential shape: only the exact-secret scrub catches it
// (a self-hosted server's key, chosen by an operator).
const opaqueKey = "local/vllm+secret-key_2025"

// everything is every text of err a caller, a log or a store can see.
func everything(err error) string {
	e := From(err)
	parts := []string{string(JSON(err)), string(AnthropicJSON(err)), err.Error(), fmt.Sprintf("%v %+v", err, e.Extra)}
	for k, v := range e.Header {
		parts = append(parts, k+": "+strings.Join(v, ", "))
	}
	for u := errors.Unwrap(err); u != nil; u = errors.Unwrap(u) {
		parts = append(parts, u.Error())
	}
	return strings.Join(parts, "\n")
}

func TestScrubError(t *testing.T) {
	forms := map[string]string{
		"as sent":        opaqueKey,
		"query-escaped":  url.QueryEscape(opaqueKey),
		"path-escaped":   url.PathEscape(opaqueKey),
		"base64":         base64.StdEncoding.EncodeToString([]byte(opaqueKey)),
		"base64 url-raw": base64.RawURLEncoding.EncodeToString([]byte(opaqueKey)),
		"upper case":     strings.ToUpper(opaqueKey),
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			orig := &Error{
				Kind:    InvalidRequest,
				Code:    "invalid_key:" + form,
				Param:   form,
				Message: "unknown value '" + form + "' for 'user'",
				Err:     fmt.Errorf("openai answered HTTP 400: %w", errors.New("echo "+form)),
				Header:  http.Header{"X-Echo": {form}},
				Extra: map[string]any{
					"key":    form,
					"nested": map[string]any{"list": []any{form, 3}, "strs": []string{form}},
					"n":      7,
				},
			}
			before := everything(orig)
			got := Scrub(orig, opaqueKey)
			if out := everything(got); strings.Contains(strings.ToLower(out), strings.ToLower(form)) {
				t.Errorf("the key (%s) is still in:\n%s", name, out)
			}
			if everything(orig) != before {
				t.Error("Scrub modified the error it was given")
			}
			e := From(got)
			if e.Kind != InvalidRequest || e.Param != redacted || e.Code != "invalid_key:"+redacted || e.Extra["n"] != 7 {
				t.Errorf("got kind %v param %q code %q extra %v, want the fields kept with the key redacted", e.Kind, e.Param, e.Code, e.Extra)
			}
		})
	}
}

func TestScrubKeepsWhatIsNotSecret(t *testing.T) {
	short := "ollama1" // below MinSecret
	e := New(InvalidRequest, "bad", "model ollama1 is not loaded")
	if got := From(Scrub(e, short, "")); got.Message != e.Message {
		t.Errorf("a secret shorter than %d: got %q, want %q", MinSecret, got.Message, e.Message)
	}
	if got := Scrub(io.EOF, opaqueKey); got != io.EOF {
		t.Errorf("an error with nothing to scrub: got %#v, want io.EOF itself", got)
	}
	if Scrub(nil, opaqueKey) != nil {
		t.Error("Scrub(nil) is not nil")
	}
	if got, want := ScrubString("the key "+opaqueKey+" and gsk_"+strings.Repeat("aB3", 18), opaqueKey), "the key [redacted] and [redacted]"; got != want {
		t.Errorf("ScrubString: got %q, want %q", got, want)
	}
}

// timeoutError stands for a transport error type callers look for.
type timeoutError struct{ addr string }

func (e *timeoutError) Error() string { return "dial " + e.addr + ": i/o timeout" }

// TestScrubChain checks a scrubbed chain still answers errors.Is and
// errors.As, and that no link prints the secret.
func TestScrubChain(t *testing.T) {
	te := &timeoutError{addr: "host?key=" + opaqueKey}
	inner := Wrap(UpstreamError, "upstream_unreachable", "could not reach "+opaqueKey, te)
	chain := fmt.Errorf("call: %w", errors.Join(io.ErrUnexpectedEOF, inner))
	got := Scrub(chain, opaqueKey)
	if !errors.Is(got, io.ErrUnexpectedEOF) {
		t.Error("errors.Is(scrubbed, io.ErrUnexpectedEOF) = false, want true")
	}
	if !errors.Is(Scrub(fmt.Errorf("read: %w", context.Canceled), opaqueKey), context.Canceled) {
		t.Error("a scrubbed cancellation is no longer a cancellation")
	}
	var gotTE *timeoutError
	if !errors.As(got, &gotTE) || gotTE != te {
		t.Errorf("errors.As(scrubbed, *timeoutError) = %v, want the original link", gotTE)
	}
	e := From(got)
	if e.Kind != UpstreamError || strings.Contains(e.Message, opaqueKey) {
		t.Errorf("From(scrubbed) = %v %q, want the UpstreamError, scrubbed", e.Kind, e.Message)
	}
	var walk func(err error)
	walk = func(err error) {
		if err == nil {
			return
		}
		if strings.Contains(err.Error(), opaqueKey) {
			t.Errorf("link %T prints the key: %s", err, err)
		}
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		}
	}
	walk(got)
	if diff := cmp.Diff(chain.Error(), strings.ReplaceAll(got.Error(), redacted, opaqueKey)); diff != "" {
		t.Errorf("the text changed beyond the key (-want +got):\n%s", diff)
	}
}

// TestExact: only the secrets' forms go; a credential-shaped string that
// is not the secret stays (tool results may legitimately show one).
func TestExact(t *testing.T) {
	const key = "tok-3f9a8b7c6d5e4f30"
	s := NewScrubber(key)
	in := "echo: Bearer " + key + " and " + base64.StdEncoding.EncodeToString([]byte(key)) + "; example sk-proj-abcdefghijklmnopqrstuvwxyz012345"
	got := s.Exact(in)
	if strings.Contains(got, key) || strings.Contains(got, base64.StdEncoding.EncodeToString([]byte(key))) {
		t.Errorf("Exact left a form of the secret: %q", got)
	}
	if !strings.Contains(got, "sk-proj-abcdefghijklmnopqrstuvwxyz012345") {
		t.Errorf("Exact removed a shape that is not the secret: %q", got)
	}
	if clean := "nothing here"; s.Exact(clean) != clean || (&Scrubber{}).Exact(in) != in {
		t.Error("Exact changed text without a secret, or with no secrets to look for")
	}
}

// TestMatch: Match finds a secret where Exact would clean it — in every
// form of the secret and any case — and nothing else.
func TestMatch(t *testing.T) {
	const key = "tok-3f9a8b7c6d5e4f30"
	s := NewScrubber(key, "short")
	for _, c := range []struct {
		in   string
		want bool
	}{
		{"echo: Bearer " + key, true},
		{strings.ToUpper(key), true},
		{"x" + base64.RawURLEncoding.EncodeToString([]byte(key)) + "x", true},
		{url.QueryEscape(key + " and more"), true},
		{"nothing here", false},
		{"sk-proj-abcdefghijklmnopqrstuvwxyz012345", false}, // a shape, not the secret
		{"short", false},                                    // under MinSecret
		{"", false},
	} {
		got := s.Match([]byte(c.in))
		if cleaned := s.Exact(c.in) != c.in; got != c.want || got != cleaned {
			t.Errorf("Match(%q) = %v, want %v (Exact changes it: %v)", c.in, got, c.want, cleaned)
		}
	}
	if (&Scrubber{}).Match([]byte(key)) {
		t.Error("the zero Scrubber matched a secret it was not given")
	}
}
