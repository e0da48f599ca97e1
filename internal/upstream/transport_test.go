package upstream

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
)

// transports are the settings every guarantee is checked with.
var transports = []string{TransportStd, TransportFastHTTP}

// guard bounds a wait that only a bug makes long: it is a deadlock breaker,
// not a measurement.
const guard = 10 * time.Second

// forEachTransport runs f once per transport.
func forEachTransport(t *testing.T, f func(t *testing.T, transport string)) {
	for _, tr := range transports {
		t.Run(tr, func(t *testing.T) { f(t, tr) })
	}
}

// wait fails the test if ch is not closed or sent on within guard.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(guard):
		t.Fatalf("%s did not happen", what)
		panic("unreachable")
	}
}

// connCounter counts the connections a test server accepted.
type connCounter struct {
	mu  sync.Mutex
	new int
}

func (c *connCounter) hook(_ net.Conn, s http.ConnState) {
	if s == http.StateNew {
		c.mu.Lock()
		c.new++
		c.mu.Unlock()
	}
}

func (c *connCounter) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.new
}

// seen is what a test server received.
type seen struct {
	Method, RequestURI, Host, Body string
	ContentLength                  int64
	Header                         http.Header
}

func TestRequestFidelity(t *testing.T) {
	forEachTransport(t, func(t *testing.T, transport string) {
		got := make(chan seen, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			h := r.Header.Clone()
			h.Del("Accept-Encoding") // std asks for gzip on its own
			got <- seen{r.Method, r.RequestURI, r.Host, string(b), r.ContentLength, h}
		}))
		defer srv.Close()
		c := New(Options{Transport: transport})

		body := `{"messages":[{"role":"user","content":"hi"}]}`
		// A Bedrock-like path: escaped characters must reach the server as
		// they were signed.
		req, _ := http.NewRequest("POST", srv.URL+"/model/anthropic.claude-3%3A0/invoke%2Fx?a=1&b=%2F", strings.NewReader(body))
		req.Host = "bedrock-runtime.us-east-1.amazonaws.com"
		req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential=AKID/20261122/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc")
		req.Header.Set("X-Amz-Date", "20261122T084500Z")
		req.Header.Set("Content-Type", "application/json")
		req.Header["X-Multi"] = []string{"b", "a", " spaced  value "}
		req.Header["x-lower-case"] = []string{"kept"}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.ReadBody(resp); err != nil {
			t.Fatal(err)
		}
		want := seen{
			Method:        "POST",
			RequestURI:    "/model/anthropic.claude-3%3A0/invoke%2Fx?a=1&b=%2F",
			Host:          "bedrock-runtime.us-east-1.amazonaws.com",
			Body:          body,
			ContentLength: int64(len(body)),
			Header: http.Header{
				"Authorization":  {req.Header.Get("Authorization")},
				"X-Amz-Date":     {"20261122T084500Z"},
				"Content-Type":   {"application/json"},
				"Content-Length": {strconv.Itoa(len(body))},
				"X-Multi":        {"b", "a", "spaced  value"}, // the server trims outer blanks
				"X-Lower-Case":   {"kept"},
				"User-Agent":     {"Go-http-client/1.1"},
			},
		}
		if diff := cmp.Diff(want, <-got); diff != "" {
			t.Errorf("request the server saw (-want +got):\n%s", diff)
		}
	})
}

func TestResponseFidelity(t *testing.T) {
	forEachTransport(t, func(t *testing.T, transport string) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header()["X-Multi"] = []string{"one", "two"}
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
			w.Write([]byte(`{"error":"slow down"}`))
		}))
		defer srv.Close()
		c := New(Options{Transport: transport})
		req, _ := http.NewRequest("GET", srv.URL, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.ReadBody(resp)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 429 || string(b) != `{"error":"slow down"}` {
			t.Errorf("got %d %q, want 429 and the error body", resp.StatusCode, b)
		}
		for k, want := range map[string][]string{"X-Multi": {"one", "two"}, "Content-Type": {"application/json"}, "Retry-After": {"7"}} {
			if diff := cmp.Diff(want, resp.Header[k]); diff != "" {
				t.Errorf("header %s (-want +got):\n%s", k, diff)
			}
		}
		if resp.Header.Get("Content-Type") == "" || resp.ContentLength != int64(len(b)) {
			t.Errorf("got ContentLength %d, want %d", resp.ContentLength, len(b))
		}
	})
}

func TestTLSVerifiedWithSNI(t *testing.T) {
	forEachTransport(t, func(t *testing.T, transport string) {
		sni := make(chan string, 1)
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Write([]byte("secret"))
		}))
		srv.TLS = &tls.Config{GetConfigForClient: func(h *tls.ClientHelloInfo) (*tls.Config, error) {
			select {
			case sni <- h.ServerName:
			default:
			}
			return nil, nil
		}}
		srv.StartTLS()
		defer srv.Close()
		// The test certificate is for example.com: resolve it to the server.
		dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
		}
		url := "https://example.com:443/v1"

		trusting := New(Options{Transport: transport, dial: dial, tlsConfig: srv.Client().Transport.(*http.Transport).TLSClientConfig})
		req, _ := http.NewRequest("GET", url, nil)
		resp, err := trusting.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := trusting.ReadBody(resp); string(b) != "secret" {
			t.Errorf("got body %q, want %q", b, "secret")
		}
		if got := <-sni; got != "example.com" {
			t.Errorf("got SNI %q, want example.com", got)
		}

		// Without the test CA, verification fails.
		strict := New(Options{Transport: transport, dial: dial})
		req, _ = http.NewRequest("GET", url, nil)
		if _, err := strict.Do(req); apierr.KindOf(err) != apierr.UpstreamError {
			t.Fatalf("got %v, want an UpstreamError for an untrusted certificate", err)
		}
	})
}

func TestStreamsBeforeUpstreamFinishes(t *testing.T) {
	forEachTransport(t, func(t *testing.T, transport string) {
		release := make(chan struct{})
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.ReadAll(r.Body)
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: one\n\n")
			w.(http.Flusher).Flush()
			select {
			case <-release:
			case <-r.Context().Done():
				return
			}
			io.WriteString(w, "data: two\n\n")
		}))
		defer srv.Close()
		c := New(Options{Transport: transport})
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader("{}"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		first := make(chan string, 1)
		go func() {
			line, _ := br.ReadString('\n')
			first <- line
		}()
		// The server holds the rest until the first event was read.
		if got := wait(t, first, "the first event arriving while the upstream waits"); got != "data: one\n" {
			t.Fatalf("got first line %q, want %q", got, "data: one\n")
		}
		close(release)
		rest, err := io.ReadAll(br)
		if err != nil || string(rest) != "\ndata: two\n\n" {
			t.Fatalf("got rest %q, %v; want the second event", rest, err)
		}
	})
}

func TestCancelAbortsUpstream(t *testing.T) {
	for _, phase := range []string{"headers", "body"} {
		forEachTransport(t, func(t *testing.T, transport string) {
			arrived := make(chan struct{})
			gone := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.ReadAll(r.Body) // the server notices a closed connection once the body is read
				if phase == "body" {
					io.WriteString(w, "data: one\n\n")
					w.(http.Flusher).Flush()
				}
				close(arrived)
				<-r.Context().Done() // the client's connection closed
				close(gone)
			}))
			defer srv.Close()
			c := New(Options{Transport: transport})
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL, strings.NewReader("{}"))
			if phase == "headers" {
				go func() { <-arrived; cancel() }()
				_, err := c.Do(req)
				if got := apierr.KindOf(err); got != apierr.ClientClosed {
					t.Fatalf("%s: got kind %v (%v), want ClientClosed", phase, got, err)
				}
			} else {
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				<-arrived
				cancel()
				_, err = c.ReadBody(resp)
				if got := apierr.KindOf(err); got != apierr.ClientClosed {
					t.Fatalf("%s: got kind %v (%v), want ClientClosed", phase, got, err)
				}
			}
			wait(t, gone, phase+": the upstream seeing the connection close")
		})
	}
}

func TestEarlyCloseClosesConnection(t *testing.T) {
	forEachTransport(t, func(t *testing.T, transport string) {
		gone := make(chan struct{})
		var conns connCounter
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/short" {
				io.WriteString(w, "ok")
				return
			}
			io.WriteString(w, "data: one\n\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done()
			close(gone)
		}))
		srv.Config.ConnState = conns.hook
		srv.Start()
		defer srv.Close()
		c := New(Options{Transport: transport})
		req, _ := http.NewRequest("GET", srv.URL+"/stream", nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 4)
		if _, err := io.ReadFull(resp.Body, buf); err != nil {
			t.Fatal(err)
		}
		resp.Body.Close() // returns without draining: the server never ends
		wait(t, gone, "the upstream seeing the connection close")
		if _, err := resp.Body.Read(buf); err == nil {
			t.Error("got a read after Close to succeed, want an error")
		}

		// Whole bodies give their connection back for the next request.
		for range 3 {
			req, _ := http.NewRequest("GET", srv.URL+"/short", nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.ReadBody(resp); err != nil {
				t.Fatal(err)
			}
		}
		if got := conns.count(); got != 2 {
			t.Errorf("got %d connections, want 2 (one closed early, one reused)", got)
		}
	})
}

func TestNoRedirects(t *testing.T) {
	forEachTransport(t, func(t *testing.T, transport string) {
		followed := make(chan struct{}, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/elsewhere" {
				followed <- struct{}{}
				return
			}
			http.Redirect(w, r, "/elsewhere", http.StatusTemporaryRedirect)
		}))
		defer srv.Close()
		c := New(Options{Transport: transport})
		req, _ := http.NewRequest("POST", srv.URL+"/v1", strings.NewReader("{}"))
		req.Header.Set("Authorization", "Bearer sk-test")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		c.ReadBody(resp)
		if resp.StatusCode != http.StatusTemporaryRedirect {
			t.Errorf("got status %d, want 307 returned as is", resp.StatusCode)
		}
		select {
		case <-followed:
			t.Error("the redirect was followed")
		default:
		}
	})
}

// TestFastSkipsClosedIdleConnection checks that fasthttp does not send a
// request on a pooled connection the provider has closed. (net/http's
// readLoop notices such a close only asynchronously, so std fails this test
// now and then: a POST written just after the close gets EOF.)
func TestFastSkipsClosedIdleConnection(t *testing.T) {
	var conns connCounter
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	}))
	srv.Config.ConnState = conns.hook
	srv.Start()
	defer srv.Close()
	c := New(Options{Transport: TransportFastHTTP})
	for i := range 3 {
		req, _ := http.NewRequest("POST", srv.URL, strings.NewReader("hello"))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
		if b, err := c.ReadBody(resp); err != nil || string(b) != "hello" {
			t.Fatalf("request %d: got %q, %v; want the echo", i, b, err)
		}
		srv.CloseClientConnections() // as a provider closing idle keep-alives
	}
	if got := conns.count(); got != 3 {
		t.Errorf("got %d connections, want 3", got)
	}
}

func TestFastProxyFromEnvironmentUsesStd(t *testing.T) {
	viaProxy := make(chan string, 1)
	proxySrv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		viaProxy <- r.URL.String()
	}))
	defer proxySrv.Close()
	proxyURL, _ := url.Parse(proxySrv.URL)
	proxy := func(*http.Request) (*url.URL, error) { return proxyURL, nil }
	d := &net.Dialer{}
	ft := newFastTransport(Options{HeaderTimeout: time.Minute}, d.DialContext, proxy, &http.Transport{Proxy: proxy})
	req, _ := http.NewRequest("GET", "http://provider.invalid/v1/models", nil)
	resp, err := ft.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got := <-viaProxy; got != "http://provider.invalid/v1/models" {
		t.Errorf("proxy got %q, want the absolute URL", got)
	}
}

func TestConcurrentHosts(t *testing.T) {
	forEachTransport(t, func(t *testing.T, transport string) {
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			b, _ := io.ReadAll(r.Body)
			w.Write(bytes.ToUpper(b))
		})
		a, b := httptest.NewServer(h), httptest.NewServer(h)
		defer a.Close()
		defer b.Close()
		c := New(Options{Transport: transport})
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for i := range 16 {
			wg.Go(func() {
				base := a.URL
				if i%2 == 1 {
					base = b.URL
				}
				for range 10 {
					req, _ := http.NewRequest("POST", base, strings.NewReader("abc"))
					resp, err := c.Do(req)
					if err != nil {
						errs <- err
						return
					}
					if got, err := c.ReadBody(resp); err != nil || string(got) != "ABC" {
						errs <- errors.Join(err, errors.New("got "+string(got)))
						return
					}
				}
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

// sseBody is an OpenAI-like stream that ends in [DONE].
var sseBody = strings.Repeat("data: {\"choices\":[]}\n\n", 300) + "data: [DONE]\n\n"

func TestCloseAfterWholeBodyReusesConnection(t *testing.T) {
	forEachTransport(t, func(t *testing.T, transport string) {
		var conns connCounter
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// More than the server's 4 KiB buffer: sent chunked, the last
			// chunk and the terminating one in the same write.
			io.WriteString(w, sseBody)
		}))
		srv.Config.ConnState = conns.hook
		srv.Start()
		defer srv.Close()
		c := New(Options{Transport: transport})
		for range 3 {
			req, _ := http.NewRequest("GET", srv.URL, nil)
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			// Like a relay stopping at [DONE]: every byte read, EOF not seen.
			buf := make([]byte, len(sseBody))
			if _, err := io.ReadFull(resp.Body, buf); err != nil {
				t.Fatal(err)
			}
			if len(resp.TransferEncoding) == 0 {
				t.Fatalf("got a Content-Length answer, want a chunked one")
			}
			resp.Body.Close()
		}
		if got := conns.count(); got != 1 {
			t.Errorf("got %d connections, want 1", got)
		}
	})
}

func TestTruncatedBodyIsAnError(t *testing.T) {
	for _, tc := range []struct{ name, raw string }{
		{"chunked", "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\nb\r\ndata: one\n\n\r\n"},
		{"length", "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\ndata: one\n\n"},
	} {
		forEachTransport(t, func(t *testing.T, transport string) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.ReadAll(r.Body)
				conn, bw, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				bw.WriteString(tc.raw)
				bw.Flush()
				conn.Close()
			}))
			defer srv.Close()
			c := New(Options{Transport: transport})
			req, _ := http.NewRequest("POST", srv.URL, strings.NewReader("{}"))
			resp, err := c.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := c.ReadBody(resp)
			if err == nil || apierr.KindOf(err) != apierr.UpstreamError {
				t.Fatalf("%s: got %q, %v; want an UpstreamError for a cut body", tc.name, b, err)
			}
		})
	}
}
