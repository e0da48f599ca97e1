package access

import (
	"bytes"
	"io"
	"net/http"
	"strconv"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/jsonbody"
)

// maxBody bounds a request body: a justification (MaxJustification) and
// MaxTools names of MaxToolName bytes, each JSON-escaped up to six bytes a
// byte.
const maxBody = 256 << 10

// statusAll lists requests of every status.
const statusAll = "all"

// Handler serves the access request routes; mount it at
// /api/mcp/catalog/requests and /api/mcp/catalog/requests/ behind the
// caller's authentication (the principal in the request's context):
//
//	GET  /api/mcp/catalog/requests                ?status=pending (default)|approved|denied|revoked|all,
//	                                              &server_id=, &user_id= (admin), &limit=1–1000
//	POST /api/mcp/catalog/requests                {server_id, user_id?, justification, tools_requested} → 201
//	GET  /api/mcp/catalog/requests/{id}
//	POST /api/mcp/catalog/requests/{id}/approve   (admin) {} or no body
//	POST /api/mcp/catalog/requests/{id}/deny      (admin) {"reason": …} or no body
//	POST /api/mcp/catalog/requests/{id}/revoke    (admin) {"reason": …} or no body
//
// An admin sees and decides every request; any other caller files
// requests for itself and sees only its own (another's is 404).
func (s *Service) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /api/mcp/catalog/requests", s.serve(s.list))
	mux.Handle("POST /api/mcp/catalog/requests", s.serve(s.create))
	mux.Handle("GET /api/mcp/catalog/requests/{id}", s.serve(s.get))
	mux.Handle("POST /api/mcp/catalog/requests/{id}/approve", s.serve(s.approve))
	mux.Handle("POST /api/mcp/catalog/requests/{id}/deny", s.serve(s.deny))
	mux.Handle("POST /api/mcp/catalog/requests/{id}/revoke", s.serve(s.revoke))
	// Other methods and paths under the prefix: the same error shape.
	unknown := s.serve(func(http.ResponseWriter, *http.Request, *identity.Principal) error {
		return apierr.New(apierr.NotFound, "unknown_route", "no such access request route or method")
	})
	mux.Handle("/api/mcp/catalog/requests", unknown)
	mux.Handle("/api/mcp/catalog/requests/", unknown)
	return mux
}

type handler func(w http.ResponseWriter, r *http.Request, p *identity.Principal) error

// serve admits authenticated principals only (401 otherwise), runs h and
// writes its error: the one place errors are written.
func (s *Service) serve(h handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := identity.From(r.Context())
		var err error
		if p == nil || p.Kind == identity.Anonymous || p.ID == "" {
			err = apierr.New(apierr.Unauthenticated, "unauthenticated", "an API key is required")
		} else {
			err = h(w, r, p)
		}
		if err == nil {
			return
		}
		e := apierr.From(APIError(err))
		if e.Kind == apierr.Internal || e.Kind == apierr.Unavailable {
			s.c.Log.Error("MCP access request failed", "path", r.URL.Path, "err", e)
		}
		apierr.Write(w, e)
	})
}

func isAdmin(p *identity.Principal) bool { return p.IsAdmin() }

func forbidden(msg string) error { return apierr.New(apierr.Forbidden, "admin_required", msg) }

type createBody struct {
	ServerID       string   `json:"server_id"`
	UserID         string   `json:"user_id"`
	Justification  string   `json:"justification"`
	ToolsRequested []string `json:"tools_requested"`
}

func (s *Service) create(w http.ResponseWriter, r *http.Request, p *identity.Principal) error {
	var b createBody
	if err := jsonbody.Read(r, maxBody, &b, true); err != nil {
		return err
	}
	req := Request{ServerID: b.ServerID, UserID: b.UserID, Justification: b.Justification, ToolsRequested: b.ToolsRequested}
	switch {
	case isAdmin(p) && b.UserID == "":
		return apierr.BadParam("user_id", "user_id is required: an admin files a request on behalf of a user or key")
	case !isAdmin(p) && b.UserID == "":
		req.UserID = p.Caller()
	case !isAdmin(p):
		u, err := Requester(b.UserID)
		if err != nil {
			return err
		}
		if u != p.Caller() {
			return forbidden("only an admin may file an access request for another caller")
		}
	}
	created, err := s.Create(r.Context(), req)
	if err != nil {
		return err
	}
	return jsonbody.Write(w, http.StatusCreated, created)
}

func (s *Service) list(w http.ResponseWriter, r *http.Request, p *identity.Principal) error {
	q := r.URL.Query()
	f := Filter{Status: StatusPending, ServerID: q.Get("server_id")}
	switch st := q.Get("status"); st {
	case "":
	case statusAll:
		f.Status = ""
	default:
		f.Status = Status(st)
		if !f.Status.Valid() {
			return apierr.BadParam("status", "status must be pending, approved, denied, revoked or all")
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > MaxList {
			return apierr.BadParam("limit", "limit must be an integer between 1 and %d", MaxList)
		}
		f.Limit = n
	}
	if u := q.Get("user_id"); u != "" {
		c, err := Requester(u)
		if err != nil {
			return err
		}
		f.UserID = c
	}
	if !isAdmin(p) {
		if f.UserID != "" && f.UserID != p.Caller() {
			return forbidden("only an admin may list another caller's access requests")
		}
		f.UserID = p.Caller()
	}
	rs, err := s.List(r.Context(), f)
	if err != nil {
		return err
	}
	return jsonbody.Write(w, http.StatusOK, map[string]any{"object": "list", "data": rs})
}

// get answers the request: an admin any, others their own (another's is
// not found, so ids cannot be probed).
func (s *Service) get(w http.ResponseWriter, r *http.Request, p *identity.Principal) error {
	req, err := s.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		return err
	}
	if !isAdmin(p) && req.UserID != p.Caller() {
		return apierr.New(apierr.NotFound, "not_found", "access request not found")
	}
	return jsonbody.Write(w, http.StatusOK, req)
}

// decision refuses a caller that is not the admin (403, whatever the id)
// and reads the decision's optional body into v.
func decision(r *http.Request, p *identity.Principal, v any) error {
	if !isAdmin(p) {
		return forbidden("only an admin may decide access requests")
	}
	return readOptional(r, v)
}

func (s *Service) approve(w http.ResponseWriter, r *http.Request, p *identity.Principal) error {
	if err := decision(r, p, &struct{}{}); err != nil {
		return err
	}
	req, err := s.Approve(r.Context(), r.PathValue("id"), p.Caller())
	if err != nil {
		return err
	}
	return jsonbody.Write(w, http.StatusOK, req)
}

type reasonBody struct {
	Reason string `json:"reason"`
}

func (s *Service) deny(w http.ResponseWriter, r *http.Request, p *identity.Principal) error {
	var b reasonBody
	if err := decision(r, p, &b); err != nil {
		return err
	}
	req, err := s.Deny(r.Context(), r.PathValue("id"), p.Caller(), b.Reason)
	if err != nil {
		return err
	}
	return jsonbody.Write(w, http.StatusOK, req)
}

func (s *Service) revoke(w http.ResponseWriter, r *http.Request, p *identity.Principal) error {
	var b reasonBody
	if err := decision(r, p, &b); err != nil {
		return err
	}
	req, err := s.Revoke(r.Context(), r.PathValue("id"), p.Caller(), b.Reason)
	if err != nil {
		return err
	}
	return jsonbody.Write(w, http.StatusOK, req)
}

// readOptional decodes a JSON object body into v, strictly; no body (or
// only white space) leaves v as it is.
func readOptional(r *http.Request, v any) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return apierr.Wrap(apierr.InvalidRequest, "body_read_failed", "could not read the request body", err)
	}
	if len(b) > maxBody {
		return apierr.Newf(apierr.TooLarge, "request_too_large", "request body exceeds %d bytes", maxBody)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return nil
	}
	return jsonbody.Decode(b, v, true)
}
