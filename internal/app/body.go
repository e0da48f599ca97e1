package app

import (
	"io"
	"net/http"
	"sync"
	"time"
)

// BodyReadTimeout bounds how long a request's body may take to arrive:
// reading it past d fails, and a connection whose body never comes is
// closed. The deadline is cleared as soon as the body has been read to its
// end, so a long answer (a stream) is never cut by it; a request the
// handler refuses before reading its body (an unauthenticated one) keeps
// it, so the server's discard of the unread body is bounded too. Requests
// without a body are not touched. d ≤ 0 disables it.
func BodyReadTimeout(h http.Handler, d time.Duration) http.Handler {
	if d <= 0 {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
			h.ServeHTTP(w, r)
			return
		}
		rc := http.NewResponseController(w)
		if err := rc.SetReadDeadline(time.Now().Add(d)); err != nil {
			h.ServeHTTP(w, r) // the writer cannot set deadlines (tests' recorders)
			return
		}
		r.Body = &deadlineBody{ReadCloser: r.Body, clear: func() { _ = rc.SetReadDeadline(time.Time{}) }}
		h.ServeHTTP(w, r)
	})
}

// deadlineBody clears the read deadline once the body reached its end.
type deadlineBody struct {
	io.ReadCloser
	once  sync.Once
	clear func()
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.clear)
	}
	return n, err
}
