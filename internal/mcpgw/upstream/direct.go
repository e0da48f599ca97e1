package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/mcpgw"
)

// The direct path: a tools/call to a streamable-HTTP server is posted on the
// SDK session's HTTP connection by svc itself — the session's id and
// negotiated protocol version in the headers, the registration's
// credential set by the same round tripper — and its answer (JSON, or an
// event stream) read here. The SDK's client decodes each message with a
// 32 KiB buffer and runs its middleware chain; a tools/call needs none of
// it. The session itself (initialize, the standalone stream that carries
// list_changed, reopening) stays the SDK's, and so does every call the
// direct path cannot take: another transport, a protocol version from
// 2026-07-28 on (its requests carry more headers and _meta), or a server
// that refuses the request before running anything (400, 404 — the
// session expired —, 405, 406, 415): that call is made again through the
// SDK, which is safe because the server ran nothing.

// direct is what a conn needs to post calls itself.
type direct struct {
	client   *http.Client
	endpoint string
	next     atomic.Uint64 // request ids: "svc-<n>", apart from the SDK's numbers
	// notices holds a place for each cancellation notice in flight: at
	// most maxNotices at once, others are dropped (a struggling server
	// whose calls all time out gets no flood of them).
	notices chan struct{}
	// version and sessionID are the session's header values, set once it
	// is open (opened); shared by its requests, which only read them.
	version, sessionID []string
}

// newDirect is the direct path of a streamable transport: the session's
// client, its round tripper setting the credential on svc's own requests
// without copying them.
func newDirect(st *mcp.StreamableClientTransport) *direct {
	hc := *st.HTTPClient
	if rt, ok := hc.Transport.(*roundTripper); ok {
		owned := *rt
		owned.owned = true
		hc.Transport = &owned
	}
	return &direct{client: &hc, endpoint: st.Endpoint, notices: make(chan struct{}, maxNotices)}
}

// opened records the header values of the session once it is open.
func (d *direct) opened(cs *mcp.ClientSession) {
	if init := cs.InitializeResult(); init != nil {
		d.version = []string{init.ProtocolVersion}
	}
	if sid := cs.ID(); sid != "" {
		d.sessionID = []string{sid}
	}
}

// Header values of the direct path's requests, shared (never modified).
var (
	contentTypeJSON = []string{"application/json"}
	acceptBoth      = []string{"application/json, text/event-stream"}
)

// maxNotices bounds a session's cancellation notices in flight.
const maxNotices = 8

// errNotDirect says the direct path did not send the call (or the server
// refused it before running it): the SDK's client makes it.
var errNotDirect = errors.New("upstream: not sent directly")

// rpcOut is a JSON-RPC message svc sends a server: a request, a
// notification (no ID) or an answer to the server's request (Error).
type rpcOut struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      any            `json:"id,omitempty"`
	Method  string         `json:"method,omitempty"`
	Params  any            `json:"params,omitempty"`
	Error   *jsonrpc.Error `json:"error,omitempty"`
}

// rpcMessage is one JSON-RPC message of a server's answer.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *jsonrpc.Error  `json:"error"`
}

// callDirect posts one tools/call; errNotDirect when it cannot. plain
// reports a result of text content and isError only, which
// mcpgw.AppendResult writes.
func (p *Pool) callDirect(ctx context.Context, serverID string, c *conn, params *mcp.CallToolParams) (r *mcp.CallToolResult, plain bool, err error) {
	d := c.direct
	if d == nil {
		return nil, false, errNotDirect
	}
	init := c.session.InitializeResult()
	if init == nil || init.ProtocolVersion >= mcpgw.FirstSDKOnlyProtocol {
		return nil, false, errNotDirect
	}
	id := "svc-" + strconv.FormatUint(d.next.Add(1), 10)
	body, err := callBody(id, params)
	if err != nil {
		return nil, false, err
	}
	// The request outlives the call by the rest of its answer (release);
	// until the answer is read, the call's end ends it.
	reqCtx, cancelReq := context.WithCancelCause(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() { cancelReq(context.Cause(ctx)) })
	resp, err := d.post(reqCtx, c, body)
	if err != nil {
		stop()
		cancelReq(nil)
		var op *net.OpError
		if !errors.As(err, &op) || op.Op != "dial" { // a request never sent needs no notice
			p.cancelled(c, id)
		}
		return nil, false, err
	}
	msg, whole, err := p.answer(ctx, serverID, c, resp, id)
	if err == nil && !whole && stop() {
		go release(resp.Body, cancelReq) // the rest of the stream
	} else {
		stop()
		resp.Body.Close()
		cancelReq(nil)
	}
	if err != nil {
		return nil, false, err
	}
	if msg.Error != nil {
		return nil, false, msg.Error
	}
	if r, plain, err = mcpgw.DecodeResult(msg.Result); err != nil {
		return nil, false, fmt.Errorf("decoding the tool's result: %w", err)
	}
	return r, plain, nil
}

// answer reads the server's answer to request id from resp: errNotDirect
// when the server refused the request before running anything. whole
// reports that the body was read to its end (a JSON answer), so nothing of
// it is left to release.
func (p *Pool) answer(ctx context.Context, serverID string, c *conn, resp *http.Response, id string) (msg *rpcMessage, whole bool, err error) {
	switch resp.StatusCode {
	case http.StatusOK:
	case http.StatusBadRequest, http.StatusNotFound, http.StatusMethodNotAllowed, http.StatusNotAcceptable, http.StatusUnsupportedMediaType:
		return nil, false, errNotDirect
	default:
		return nil, false, fmt.Errorf("the MCP server answered HTTP %d", resp.StatusCode)
	}
	msg, whole, err = p.readAnswer(ctx, serverID, c, resp, id)
	if err != nil {
		p.cancelled(c, id)
		return nil, false, err
	}
	return msg, whole, nil
}

// Bounds of release.
const (
	releaseWait  = 100 * time.Millisecond
	releaseBytes = 64 << 10
)

// errReleased ends a request whose answer did not end within releaseWait.
var errReleased = errors.New("upstream: the answer's stream did not end after its message")

// release reads what remains of an event stream after the message svc
// waited for — the end of the server's stream, usually already on its way
// — and closes it (a JSON answer is read whole: nothing remains), so that
// the connection goes back to the pool: closed before its end, it would be
// closed too, and the next call would dial a new one. What it reads is discarded, as the direct path always ignored
// anything after the answer. A server that keeps the stream open is cut
// off after releaseWait or releaseBytes. cancel ends the request.
func release(body io.ReadCloser, cancel context.CancelCauseFunc) {
	t := time.AfterFunc(releaseWait, func() { cancel(errReleased) })
	_, _ = io.CopyN(io.Discard, body, releaseBytes)
	t.Stop()
	body.Close()
	cancel(nil)
}

// callBody is the JSON-RPC request of a tools/call: json.Marshal of
// rpcOut, or for arguments given as JSON the same JSON written without
// reflection, the arguments compacted into it as they are (byte for byte
// what json.Marshal writes for the gateway's canonical arguments, whose
// strings are escaped as it escapes them).
func callBody(id string, params *mcp.CallToolParams) ([]byte, error) {
	raw, ok := params.Arguments.(json.RawMessage)
	if !ok || len(raw) == 0 {
		args := params.Arguments
		if args == nil {
			args = map[string]any{}
		}
		return json.Marshal(rpcOut{JSONRPC: "2.0", ID: id, Method: "tools/call", Params: struct {
			Name      string `json:"name"`
			Arguments any    `json:"arguments"`
		}{params.Name, args}})
	}
	b := bytes.NewBuffer(make([]byte, 0, len(raw)+len(params.Name)+len(id)+80))
	b.WriteString(`{"jsonrpc":"2.0","id":`)
	b.Write(llm.AppendJSONString(b.AvailableBuffer(), id))
	b.WriteString(`,"method":"tools/call","params":{"name":`)
	b.Write(llm.AppendJSONString(b.AvailableBuffer(), params.Name))
	b.WriteString(`,"arguments":`)
	if err := json.Compact(b, raw); err != nil {
		return nil, fmt.Errorf("the tool's arguments: %w", err)
	}
	b.WriteString("}}")
	return b.Bytes(), nil
}

// post sends one message on the session's connection.
func (d *direct) post(ctx context.Context, c *conn, body []byte) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, d.endpoint, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	d.headers(req)
	req.Header["Content-Type"] = contentTypeJSON
	req.Header["Accept"] = acceptBoth
	return d.client.Do(req)
}

// headers sets the session's headers (opened recorded them before any
// call): its negotiated protocol version and its id.
func (d *direct) headers(req *http.Request) {
	req.Header["Mcp-Protocol-Version"] = d.version
	if d.sessionID != nil {
		req.Header["Mcp-Session-Id"] = d.sessionID
	}
}

// readAnswer reads the response to request id from a JSON body (whole
// true: read to its end) or an event stream (sse.go). A stream the server
// ends before the answer is resumed as the SDK's client does: GET with
// Last-Event-ID after the delay the server asked for, when the server gave
// its events ids.
func (p *Pool) readAnswer(ctx context.Context, serverID string, c *conn, resp *http.Response, id string) (msg *rpcMessage, whole bool, err error) {
	ct, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if ct == "application/json" {
		m, err := readJSONAnswer(resp.Body, id)
		return m, err == nil, err
	}
	if ct != "text/event-stream" {
		return nil, false, fmt.Errorf("the MCP server answered with content type %q", ct)
	}
	st := &stream{pool: p, serverID: serverID, c: c, id: id}
	body := resp.Body
	barren := 0
	for resumed := 0; ; resumed++ {
		before := st.lastID
		m, err := st.read(ctx, body)
		if body != resp.Body {
			body.Close()
		}
		if m != nil || err != nil {
			return m, false, err
		}
		if resumed > 0 && st.lastID == before {
			barren++
		} else {
			barren = 0
		}
		if st.lastID == "" || resumed == maxResumes || barren > maxBarren {
			return nil, false, errStreamEnded
		}
		if body, err = st.resume(ctx); err != nil {
			return nil, false, err
		}
	}
}

// readJSONAnswer reads a JSON answer to request id: the whole body (as the
// SDK's client reads it; the round tripper's limitedBody bounds it), so
// that the connection is free once it is read, and its one message with
// the event stream's reader (decodeMessage). A server that sends its
// message and keeps the body open holds the call until the call's context
// ends, as one that never answers does.
func readJSONAnswer(body io.Reader, id string) (*rpcMessage, error) {
	data, err := io.ReadAll(body)
	if err != nil {
		return nil, fmt.Errorf("reading the server's answer: %w", err)
	}
	m, err := decodeMessage(data)
	if err != nil {
		return nil, fmt.Errorf("decoding the server's answer: %w", err)
	}
	if !sameID(m.ID, id) {
		return nil, errors.New("the server answered another request")
	}
	return m, nil
}

// cancelled tells the server, as the SDK's client does, that svc gave up
// on request id — the caller went away, the call timed out, or its answer
// could not be read — so that it stops the tool: closing the HTTP request
// does not. It is sent in the background, bounded by refuseTimeout.
func (p *Pool) cancelled(c *conn, id string) {
	select {
	case c.direct.notices <- struct{}{}:
	default:
		return
	}
	go func() {
		defer func() { <-c.direct.notices }()
		ctx, cancel := context.WithTimeout(context.Background(), refuseTimeout)
		defer cancel()
		body, _ := json.Marshal(rpcOut{JSONRPC: "2.0", Method: "notifications/cancelled",
			Params: map[string]string{"requestId": id, "reason": "the caller gave up"}})
		if resp, err := c.direct.post(ctx, c, body); err == nil {
			resp.Body.Close()
		}
	}()
}

// refuseTimeout bounds the answer to a server's request, and the notice of
// a call given up on.
const refuseTimeout = 10 * time.Second

// sameID compares a JSON id with the string id svc sent.
func sameID(raw json.RawMessage, id string) bool {
	if len(raw) == len(id)+2 && raw[0] == '"' && raw[len(raw)-1] == '"' && string(raw[1:len(raw)-1]) == id {
		return true // as sent (svc's ids need no escape)
	}
	var s string
	return json.Unmarshal(raw, &s) == nil && s == id
}
