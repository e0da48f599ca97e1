package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync/atomic"

	jsonv2 "github.com/go-json-experiment/json"
	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/mcpgw"
)

// Keys of the SDK TokenInfo's Extra: what this surface hands its tool
// handlers with each HTTP request.
const (
	extraPrincipal = "svc.principal"
	extraAdmission = "svc.admission"
	extraServer    = "svc.server"
	extraTrusted   = "svc.trusted" // bool: the request came from SVC_MCP_TRUSTED_CIDRS
	// extraReservation: the *reservation the request holds for a session
	// it may open (sessions.go).
	extraReservation = "svc.reservation"
)

// authenticate answers 401 (JSON-RPC shaped) without a valid credential,
// refuses a server the caller's network may not reach, admits a tools/call
// under the caller's limits, and passes the principal (and the admission)
// to the SDK as its TokenInfo, so the SDK also binds each session to its
// caller. With fast, a tools/call on a live session of the caller's is
// answered below the SDK (fastcall.go).
func (a *API) authenticate(next http.Handler, fast bool) http.Handler {
	bind := sdkauth.RequireBearerToken(func(ctx context.Context, _ string, r *http.Request) (*sdkauth.TokenInfo, error) {
		info, _ := r.Context().Value(tokenInfoKey{}).(*sdkauth.TokenInfo)
		if info == nil {
			return nil, sdkauth.ErrInvalidToken
		}
		return info, nil
	}, &sdkauth.RequireBearerTokenOptions{AllowMissingExpiration: true})(next)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := a.d.Auth.Authenticate(r.Context(), auth.FromRequest(r, true))
		if err != nil || p == nil {
			if err == nil {
				err = apierr.New(apierr.Unauthenticated, "invalid_api_key", "a valid key is required")
			}
			writeHTTPError(w, nil, err)
			return
		}
		st := &requestState{trustedKnown: true, isTrusted: a.trusted(r), principal: p, caller: p.Caller()}
		ctx := identity.With(r.Context(), p)
		adm, err := a.admit(ctx, r)
		if err != nil {
			writeHTTPError(w, rpcID(adm.req), err)
			return
		}
		var res *reservation
		if fast {
			var ls *liveSession
			var done func()
			if w, ls, res, done, err = a.session(w, r, st); err != nil {
				adm.pre.settle(ctx)
				writeHTTPError(w, nil, err)
				return
			}
			defer done()
			if params, ok := fastCall(adm.req); ok {
				if v := fastView(r, ls); v != nil {
					a.serveFast(ctx, w, v, st, adm.req, params, adm.pre.claim())
					return
				}
			}
		}
		// What the SDK's handlers (and serveV1) read of this request.
		ctx = context.WithValue(ctx, requestStateKey{}, st)
		info := &sdkauth.TokenInfo{UserID: st.caller, Extra: map[string]any{extraPrincipal: p, extraTrusted: st.isTrusted}}
		if adm.server != nil {
			info.Extra[extraServer] = adm.server
		}
		if adm.pre != nil {
			info.Extra[extraAdmission] = adm.pre
		}
		if res != nil {
			info.Extra[extraReservation] = res
		}
		if adm.body != nil {
			r.Body = io.NopCloser(bytes.NewReader(adm.body)) // read again by the next handler
		}
		// The SDK's bearer check needs a header; the caller may have used
		// x-api-key. Its value is not read again.
		if r.Header.Get("Authorization") == "" {
			r.Header.Set("Authorization", "Bearer svc")
		}
		bind.ServeHTTP(w, r.WithContext(context.WithValue(ctx, tokenInfoKey{}, info)))
		// The SDK answered without running the call (an unknown session,
		// another caller's session, bad params): nothing was spent.
		adm.pre.settle(ctx)
	})
}

// admission is what admit learnt of a request: the endpoint's server (nil
// for the aggregate), the POST's body and its JSON-RPC message, and the
// pre-admission of a tools/call.
type admission struct {
	server *mcpgw.Server
	body   []byte // nil: not read (not a POST)
	req    *rpcRequest
	pre    *preAdmission
}

// admit resolves the endpoint's server (404 unknown, 403 from a network
// that may not reach it), reads a POST's JSON-RPC message, and admits a
// tools/call on a server's endpoint under the caller's limits before the
// SDK runs it (402, 429). The body read is for the next handler to read
// again.
func (a *API) admit(ctx context.Context, r *http.Request) (admission, error) {
	var adm admission
	if id := r.PathValue("server_id"); id != "" {
		s, err := a.d.Gateway.Servers.Server(ctx, id)
		if err != nil {
			return adm, mcpgw.ServerError(id, err)
		}
		if err := a.reachable(r, s); err != nil {
			return adm, err
		}
		adm.server = s
	}
	var err error
	adm.body, adm.req, err = a.readCall(r)
	if err != nil || adm.req == nil || adm.req.Method != "tools/call" || adm.server == nil {
		return adm, err
	}
	ad, err := a.d.Gateway.Admit(ctx, identity.From(ctx), adm.server)
	if err != nil || ad == nil {
		return adm, err
	}
	adm.pre = &preAdmission{Admission: ad}
	return adm, nil
}

// rpcID is req's id, for an error answered before the SDK (nil: none).
func rpcID(req *rpcRequest) json.RawMessage {
	if req == nil {
		return nil
	}
	return json.RawMessage(req.ID)
}

type tokenInfoKey struct{}

// requestState is what authenticate learnt of one HTTP request, for the
// SDK's getServer calls on it (one goroutine: no lock).
type requestState struct {
	trustedKnown, isTrusted bool
	refreshed               bool // getServer refreshed the view for this request
	principal               *identity.Principal
	caller                  string // principal.Caller()
}

type requestStateKey struct{}

// stateOf is r's state; an empty one when authenticate did not run.
func stateOf(r *http.Request) *requestState {
	if st, ok := r.Context().Value(requestStateKey{}).(*requestState); ok {
		return st
	}
	return &requestState{}
}

// callerOf is p.Caller(), computed once per request when p is the
// request's authenticated principal.
func (st *requestState) callerOf(p *identity.Principal) string {
	if st.principal == p && st.caller != "" {
		return st.caller
	}
	return p.Caller()
}

// trusted says whether r comes from SVC_MCP_TRUSTED_CIDRS.
func (st *requestState) trusted(a *API, r *http.Request) bool {
	if !st.trustedKnown {
		st.trustedKnown, st.isTrusted = true, a.trusted(r)
	}
	return st.isTrusted
}

// preAdmission is a tools/call admitted before the SDK ran: the call that
// uses it claims it; one the SDK never passed to a call is settled with
// nothing spent when the request ends.
type preAdmission struct {
	mcpgw.Admission
	claimed atomic.Bool
}

// claim gives the admission to the first taker, nil to any other (and
// when there is none).
func (p *preAdmission) claim() mcpgw.Admission {
	if p != nil && p.claimed.CompareAndSwap(false, true) {
		return p.Admission
	}
	return nil
}

// settle settles the admission with nothing spent unless a call took it.
func (p *preAdmission) settle(ctx context.Context) {
	if adm := p.claim(); adm != nil {
		adm.Settle(context.WithoutCancel(ctx), 0)
	}
}

// claimAdmission takes the pre-admission authenticate made for info's
// request, if any and not yet taken: the call that runs owns it.
func claimAdmission(info *sdkauth.TokenInfo) mcpgw.Admission {
	if info == nil {
		return nil
	}
	if pre, ok := info.Extra[extraAdmission].(*preAdmission); ok {
		return pre.claim()
	}
	return nil
}

// readCall reads a POST's body (bounded) and decodes it as one JSON-RPC
// message; the body is returned for the next handler. A nil message (and
// no error) for another method, a batch or a body that is not JSON: the
// SDK answers those.
func (a *API) readCall(r *http.Request) ([]byte, *rpcRequest, error) {
	if r.Method != http.MethodPost {
		return nil, nil, nil
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, a.d.MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return nil, nil, apierr.Newf(apierr.TooLarge, "request_too_large", "the request is over %d bytes", a.d.MaxBodyBytes)
		}
		return nil, nil, apierr.Wrap(apierr.InvalidRequest, "unreadable_body", "the request body could not be read", err)
	}
	var req rpcRequest
	if jsonv2.Unmarshal(body, &req) != nil {
		return body, nil, nil
	}
	return body, &req, nil
}
