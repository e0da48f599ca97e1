package oauth

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strings"

	"golang.org/x/oauth2"
)

// maxTokenRequest bounds the token request withResource rewrites (svc's own:
// a grant type, a refresh token, a client id).
const maxTokenRequest = 64 << 10

// tokenContext is ctx carrying the client oauth2 sends token requests with:
// the Flow's, and for a refresh (resource set) one whose requests also carry
// the RFC 8707 resource parameter, which oauth2's refresh does not send.
func (f *Flow) tokenContext(ctx context.Context, resource string) context.Context {
	c := f.client
	if resource != "" {
		base := f.client.Transport
		if base == nil {
			base = http.DefaultTransport
		}
		c = &http.Client{Transport: withResource{base: base, resource: resource},
			CheckRedirect: f.client.CheckRedirect, Jar: f.client.Jar, Timeout: f.client.Timeout}
	}
	return context.WithValue(ctx, oauth2.HTTPClient, c)
}

// withResource adds resource to the form body of POST requests that lack
// one. It serves only the refresh grant's token request.
type withResource struct {
	base     http.RoundTripper
	resource string
}

func (t withResource) RoundTrip(r *http.Request) (*http.Response, error) {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if r.Method != http.MethodPost || r.Body == nil || mt != "application/x-www-form-urlencoded" {
		return t.base.RoundTrip(r)
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxTokenRequest+1))
	r.Body.Close()
	if err != nil {
		return nil, err
	}
	if len(b) > maxTokenRequest {
		return nil, errors.New("oauth: token request too large")
	}
	v, err := url.ParseQuery(string(b))
	if err != nil {
		return nil, err
	}
	if v.Get("resource") == "" {
		v.Set("resource", t.resource)
	}
	body := v.Encode()
	r2 := r.Clone(r.Context())
	r2.Body = io.NopCloser(strings.NewReader(body))
	r2.ContentLength = int64(len(body))
	r2.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(body)), nil }
	return t.base.RoundTrip(r2)
}
