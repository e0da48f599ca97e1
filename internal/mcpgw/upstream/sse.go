package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Bounds of the direct path's event streams.
const (
	// maxResumes bounds the times one call's stream is resumed;
	// maxBarren, the resumptions in a row that bring no event.
	maxResumes = 100
	maxBarren  = 2
	// maxRefusals bounds the server's own requests svc refuses during one
	// call: a server that keeps asking fails the call.
	maxRefusals = 16
	// defaultResumeDelay is the wait before resuming when the server asked
	// for none; maxResumeDelay caps what it may ask for.
	defaultResumeDelay = 500 * time.Millisecond
	maxResumeDelay     = 30 * time.Second
)

// stream reads one call's answer from the server's event stream, across
// resumptions.
type stream struct {
	pool     *Pool
	serverID string
	c        *conn
	id       string // the call's request id

	lastID   string        // the id of the last event read (Last-Event-ID)
	delay    time.Duration // the server's retry field
	refusals int
}

// read reads events until the answer to the call (returned), a failure, or
// the end of the stream (nil, nil). Events are read as the SSE format says:
// fields event, data (lines joined), id and retry; comments skipped; an
// event with no data (a priming event, which carries only an id) or named
// other than "message" carries no message.
func (st *stream) read(ctx context.Context, body io.Reader) (*rpcMessage, error) {
	limit := int(st.pool.opts.MaxResultBytes) + 64<<10
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 4096), limit)
	var name, id string
	var data []byte
	dispatch := func() (*rpcMessage, error) {
		if id != "" {
			st.lastID = id // the event is read: a resumption starts after it
		}
		m, err := st.dispatch(ctx, name, data)
		name, id, data = "", "", data[:0]
		return m, err
	}
	for sc.Scan() {
		line := sc.Bytes()
		if len(line) == 0 {
			if m, err := dispatch(); m != nil || err != nil {
				return m, err
			}
			continue
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			name = string(value)
		case "data":
			if len(data)+len(value) >= limit {
				return nil, &TooLargeError{Limit: st.pool.opts.MaxResultBytes}
			}
			data = append(append(data, value...), '\n')
		case "id":
			id = string(value)
		case "retry":
			if ms, err := strconv.ParseInt(string(value), 10, 64); err == nil && ms >= 0 {
				st.delay = min(time.Duration(ms)*time.Millisecond, maxResumeDelay)
			}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, nil // cut off: resumed as a stream that ended
		}
		return nil, err
	}
	return dispatch() // an event the stream ended without a blank line after
}

// dispatch handles one event: the call's answer is returned; the server's
// notice that its tools changed is handled as the session's own; a request
// of the server's (svc offers it no capability: sampling, roots,
// elicitation) is refused so that the server does not wait for it.
func (st *stream) dispatch(ctx context.Context, name string, data []byte) (*rpcMessage, error) {
	if len(bytes.TrimSpace(data)) == 0 || (name != "" && name != "message") {
		return nil, nil
	}
	m, err := decodeMessage(data)
	if err != nil {
		return nil, fmt.Errorf("decoding the server's event: %w", err)
	}
	switch {
	case m.Method == "" && sameID(m.ID, st.id):
		return m, nil
	case m.Method == "notifications/tools/list_changed":
		st.pool.toolsChanged(st.serverID)
	case m.Method != "" && len(m.ID) > 0:
		if st.refusals++; st.refusals > maxRefusals {
			return nil, fmt.Errorf("the server sent more than %d requests during one call", maxRefusals)
		}
		st.pool.refuse(ctx, st.c, *m)
	}
	return nil, nil
}

// resume waits the delay the server asked for, then asks for the rest of
// the stream after the last event seen.
func (st *stream) resume(ctx context.Context) (io.ReadCloser, error) {
	delay := st.delay
	if delay == 0 {
		delay = defaultResumeDelay
	}
	t := time.NewTimer(delay)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-t.C:
	}
	d := st.c.direct
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, d.endpoint, nil)
	if err != nil {
		return nil, err
	}
	d.headers(req)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Last-Event-ID", st.lastID)
	resp, err := d.client.Do(req)
	if err != nil {
		return nil, err
	}
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ct != "text/event-stream" {
		resp.Body.Close()
		return nil, fmt.Errorf("resuming the server's stream: HTTP %d, %q", resp.StatusCode, ct)
	}
	return resp.Body, nil
}

// refuse answers a server's request that svc does not serve, on its own
// HTTP request, before the stream is read on (bounded by refuseTimeout).
func (p *Pool) refuse(ctx context.Context, c *conn, m rpcMessage) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), refuseTimeout)
	defer cancel()
	body, _ := json.Marshal(rpcOut{JSONRPC: "2.0", ID: m.ID,
		Error: &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "svc does not serve " + m.Method}})
	if resp, err := c.direct.post(ctx, c, body); err == nil {
		resp.Body.Close()
	}
}

var errStreamEnded = errors.New("the server's stream ended before its answer")
