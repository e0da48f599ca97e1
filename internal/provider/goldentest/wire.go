package goldentest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// Answer is what the fake provider replies to a case's request.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
	// Chunked writes Body in small flushed pieces, as a stream arrives.
	Chunked bool
}

// Received is the request as the fake provider saw it.
type Received struct {
	Method, Host, URI string
	Header            http.Header
	Body              []byte
}

// piece is the size of the pieces streams are written and read in: odd, so
// that lines, events, frames and UTF-8 sequences are split.
const piece = 37

// RoundTrip sends req, unchanged but for its scheme and address (the Host
// header stays the adapter's), to an httptest server that answers a, and
// returns what the server received and its response, whose body is closed
// when the test ends.
func RoundTrip(t *testing.T, req *http.Request, a Answer) (Received, *http.Response) {
	t.Helper()
	got := make(chan Received, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- Received{Method: r.Method, Host: r.Host, URI: r.URL.RequestURI(), Header: r.Header.Clone(), Body: body}
		for k, v := range a.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(a.Status)
		writeBody(w, a)
	}))
	t.Cleanup(srv.Close)
	req.URL.Scheme, req.URL.Host = "http", srv.Listener.Addr().String()
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("sending the upstream request: %v", err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return <-got, resp
}

func writeBody(w http.ResponseWriter, a Answer) {
	if !a.Chunked {
		_, _ = w.Write(a.Body)
		return
	}
	f, _ := w.(http.Flusher)
	for b := a.Body; len(b) > 0; {
		n := min(piece, len(b))
		if _, err := w.Write(b[:n]); err != nil {
			return
		}
		if f != nil {
			f.Flush()
		}
		b = b[n:]
	}
}

// ReplayBody reads the request's body through GetBody, which the transport
// uses to retry (and SigV4 to hash), and checks its length is the request's
// ContentLength.
func ReplayBody(t *testing.T, r *http.Request) []byte {
	t.Helper()
	if r.GetBody == nil {
		t.Fatal("the upstream request has no GetBody: it cannot be retried")
	}
	rc, err := r.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(b)) != r.ContentLength {
		t.Errorf("ContentLength: got %d, want %d (the body's length)", r.ContentLength, len(b))
	}
	return b
}

// NoCredentials checks that the adapter set none of the credential headers
// names: credentials are upstream/cred's business, added after the adapter.
func NoCredentials(t *testing.T, h http.Header, names ...string) {
	t.Helper()
	for _, k := range names {
		if v := h.Get(k); v != "" {
			t.Errorf("header %s: got %q, want none (credentials are upstream/cred's business)", k, v)
		}
	}
}

// Pieces reads b a few bytes at a time, as a stream arrives: lines, events
// and UTF-8 sequences are split.
func Pieces(b []byte) io.ReadCloser { return io.NopCloser(&pieceReader{b: b}) }

type pieceReader struct{ b []byte }

func (r *pieceReader) Read(p []byte) (int, error) {
	if len(r.b) == 0 {
		return 0, io.EOF
	}
	n := copy(p[:min(len(p), piece)], r.b)
	r.b = r.b[n:]
	return n, nil
}
