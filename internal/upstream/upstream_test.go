package upstream

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
)

func TestTransportErrorKinds(t *testing.T) {
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	defer slow.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := ln.Addr().String()
	ln.Close()

	cases := []struct {
		name string
		url  string
		ctx  func() (context.Context, context.CancelFunc)
		want apierr.Kind
	}{
		{"header timeout", slow.URL, func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, apierr.UpstreamTimeout},
		{"refused", "http://" + closedAddr, func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }, apierr.UpstreamError},
		{"caller gone", slow.URL, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			time.AfterFunc(20*time.Millisecond, cancel)
			return ctx, cancel
		}, apierr.ClientClosed},
	}
	for _, tc := range cases {
		forEachTransport(t, func(t *testing.T, transport string) {
			c := New(Options{HeaderTimeout: 100 * time.Millisecond, Transport: transport})
			ctx, cancel := tc.ctx()
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "GET", tc.url, nil)
			_, err := c.Do(req)
			if got := apierr.KindOf(err); got != tc.want {
				t.Fatalf("%s: got kind %v (%v), want %v", tc.name, got, err, tc.want)
			}
			if strings.Contains(apierr.From(err).Message, "127.0.0.1") {
				t.Errorf("message leaks the address: %q", apierr.From(err).Message)
			}
		})
	}
}

func TestReadBodyLimit(t *testing.T) {
	forEachTransport(t, func(t *testing.T, transport string) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte(strings.Repeat("x", 2048)))
		}))
		defer srv.Close()
		c := New(Options{MaxResponseBytes: 1024, Transport: transport})
		req, _ := http.NewRequest("GET", srv.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ReadBody(resp); apierr.KindOf(err) != apierr.UpstreamError {
			t.Fatalf("got %v, want UpstreamError for an oversized body", err)
		}
	})
}
