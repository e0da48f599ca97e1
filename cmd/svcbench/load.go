package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// target is where a phase sends its requests: the fake directly, or svc.
type target struct {
	name string // "direct" or "svc"
	url  string // the chat completions URL
	auth string // the Authorization header value
}

// phaseSpec is one load phase: n requests (or, with n == 0, as many as fit in
// duration) from concurrency workers. With rate > 0 the load is open: the
// requests are due at rate per second whatever the answers' pace, at most
// concurrency in flight, and each is timed from when it was due, so a
// request kept waiting by a slow one before it counts its wait.
type phaseSpec struct {
	target      target
	body        []byte
	stream      bool
	concurrency int
	n           int
	duration    time.Duration
	rate        float64
}

// phaseResult is what one phase measured. Latency and TTFB are sorted.
type phaseResult struct {
	requests   int
	failures   int
	firstError error
	elapsed    time.Duration
	latency    []time.Duration // to the full body, or to [DONE]
	ttfb       []time.Duration // streams: to the first body byte
	// late counts an open load's requests handed out over lateBy after
	// they were due: every worker was waiting for an answer.
	late int
}

// newClient is the one client both targets share, so the only difference
// between them is the gateway hop: keep-alive, enough idle connections for
// every worker, no compression, no HTTP/2.
func newClient(maxConcurrency int, timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout: timeout,
		Transport: &http.Transport{
			Proxy:               nil,
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConns:        4 * maxConcurrency,
			MaxIdleConnsPerHost: 2 * maxConcurrency,
			IdleConnTimeout:     2 * time.Minute,
			DisableCompression:  true,
			ForceAttemptHTTP2:   false,
			WriteBufferSize:     16 << 10,
			ReadBufferSize:      16 << 10,
		},
	}
}

// bufPool holds the buffers response bodies are read into and dropped.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// runPhase runs spec and gathers its latencies. It stops early when ctx ends.
func runPhase(ctx context.Context, client *http.Client, spec phaseSpec) phaseResult {
	var (
		mu  sync.Mutex
		res phaseResult
		wg  sync.WaitGroup
	)
	n := spec.n
	if n <= 0 && spec.rate > 0 {
		n = max(1, int(spec.rate*spec.duration.Seconds()))
	}
	per := 1024
	if n > 0 {
		per = n/spec.concurrency + 1
	}
	start := time.Now()
	var late atomic.Int64
	more := closedLoop(spec, n, start)
	if spec.rate > 0 {
		more = openLoop(ctx, spec.rate, n, start, &late)
	}
	for range spec.concurrency {
		wg.Go(func() {
			w := newWorker(ctx, client, spec, per)
			for ctx.Err() == nil {
				due, ok := more()
				if !ok {
					break
				}
				w.do(due)
			}
			bufPool.Put(w.buf)
			mu.Lock()
			defer mu.Unlock()
			res.requests += w.requests
			res.failures += w.failures
			if res.firstError == nil {
				res.firstError = w.firstError
			}
			res.latency = append(res.latency, w.latency...)
			res.ttfb = append(res.ttfb, w.ttfb...)
		})
	}
	wg.Wait()
	res.elapsed = time.Since(start)
	res.late = int(late.Load())
	slices.Sort(res.latency)
	slices.Sort(res.ttfb)
	return res
}

// closedLoop hands out a phase's requests to workers that send the next one
// when the last is answered: n of them (n <= 0: until spec.duration has
// passed since start), each timed from when it is sent (the zero time).
func closedLoop(spec phaseSpec, n int, start time.Time) func() (time.Time, bool) {
	var next atomic.Int64
	deadline := start.Add(spec.duration)
	return func() (time.Time, bool) {
		if n > 0 {
			return time.Time{}, next.Add(1) <= int64(n)
		}
		return time.Time{}, time.Now().Before(deadline)
	}
}

// openLoop hands out n requests due at rate per second from start. A
// worker that takes a request before it is due waits for it and times it
// from when it is sent (the zero time: how late the timer woke it is the
// load generator's, not svc's); one that takes it late, because every
// worker was waiting for an answer, times it from when it was due, so the
// queueing behind slow answers counts. (Under saturation a worker a timer
// woke late also frees late, so a little of that lateness reaches the
// requests queued behind it; late counts those handed out over lateBy
// after they were due, and measuredPhase warns when they are many.)
func openLoop(ctx context.Context, rate float64, n int, start time.Time, late *atomic.Int64) func() (time.Time, bool) {
	var next atomic.Int64
	return func() (time.Time, bool) {
		i := next.Add(1) - 1
		if i >= int64(n) {
			return time.Time{}, false
		}
		due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
		d := time.Until(due)
		if d <= 0 {
			if d < -lateBy {
				late.Add(1)
			}
			return due, true
		}
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return time.Time{}, true
		case <-ctx.Done():
			return time.Time{}, false
		}
	}
}

// lateBy is how long after it was due a request of an open load is
// handed out before it counts as late.
const lateBy = time.Millisecond

// measuredPhase is runPhase, telling progress (what names the phase) when
// more than 5 % of an open load's requests were late: more was due than
// spec.concurrency in flight could carry, so the latencies measure
// svcbench's own queue as much as the path.
func measuredPhase(ctx context.Context, client *http.Client, progress io.Writer, what string, spec phaseSpec) phaseResult {
	r := runPhase(ctx, client, spec)
	if r.requests > 0 && r.late*20 > r.requests {
		fmt.Fprintf(progress, "svcbench: warning: %s c=%d: %d of %d requests were handed out over %v after they were due: the rate was not kept, latencies include svcbench's own queue\n",
			what, spec.concurrency, r.late, r.requests, lateBy)
	}
	return r
}

// worker sends one request at a time, reusing its request and buffers.
type worker struct {
	client *http.Client
	spec   *phaseSpec
	req    *http.Request
	body   bytes.Reader
	rc     io.ReadCloser
	buf    *[]byte

	requests, failures int
	firstError         error
	latency, ttfb      []time.Duration
}

func newWorker(ctx context.Context, client *http.Client, spec phaseSpec, capacity int) *worker {
	w := &worker{
		client:  client,
		spec:    &spec,
		buf:     bufPool.Get().(*[]byte),
		latency: make([]time.Duration, 0, capacity),
	}
	if spec.stream {
		w.ttfb = make([]time.Duration, 0, capacity)
	}
	w.rc = io.NopCloser(&w.body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, spec.target.url, nil)
	if err != nil {
		panic(err) // the URL was checked when the target was built
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", spec.target.auth)
	if spec.stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	req.ContentLength = int64(len(spec.body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(spec.body)), nil }
	w.req = req
	return w
}

// do sends one request and records its outcome, timed from due (the zero
// time: from now). The request is reused: the transport is done with it
// once the response body is closed.
func (w *worker) do(due time.Time) {
	w.requests++
	w.body.Reset(w.spec.body)
	w.req.Body = w.rc

	start := due
	if start.IsZero() {
		start = time.Now()
	}
	resp, err := w.client.Do(w.req)
	if err != nil {
		w.fail(err)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		n, _ := io.ReadFull(resp.Body, *w.buf)
		_, _ = io.CopyBuffer(io.Discard, resp.Body, *w.buf)
		w.fail(fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace((*w.buf)[:min(n, 300)])))
		return
	}
	if w.spec.stream {
		w.readStream(resp.Body, start)
		return
	}
	w.readCompletion(resp.Body, start)
}

func (w *worker) fail(err error) {
	w.failures++
	if w.firstError == nil {
		w.firstError = fmt.Errorf("%s: %w", w.spec.target.name, err)
	}
}

var (
	choicesField = []byte(`"choices"`)
	doneEvent    = []byte("data: [DONE]")
	errorEvent   = []byte(`{"error"`)
)

// readCompletion reads a non-stream answer to the end; it must be a chat
// completion. Only the start of the body is kept for that check.
func (w *worker) readCompletion(body io.Reader, start time.Time) {
	buf := *w.buf
	half := len(buf) / 2
	n := 0 // bytes of the body's start in buf[:half]
	var err error
	for {
		var k int
		if n < half {
			k, err = body.Read(buf[n:half])
			n += k
		} else {
			_, err = body.Read(buf[half:])
		}
		if err != nil {
			break
		}
	}
	elapsed := time.Since(start)
	switch {
	case err != io.EOF:
		w.fail(fmt.Errorf("reading the body: %w", err))
	case !bytes.Contains(buf[:n], choicesField):
		w.fail(fmt.Errorf("not a chat completion: %.200s", buf[:n]))
	default:
		w.latency = append(w.latency, elapsed)
	}
}

// readStream reads an SSE answer to its end, timing the first byte and
// "data: [DONE]". An error event or a stream without [DONE] is a failure.
func (w *worker) readStream(body io.Reader, start time.Time) {
	buf := *w.buf
	var (
		done, ttfb time.Duration
		sawDone    bool
		sawError   []byte
		tail       matcherTail
	)
	for {
		n, err := body.Read(buf)
		if n > 0 {
			if ttfb == 0 {
				ttfb = time.Since(start)
			}
			chunk := buf[:n]
			if !sawDone && tail.contains(chunk, doneEvent) {
				done, sawDone = time.Since(start), true
			}
			if sawError == nil && tail.contains(chunk, errorEvent) {
				sawError = bytes.Clone(chunk[:min(len(chunk), 300)])
			}
			tail.keep(chunk)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			w.fail(fmt.Errorf("reading the stream: %w", err))
			return
		}
	}
	switch {
	case sawError != nil:
		w.fail(fmt.Errorf("error event in the stream: %s", bytes.TrimSpace(sawError)))
	case !sawDone:
		w.fail(errors.New("the stream ended without data: [DONE]"))
	default:
		w.latency = append(w.latency, done)
		w.ttfb = append(w.ttfb, ttfb)
	}
}

// matcherTail holds the last bytes of a stream, so a pattern split across
// two reads is still found.
type matcherTail struct {
	b [32]byte
	n int
}

// contains reports whether pat (shorter than the tail) occurs in chunk or
// across the kept tail and chunk.
func (t *matcherTail) contains(chunk, pat []byte) bool {
	if bytes.Contains(chunk, pat) {
		return true
	}
	if t.n == 0 {
		return false
	}
	var joined [64]byte
	j := copy(joined[:], t.b[:t.n])
	j += copy(joined[j:], chunk[:min(len(chunk), len(pat)-1)])
	return bytes.Contains(joined[:j], pat)
}

// keep remembers the last bytes of chunk.
func (t *matcherTail) keep(chunk []byte) {
	if len(chunk) >= len(t.b) {
		t.n = copy(t.b[:], chunk[len(chunk)-len(t.b):])
		return
	}
	keepOld := min(t.n, len(t.b)-len(chunk))
	copy(t.b[:], t.b[t.n-keepOld:t.n])
	t.n = keepOld + copy(t.b[keepOld:], chunk)
}
