package oauth

import (
	"html/template"
	"net/http"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/jsonbody"
)

// The HTTP surface. The wiring mounts the handlers; Initiate, Tokens and
// Revoke belong behind the admin check. The callback is reached by the
// admin's browser, redirected by the authorization server, so it carries no
// svc credential unless the admin's session is a cookie: its single-use
// state is what authorizes it.
//
//	GET    /api/mcp/auth/initiate?server_id=ID[&redirect=true]  HandleInitiate
//	GET    /api/mcp/auth/callback?state=…&code=…               HandleCallback
//	GET    /api/mcp/auth/tokens                                 HandleTokens
//	DELETE /api/mcp/auth/tokens/{server_id}                     HandleRevoke

// maxServerID bounds a server id taken from a request.
const maxServerID = 256

// InitiateAnswer is the JSON answer of HandleInitiate.
type InitiateAnswer struct {
	ServerID    string `json:"server_id"`
	RedirectURL string `json:"redirect_url"`
}

// HandleInitiate starts the authorization of server_id and answers
// {"server_id", "redirect_url"}: the URL to open in the admin's browser. With
// redirect=true it answers 302 to that URL instead, for a link an admin
// follows. The principal in the request's context is recorded as the one
// who authorized the server.
func (f *Flow) HandleInitiate(w http.ResponseWriter, r *http.Request) {
	q, err := query(r)
	if err != nil {
		f.writeError(w, err)
		return
	}
	id, err := serverIDParam(q.Get("server_id"))
	if err != nil {
		f.writeError(w, err)
		return
	}
	redirect := false
	switch q.Get("redirect") {
	case "", "false", "0":
	case "true", "1":
		redirect = true
	default:
		f.writeError(w, apierr.BadParam("redirect", "redirect must be true or false"))
		return
	}
	requester := "admin"
	if p := identity.From(r.Context()); p != nil {
		requester = p.Caller()
	}
	u, err := f.Initiate(r.Context(), id, requester)
	if err != nil {
		f.writeError(w, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if redirect {
		http.Redirect(w, r, u, http.StatusFound)
		return
	}
	if err := jsonbody.Write(w, http.StatusOK, InitiateAnswer{ServerID: id, RedirectURL: u}); err != nil {
		f.writeError(w, err)
	}
}

// HandleCallback completes an authorization from the authorization server's
// redirect. It answers a small HTML page, or {"server_id", "status":
// "authorized"} to a client that accepts JSON and not HTML; errors are JSON
// (an authorization server's error parameter is a 400 mcp_oauth_denied).
func (f *Flow) HandleCallback(w http.ResponseWriter, r *http.Request) {
	q, err := query(r)
	if err != nil {
		f.writeError(w, err)
		return
	}
	id, err := f.Callback(r.Context(), CallbackParams{
		State: q.Get("state"), Code: q.Get("code"), Issuer: q.Get("iss"),
		Error: q.Get("error"), ErrorDescription: q.Get("error_description"),
	})
	if err != nil {
		f.writeError(w, err)
		return
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	h.Set("Referrer-Policy", "no-referrer")
	accept := r.Header.Get("Accept")
	if strings.Contains(accept, "application/json") && !strings.Contains(accept, "text/html") {
		_ = jsonbody.Write(w, http.StatusOK, map[string]string{"server_id": id, "status": "authorized"})
		return
	}
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'")
	w.WriteHeader(http.StatusOK)
	_ = donePage.Execute(w, id)
}

var donePage = template.Must(template.New("done").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>svc: MCP server authorized</title>
<style>body{font-family:system-ui,sans-serif;margin:4em auto;max-width:36em;color:#222}</style></head>
<body><h1>Authorized</h1><p>svc now holds OAuth tokens for the MCP server <strong>{{.}}</strong>.
You can close this window.</p></body></html>
`))

// HandleTokens answers {"object": "list", "data": [TokenInfo…]}: which
// servers svc holds tokens for, their scopes and expiry; never a token.
func (f *Flow) HandleTokens(w http.ResponseWriter, r *http.Request) {
	ts, err := f.Tokens(r.Context())
	if err == nil {
		w.Header().Set("Cache-Control", "no-store")
		err = jsonbody.Write(w, http.StatusOK, map[string]any{"object": "list", "data": ts})
	}
	if err != nil {
		f.writeError(w, err)
	}
}

// HandleRevoke forgets the tokens of the server named by the path's
// {server_id} and answers {"server_id", "deleted": true}.
func (f *Flow) HandleRevoke(w http.ResponseWriter, r *http.Request) {
	id, err := serverIDParam(r.PathValue("server_id"))
	if err == nil {
		err = f.Revoke(r.Context(), id)
	}
	if err == nil {
		err = jsonbody.Write(w, http.StatusOK, map[string]any{"server_id": id, "deleted": true})
	}
	if err != nil {
		f.writeError(w, err)
	}
}

// query parses the request's query, refusing a malformed one.
func query(r *http.Request) (url.Values, error) {
	q, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, apierr.Wrap(apierr.InvalidRequest, "invalid_query", "the query string is malformed", err)
	}
	return q, nil
}

// serverIDParam checks a server id taken from a request.
func serverIDParam(id string) (string, error) {
	switch {
	case id == "":
		return "", apierr.BadParam("server_id", "server_id is required")
	case len(id) > maxServerID:
		return "", apierr.BadParam("server_id", "server_id is longer than %d bytes", maxServerID)
	case !utf8.ValidString(id) || strings.IndexFunc(id, unicode.IsControl) >= 0:
		return "", apierr.BadParam("server_id", "server_id must be UTF-8 text without control characters")
	}
	return id, nil
}

// writeError answers err, logging the cause of a server-side failure (which
// never holds a token).
func (f *Flow) writeError(w http.ResponseWriter, err error) {
	e := apierr.From(err)
	if e.Status() >= 500 && e.Err != nil {
		f.log.Warn("mcp oauth: request failed", "status", e.Status(), "code", e.Code, "err", e.Err)
	}
	apierr.Write(w, e)
}
