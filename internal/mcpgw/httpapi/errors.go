package httpapi

import (
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
)

// JSON-RPC error codes svc uses beyond the protocol's own (-32602 invalid
// params for the caller's mistakes and unknown tools). They stay clear of
// the codes the SDK gives meaning to (-32001 to -32005, -32042).
const (
	CodeUnauthenticated = -32010
	CodeBudgetExceeded  = -32011
	CodeForbidden       = -32012 // access control, policy violation, guard
	CodeUpstream        = -32013 // the tool server failed
	CodeTimeout         = -32014
	CodeRateLimited     = -32015
	CodeUnavailable     = -32603
)

// rpcCode is the JSON-RPC code of an error kind.
func rpcCode(k apierr.Kind) int64 {
	switch k {
	case apierr.InvalidRequest, apierr.NotFound, apierr.TooLarge:
		return jsonrpc.CodeInvalidParams
	case apierr.Unauthenticated:
		return CodeUnauthenticated
	case apierr.BudgetExceeded:
		return CodeBudgetExceeded
	case apierr.Forbidden:
		return CodeForbidden
	case apierr.RateLimited:
		return CodeRateLimited
	case apierr.UpstreamError:
		return CodeUpstream
	case apierr.UpstreamTimeout:
		return CodeTimeout
	}
	return CodeUnavailable
}

// rpcError is err as a JSON-RPC error: the client-safe message, and in
// data the OpenAI-style type and code, the HTTP status it stands for and
// the error's extra fields (violations).
func rpcError(err error) *jsonrpc.Error {
	e := apierr.From(err)
	data := map[string]any{"type": e.Kind.Type(), "status": e.Status()}
	if e.Code != "" {
		data["code"] = e.Code
	}
	if e.Param != "" {
		data["param"] = e.Param
	}
	for k, v := range e.Extra {
		data[k] = v
	}
	raw, _ := json.Marshal(data)
	return &jsonrpc.Error{Code: rpcCode(e.Kind), Message: e.Message, Data: raw}
}

// writeHTTPError answers a refusal before the SDK: its HTTP status, and a
// JSON-RPC error body (id null unless the request's id is known).
func writeHTTPError(w http.ResponseWriter, id json.RawMessage, err error) {
	e := apierr.From(err)
	writeRPCError(w, id, e, rpcError(e))
}

// writeRPCError writes a JSON-RPC error response with e's HTTP status and
// headers (Retry-After, x-ratelimit-*).
func writeRPCError(w http.ResponseWriter, id json.RawMessage, e *apierr.Error, rpc *jsonrpc.Error) {
	h := w.Header()
	e.SetHeaders(h)
	if e.Kind == apierr.Unauthenticated {
		h.Set("WWW-Authenticate", `Bearer realm="svc"`)
	}
	writeRPC(w, e.Status(), id, nil, rpc)
}

// writeRPC writes one JSON-RPC response with status: the error when rpc is
// set, else the result. A result that cannot be encoded is answered as
// svc's internal error.
func writeRPC(w http.ResponseWriter, status int, id json.RawMessage, result any, rpc *jsonrpc.Error) {
	type response struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  any             `json:"result,omitempty"`
		Error   *jsonrpc.Error  `json:"error,omitempty"`
	}
	body, ok := appendResponse(nil, id, result, rpc)
	var err error
	if !ok {
		body, err = json.Marshal(response{"2.0", orNull(id), result, rpc})
	}
	if err != nil {
		body, _ = json.Marshal(response{JSONRPC: "2.0", ID: orNull(id), Error: rpcError(apierr.Wrap(apierr.Internal, "encode_failed", "could not encode the answer", err))})
	}
	jsonbody.WriteRaw(w, status, body)
}

// appendResponse writes, without reflection, the common answer: a result
// given as its JSON (json.RawMessage, compact and escaped as json.Marshal
// writes it) to a request whose id needs no change to be written as
// json.Marshal writes it (no space, no <, >, & or U+2028/U+2029); ok false
// for anything else. A nil dst is allocated here, sized to the answer, once
// the answer is known to be one it writes.
func appendResponse(dst []byte, id json.RawMessage, result any, rpc *jsonrpc.Error) ([]byte, bool) {
	raw, ok := result.(json.RawMessage)
	if !ok || rpc != nil || len(raw) == 0 || len(id) == 0 {
		return nil, false
	}
	for _, c := range id {
		switch c {
		case ' ', '\t', '\n', '\r', '<', '>', '&', 0xE2:
			return nil, false
		}
	}
	if dst == nil {
		dst = make([]byte, 0, len(id)+len(raw)+40) // the envelope is 33 bytes
	}
	dst = append(dst, `{"jsonrpc":"2.0","id":`...)
	dst = append(dst, id...)
	dst = append(dst, `,"result":`...)
	dst = append(dst, raw...)
	return append(dst, '}'), true
}
