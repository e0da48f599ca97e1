package apierr

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
)

// MinSecret is the length below which Scrub leaves a secret alone: shorter
// strings occur in ordinary text, and replacing them would mangle it (a local
// server's key "ollama" in "ollama is not running").
const MinSecret = 8

// Scrubber replaces exact secrets, and whatever has a credential's shape,
// with [redacted]. svc knows the exact key it sent on each upstream call; a
// provider that echoes it back, or a fragment of text that quotes it, is
// cleaned before anything reaches a caller, a log or a store.
//
// Each secret is looked for as sent and in the forms it travels in: URL
// query- and path-escaped, base64 (standard and URL-safe, padded or not) and
// as the content of a JSON string; in any letter case, since providers fold
// what they echo (Google lowercases its status codes). base64 of "user:secret" (Basic
// credentials) is not derived, the user being unknown: the Basic shape of
// RedactShapes covers it. The zero Scrubber redacts shapes only.
type Scrubber struct {
	secrets []string

	once  sync.Once
	forms []string       // longest first, so no form leaves part of a longer one
	re    *regexp.Regexp // the forms, any case; nil without forms
}

// NewScrubber returns a Scrubber for secrets; those shorter than MinSecret
// are ignored. It is cheap: the forms are derived on first use, so a call
// that ends well pays nothing for them.
func NewScrubber(secrets ...string) *Scrubber {
	return &Scrubber{secrets: secrets}
}

// match is the forms of the secrets as one case-insensitive expression,
// built on first use.
func (s *Scrubber) match() *regexp.Regexp {
	s.once.Do(func() {
		seen := map[string]bool{}
		add := func(f string) {
			if len(f) >= MinSecret && !seen[f] {
				seen[f] = true
				s.forms = append(s.forms, f)
			}
		}
		for _, sec := range s.secrets {
			if len(sec) < MinSecret {
				continue
			}
			add(sec)
			add(url.QueryEscape(sec))
			add(url.PathEscape(sec))
			add(base64.StdEncoding.EncodeToString([]byte(sec)))
			add(base64.RawStdEncoding.EncodeToString([]byte(sec)))
			add(base64.URLEncoding.EncodeToString([]byte(sec)))
			add(base64.RawURLEncoding.EncodeToString([]byte(sec)))
			if q, err := json.Marshal(sec); err == nil {
				add(string(q[1 : len(q)-1]))
			}
		}
		if len(s.forms) == 0 {
			return
		}
		sort.SliceStable(s.forms, func(i, j int) bool { return len(s.forms[i]) > len(s.forms[j]) })
		alts := make([]string, len(s.forms))
		for i, f := range s.forms {
			alts[i] = regexp.QuoteMeta(f)
		}
		s.re = regexp.MustCompile(`(?i)(?:` + strings.Join(alts, "|") + `)`)
	})
	return s.re
}

// String returns v with every form of every secret and every credential
// shape (RedactShapes) replaced by [redacted]. It does not cut v.
func (s *Scrubber) String(v string) string {
	if re := s.match(); re != nil {
		v = re.ReplaceAllLiteralString(v, redacted)
	}
	return RedactShapes(v)
}

// Exact returns v with every form of every secret replaced by [redacted],
// and nothing else changed: for content a caller asked for (a tool's
// result), where a credential's shape may be legitimate text. v is
// returned as it is, without a copy, when it holds none.
func (s *Scrubber) Exact(v string) string {
	re := s.match()
	if re == nil || !re.MatchString(v) {
		return v
	}
	return re.ReplaceAllLiteralString(v, redacted)
}

// Match reports whether b holds a form of a secret (whenever Exact would
// change the text of b, and also where the form found is the placeholder
// itself, which errs on the safe side). It reads b where it lies, without
// a copy.
func (s *Scrubber) Match(b []byte) bool {
	re := s.match()
	return re != nil && re.Match(b)
}

// ScrubString is NewScrubber(secrets...).String(v): for text that is not an
// error (a relayed stream's error event).
func ScrubString(v string, secrets ...string) string { return NewScrubber(secrets...).String(v) }

// Scrub is NewScrubber(secrets...).Error(err).
func Scrub(err error, secrets ...string) error { return NewScrubber(secrets...).Error(err) }

// Error returns err cleaned of the secrets in every field that reaches a
// caller, a log or a store.
//
// An *Error (the usual case) comes back as a scrubbed copy: Message, Code,
// Param, Extra values (nested maps and slices included), Header values, and
// its cause Err, scrubbed in turn. Any other error whose text holds
// something to scrub comes back wrapped: the wrapper's Error() is scrubbed,
// its Unwrap yields its cause scrubbed the same way (so no link of the chain
// prints a secret), and errors.Is and errors.As still see the original
// links. An error with nothing to scrub and no *Error inside is returned as
// it is. err itself is never modified.
func (s *Scrubber) Error(err error) error {
	if err == nil {
		return nil
	}
	if e, ok := err.(*Error); ok {
		return s.apiError(e)
	}
	var inner *Error
	if msg := err.Error(); s.String(msg) == msg && !errors.As(err, &inner) {
		return err
	}
	if m, ok := err.(interface{ Unwrap() []error }); ok {
		return &scrubbedMulti{scrubbed{err: err, s: s}, m.Unwrap()}
	}
	return &scrubbed{err: err, s: s}
}

func (s *Scrubber) apiError(e *Error) *Error {
	c := *e
	c.Message, c.Code, c.Param = s.String(e.Message), s.String(e.Code), s.String(e.Param)
	c.Err = s.Error(e.Err)
	if e.Extra != nil {
		c.Extra = make(map[string]any, len(e.Extra))
		for k, v := range e.Extra {
			c.Extra[k] = s.value(v)
		}
	}
	if e.Header != nil {
		c.Header = make(http.Header, len(e.Header))
		for k, vs := range e.Header {
			out := make([]string, len(vs))
			for i, v := range vs {
				out[i] = s.String(v)
			}
			c.Header[k] = out
		}
	}
	return &c
}

// value scrubs an Extra value: strings, and the strings inside maps and
// slices; anything else (numbers, booleans) is kept.
func (s *Scrubber) value(v any) any {
	switch v := v.(type) {
	case string:
		return s.String(v)
	case []string:
		out := make([]string, len(v))
		for i, x := range v {
			out[i] = s.String(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = s.value(x)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			out[s.String(k)] = s.value(x)
		}
		return out
	case map[string]string:
		out := make(map[string]string, len(v))
		for k, x := range v {
			out[s.String(k)] = s.String(x)
		}
		return out
	case error:
		return s.Error(v)
	}
	return v
}

// scrubbed is one link of an error chain seen through a Scrubber.
type scrubbed struct {
	err error
	s   *Scrubber
}

func (w *scrubbed) Error() string { return w.s.String(w.err.Error()) }

// Unwrap is the cause, scrubbed.
func (w *scrubbed) Unwrap() error {
	if u, ok := w.err.(interface{ Unwrap() error }); ok {
		return w.s.Error(u.Unwrap())
	}
	return nil
}

// Is compares this link only, as errors.Is does; the chain goes on through
// Unwrap.
func (w *scrubbed) Is(target error) bool {
	if target != nil && reflect.TypeOf(target).Comparable() && w.err == target {
		return true
	}
	if x, ok := w.err.(interface{ Is(error) bool }); ok {
		return x.Is(target)
	}
	return false
}

// As matches this link only, as errors.As does: the link itself or its own
// As method. An interface target is not matched by the link itself: through
// it the caller could print the unscrubbed text. (A link is never an *Error:
// Scrubber.Error yields those as scrubbed copies.)
func (w *scrubbed) As(target any) bool {
	v := reflect.ValueOf(target)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		if t := v.Type().Elem(); reflect.TypeOf(w.err).AssignableTo(t) && t.Kind() != reflect.Interface {
			v.Elem().Set(reflect.ValueOf(w.err))
			return true
		}
	}
	if x, ok := w.err.(interface{ As(any) bool }); ok {
		return x.As(target)
	}
	return false
}

// scrubbedMulti is a scrubbed link that wraps several errors (errors.Join).
type scrubbedMulti struct {
	scrubbed
	errs []error
}

// Unwrap is the causes, each scrubbed.
func (w *scrubbedMulti) Unwrap() []error {
	out := make([]error, len(w.errs))
	for i, e := range w.errs {
		out[i] = w.s.Error(e)
	}
	return out
}
