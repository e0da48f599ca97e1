package usage

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/mcpgw"
)

// ProviderPrefix is the provider of a tool call's audit entry, before its
// server's id.
const ProviderPrefix = "mcp:"

// DefaultTimeout bounds one answer when Options.Timeout is zero.
const DefaultTimeout = 10 * time.Second

// maxPrincipalID bounds the key_id and user_id parameters.
const maxPrincipalID = 256

// Source is what the handlers read of the audit log; *audit.Reader is one.
// Errors it returns are written as they are (apierr.From).
type Source interface {
	// Page returns the entries matching q newest first, from the entry
	// before (a request id; "" for the newest).
	Page(ctx context.Context, q audit.Query, before string) (audit.Page, error)
	// Groups sums the entries matching q per time bucket, provider and
	// model (audit.Store.GroupLogs).
	Groups(ctx context.Context, q audit.Query, bucket time.Duration) ([]audit.Group, error)
}

// Options tune an API; the zero value is ready to use.
type Options struct {
	Now     func() time.Time // time.Now when nil
	Timeout time.Duration    // DefaultTimeout when zero
	Log     *slog.Logger     // server-side failures; slog.Default() when nil
}

// API serves GET /api/mcp/usage and GET /api/mcp/logs over a Source.
type API struct {
	src Source
	o   Options
}

// New returns the API over src.
func New(src Source, o Options) *API {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	return &API{src: src, o: o}
}

// answer is a route's work: the value to write as JSON, or an error.
type answer func(ctx context.Context, params url.Values, p *identity.Principal) (any, error)

// serve admits authenticated principals (401 otherwise), runs f within the
// timeout and writes its value (200) or its error: the one place answers
// are written.
func (a *API) serve(f answer) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), a.o.Timeout)
		defer cancel()
		var (
			v   any
			err error
		)
		if p := identity.From(ctx); p == nil || p.Kind == identity.Anonymous || p.ID == "" {
			err = apierr.New(apierr.Unauthenticated, "unauthenticated", "an API key is required")
		} else {
			v, err = f(ctx, r.URL.Query(), p)
		}
		if err == nil {
			err = jsonbody.Write(w, http.StatusOK, v)
			if err == nil {
				return
			}
		}
		e := apierr.From(err)
		if e.Status() >= 500 {
			a.o.Log.Error("mcp usage: request failed", "path", r.URL.Path, "status", e.Status(), "err", err)
		}
		apierr.Write(w, e)
	})
}

// query reads the parameters both routes take into an audit query of tool
// calls, scoped to p, and the logs' cursor (before).
func (a *API) query(params url.Values, p *identity.Principal) (audit.Query, string, error) {
	q, before, err := audit.ParseQuery(params, a.o.Now())
	if err != nil {
		return audit.Query{}, "", err
	}
	// Not parameters of these routes: the tool's server and name are.
	q.Provider, q.Model, q.ConversationID = "", "", ""
	q.ProviderPrefix = ProviderPrefix
	if id := params.Get("server_id"); params.Has("server_id") {
		if err := checkText("server_id", id, mcpgw.MaxIDLen); err != nil {
			return audit.Query{}, "", err
		}
		q.Provider = ProviderPrefix + id
	}
	if tool := params.Get("tool"); params.Has("tool") {
		if err := checkText("tool", tool, mcpgw.MaxNameLen); err != nil {
			return audit.Query{}, "", err
		}
		q.Model = tool
	}
	if err := outcome(params, &q); err != nil {
		return audit.Query{}, "", err
	}
	for _, f := range []struct{ name, v string }{{"key_id", q.KeyID}, {"user_id", q.UserID}} {
		if f.v != "" {
			if err := checkText(f.name, f.v, maxPrincipalID); err != nil {
				return audit.Query{}, "", err
			}
		}
	}
	if err := scope(&q, p); err != nil {
		return audit.Query{}, "", err
	}
	return q, before, nil
}

// checkText refuses an empty value, one longer than max bytes, or one that
// is not printable UTF-8.
func checkText(name, v string, max int) error {
	switch {
	case v == "":
		return apierr.BadParam(name, "%s must not be empty", name)
	case len(v) > max:
		return apierr.BadParam(name, "%s must be at most %d bytes", name, max)
	case !utf8.ValidString(v) || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return apierr.BadParam(name, "%s must be printable UTF-8 text", name)
	}
	return nil
}

// outcome reads the outcome parameter (success or error), which may not
// contradict a status of success or error.
func outcome(params url.Values, q *audit.Query) error {
	if !params.Has("outcome") {
		return nil
	}
	v := params.Get("outcome")
	if v != audit.OutcomeSuccess && v != audit.OutcomeError {
		return apierr.BadParam("outcome", "outcome must be success or error")
	}
	if q.Outcome != "" && q.Outcome != v {
		return apierr.BadParam("outcome", "outcome %s contradicts status %s", v, q.Outcome)
	}
	q.Outcome = v
	return nil
}

// scope narrows q to what p may see: everything for the admin, its own
// key's calls for a virtual key, its own calls for another principal
// (whose entries carry it as user_id, "<kind>:<id>"). Asking for another
// key's or user's calls is a 403.
func scope(q *audit.Query, p *identity.Principal) error {
	if p.IsAdmin() {
		return nil
	}
	switch p.Kind {
	case identity.VirtualKey:
		if q.KeyID != "" && q.KeyID != p.ID {
			return forbidden("key_id", "a key sees only its own tool calls")
		}
		q.KeyID = p.ID
		return nil
	}
	if q.KeyID != "" {
		return forbidden("key_id", "only the admin key may select calls by key_id")
	}
	// A signed-in user: their entries carry their id as user_id
	// (audit.Entry.SetCaller).
	if q.UserID != "" && q.UserID != p.ID {
		return forbidden("user_id", "a caller sees only its own tool calls")
	}
	q.UserID = p.ID
	return nil
}

func forbidden(param, msg string) error {
	return &apierr.Error{Kind: apierr.Forbidden, Code: "forbidden", Param: param, Message: msg}
}
