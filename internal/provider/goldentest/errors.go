package goldentest

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
)

// ErrorOut is an error as want_error.json records it.
type ErrorOut struct {
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

// ErrorOf is err as want_error.json records it (nil for nil).
func ErrorOf(err error) *ErrorOut {
	if err == nil {
		return nil
	}
	var e *apierr.Error
	if !errors.As(err, &e) {
		return &ErrorOut{Kind: "not an *apierr.Error", Message: err.Error()}
	}
	o := &ErrorOut{Kind: e.Kind.String(), Status: e.Status(), Type: e.Kind.Type(),
		Code: e.Code, Param: e.Param, Message: e.Message}
	if e.RetryAfter != 0 {
		o.RetryAfter = e.RetryAfter.String()
	}
	h := http.Header{}
	e.SetHeaders(h)
	if len(h) > 0 {
		o.Header = Flatten(h)
	}
	if e.Err != nil {
		o.Cause = e.Err.Error()
	}
	return o
}

// Visible is every text of err that a caller, a log or a store can see: the
// OpenAI and Anthropic bodies, Error(), each link of the cause chain, Extra
// and the headers.
func Visible(err error) string {
	e := apierr.From(err)
	parts := []string{string(apierr.JSON(err)), string(apierr.AnthropicJSON(err)), err.Error(), fmt.Sprint(e.Extra)}
	for k, v := range e.Header {
		parts = append(parts, k+": "+strings.Join(v, ", "))
	}
	var walk func(error)
	walk = func(err error) {
		if err == nil {
			return
		}
		parts = append(parts, err.Error())
		switch u := err.(type) {
		case interface{ Unwrap() error }:
			walk(u.Unwrap())
		case interface{ Unwrap() []error }:
			for _, x := range u.Unwrap() {
				walk(x)
			}
		}
	}
	walk(e.Err)
	return strings.Join(parts, "\n")
}

// token is a run of the characters credentials are made of.
var token = regexp.MustCompile(`[A-Za-z0-9_\-.+/=*]{8,}`)

// neverSent are fragments of credentials that must not reach a caller even
// in part.
var neverSent = []string{"Bearer ", "AIza", "ya29."}

// CheckNoLeak checks that no credential in the provider's error answer body
// reaches what the caller, a log or a store sees of e (anything with a
// credential's shape, apierr.RedactShapes, and the fragments of neverSent),
// and that on 401 and 403 the provider's message is not relayed at all
// (providers echo parts of the key in it).
func CheckNoLeak(t *testing.T, status int, body []byte, e *apierr.Error) {
	t.Helper()
	sent := Visible(e)
	for _, tok := range token.FindAllString(string(body), -1) {
		tok = strings.TrimRight(tok, ".=")
		if apierr.RedactShapes(tok) != tok && strings.Contains(sent, tok) {
			t.Errorf("the provider's %q reaches the caller or the log: %s", tok, sent)
		}
	}
	for _, f := range neverSent {
		if strings.Contains(sent, f) {
			t.Errorf("%q reaches the caller or the log: %s", f, sent)
		}
	}
	if status != http.StatusUnauthorized && status != http.StatusForbidden {
		return
	}
	var b struct {
		Message  string `json:"message"`
		MessageU string `json:"Message"`
		Error    struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	_ = json.Unmarshal(body, &b)
	for _, m := range []string{b.Message, b.MessageU, b.Error.Message} {
		if m != "" && strings.Contains(sent, m) {
			t.Errorf("HTTP %d: the provider's message %q is relayed: %s", status, m, sent)
		}
	}
}

// ErrorBody is a provider's error answer whose message, param and code carry
// the given text, in the provider's own shape (a dialect without a param or
// code puts it where the dialect can: the type, the error type header).
type ErrorBody func(status int, message, param, code string) (http.Header, []byte)

// Decoder is an adapter's DecodeError.
type Decoder func(status int, h http.Header, body []byte) *apierr.Error

// echoStatuses are the statuses a key echo is tried with: the caller's
// mistakes, whose message, param and code are relayed, and the rest.
var echoStatuses = []int{400, 404, 409, 413, 422, 429, 500, 503, 504, 529}

// CheckScrub checks an adapter's error path against a provider that echoes
// svc's key: for each status, the key in the answer's message, param and
// code — as sent, URL-escaped and base64-encoded — reaches nothing a caller,
// a log or a store sees, in any letter case, once the decoded error is
// scrubbed with the key (apierr.Scrub), the error's kind unchanged. Keys of a known shape must not
// get through DecodeError alone either; an opaque key (a self-hosted server's)
// only the exact scrub can find.
func CheckScrub(t *testing.T, decode Decoder, body ErrorBody) {
	t.Helper()
	keys := []struct {
		name   string
		key    string
		shaped bool
	}{
		{"openai", "sk-proj-" + strings.Repeat("Zq8xW2", 12), true},
		{"groq", "gsk_" + strings.Repeat("Pt4vK9", 8) + "Ab3x", true},
		{"azure", strings.Repeat("0a1b2c3d4e5f6789", 2), true},
		{"opaque", "svc-Test/opaque+Key", false},
	}
	for _, k := range keys {
		forms := map[string]string{
			"as sent":     k.key,
			"url-escaped": url.QueryEscape(k.key),
			"base64":      base64.StdEncoding.EncodeToString([]byte(k.key)),
		}
		for formName, form := range forms {
			for _, status := range echoStatuses {
				h, b := body(status, "invalid value '"+form+"' for this request", form, "bad_key:"+form)
				e := decode(status, h, b)
				if e == nil {
					t.Fatalf("%s %s, HTTP %d: DecodeError returned nil", k.name, formName, status)
				}
				if k.shaped && formName == "as sent" {
					if out := Visible(e); strings.Contains(out, k.key) {
						t.Errorf("%s key, HTTP %d: DecodeError alone lets it through:\n%s", k.name, status, out)
					}
				}
				got := apierr.Scrub(e, k.key)
				if out := Visible(got); strings.Contains(strings.ToLower(out), strings.ToLower(form)) {
					t.Errorf("%s key %s, HTTP %d: it reaches the caller or the log after Scrub:\n%s", k.name, formName, status, out)
				}
				if apierr.KindOf(got) != e.Kind {
					t.Errorf("%s key %s, HTTP %d: Scrub changed the kind from %v to %v", k.name, formName, status, e.Kind, apierr.KindOf(got))
				}
			}
		}
	}
}
