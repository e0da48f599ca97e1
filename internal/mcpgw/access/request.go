package access

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/mcpgw"
)

// Status is where a request is in its life: pending → approved → revoked,
// or pending → denied. No other transition exists.
type Status string

// The statuses.
const (
	StatusPending  Status = "pending"
	StatusApproved Status = "approved" // its tools are granted to its requester
	StatusDenied   Status = "denied"
	StatusRevoked  Status = "revoked" // was approved; the grant is withdrawn
)

// Valid reports whether s is one of the four statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusApproved, StatusDenied, StatusRevoked:
		return true
	}
	return false
}

// Request is one tool access request: the spec's server_id, user_id,
// justification and tools_requested, its id, and what became of it.
type Request struct {
	ID       string `json:"id"`
	ServerID string `json:"server_id"`
	// UserID is the requester, "<kind>:<id>" as identity.Principal.Caller
	// gives it ("virtual_key:…", "user:…", "device:…"): who the tools are
	// granted to.
	UserID         string   `json:"user_id"`
	Justification  string   `json:"justification"`
	ToolsRequested []string `json:"tools_requested"`
	Status         Status   `json:"status"`
	// Reason is the denial's or the revocation's reason ("" when none was
	// given).
	Reason string `json:"reason,omitempty"`
	// DecidedBy is the admin who approved or denied it ("<kind>:<id>").
	DecidedBy string     `json:"decided_by,omitempty"`
	CreatedAt time.Time  `json:"created_at"`
	DecidedAt *time.Time `json:"decided_at,omitempty"`
	// RevokedBy and RevokedAt say who withdrew an approved grant, and when.
	RevokedBy string     `json:"revoked_by,omitempty"`
	RevokedAt *time.Time `json:"revoked_at,omitempty"`
}

// Limits on a request's fields.
const (
	MaxJustification = 4 << 10 // bytes
	MaxReason        = 4 << 10 // bytes
	MaxTools         = 100
	MaxToolName      = mcpgw.MaxNameLen // 200
	MaxUserID        = 256
	MaxIDLen         = 64 // a request id path segment
)

// Requester kinds a request may be filed for.
var requesterKinds = []string{identity.VirtualKey.String(), identity.User.String(), identity.Device.String()}

// ValidationError names the field of a request that is wrong; the HTTP
// surface answers 400 with Field as the error's param.
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }

func invalid(field, format string, a ...any) error {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, a...)}
}

// StateError is a transition refused because the request is not in the
// state it needs (deciding a request that is not pending, revoking one
// that is not approved): 409.
type StateError struct {
	ID   string
	Have Status // the request's status
	Want Status // the status the transition needs
}

func (e *StateError) Error() string {
	return fmt.Sprintf("access request %s is %s, not %s", e.ID, e.Have, e.Want)
}

// ErrTooManyPending refuses a new request while its requester has
// MaxPending requests waiting for a decision: 429.
var ErrTooManyPending = errors.New("access: too many pending requests")

// MaxPending bounds one requester's pending requests.
const MaxPending = 50

// Requester is the canonical requester of userID: "<kind>:<id>" with kind
// virtual_key, user or device as given; a bare id is an SSO user's
// ("user:<id>").
func Requester(userID string) (string, error) {
	kind, id, ok := strings.Cut(userID, ":")
	if !ok {
		kind, id = identity.User.String(), userID
	}
	if !slices.Contains(requesterKinds, kind) {
		return "", invalid("user_id", "must be a user id or \"<kind>:<id>\" with kind %s", strings.Join(requesterKinds, ", "))
	}
	if strings.TrimSpace(id) == "" {
		return "", invalid("user_id", "the id after %q is empty", kind+":")
	}
	c := kind + ":" + id
	if err := text("user_id", c, MaxUserID); err != nil {
		return "", err
	}
	return c, nil
}

// normalize checks a new request's fields and puts them in their stored
// form: the requester canonical, tools without duplicates in the order
// given.
func (r *Request) normalize() error {
	if r.ServerID == "" {
		return invalid("server_id", "is required")
	}
	if err := text("server_id", r.ServerID, mcpgw.MaxIDLen); err != nil {
		return err
	}
	u, err := Requester(r.UserID)
	if err != nil {
		return err
	}
	r.UserID = u
	if strings.TrimSpace(r.Justification) == "" {
		return invalid("justification", "is required")
	}
	if err := multiline("justification", r.Justification, MaxJustification); err != nil {
		return err
	}
	return r.normalizeTools()
}

func (r *Request) normalizeTools() error {
	if len(r.ToolsRequested) == 0 {
		return invalid("tools_requested", "name at least one tool")
	}
	if len(r.ToolsRequested) > MaxTools {
		return invalid("tools_requested", "at most %d tools", MaxTools)
	}
	tools := make([]string, 0, len(r.ToolsRequested))
	for i, t := range r.ToolsRequested {
		field := fmt.Sprintf("tools_requested[%d]", i)
		if strings.TrimSpace(t) == "" {
			return invalid(field, "a tool name is required")
		}
		if err := text(field, t, MaxToolName); err != nil {
			return err
		}
		if !slices.Contains(tools, t) {
			tools = append(tools, t)
		}
	}
	r.ToolsRequested = tools
	return nil
}

// text is at most max bytes of valid UTF-8 without control characters.
func text(field, s string, max int) error {
	if len(s) > max {
		return invalid(field, "at most %d bytes", max)
	}
	if !utf8.ValidString(s) {
		return invalid(field, "must be valid UTF-8")
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return invalid(field, "must not hold control characters")
	}
	return nil
}

// multiline is text that may hold line breaks and tabs.
func multiline(field, s string, max int) error {
	if len(s) > max {
		return invalid(field, "at most %d bytes", max)
	}
	if !utf8.ValidString(s) {
		return invalid(field, "must be valid UTF-8")
	}
	bad := func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\r' && r != '\t' }
	if strings.IndexFunc(s, bad) >= 0 {
		return invalid(field, "must not hold control characters other than line breaks and tabs")
	}
	return nil
}

// checkReason checks a decision's reason.
func checkReason(reason string) error { return multiline("reason", reason, MaxReason) }
