// Package identity defines the Principal — who is calling — and its context
// accessors. It is a leaf package: anyone may import it and it imports nothing
// of svc.
package identity

import (
	"context"
	"slices"
)

// Kind is the kind of credential a principal presented.
type Kind uint8

// Kinds of principal.
const (
	Anonymous  Kind = iota
	VirtualKey      // an sk-svc- key
	Admin           // the ADMIN_API_KEY
	User            // an SSO user (internal JWT)
	Device          // a fleet device
	Team            // a team: never a caller, the owner of limits its members share
)

func (k Kind) String() string {
	switch k {
	case VirtualKey:
		return "virtual_key"
	case Admin:
		return "admin"
	case User:
		return "user"
	case Device:
		return "device"
	case Team:
		return "team"
	}
	return "anonymous"
}

// Principal is an authenticated caller: who it is, never what it may do or
// spend. Model restrictions, limits, budgets and policy sets live in the
// caller's records (key, team, user) and are resolved by the stages that
// enforce them.
type Principal struct {
	Kind      Kind
	ID        string // virtual key id, user id, device id
	Name      string // alias or display name
	TeamID    string
	MaskedKey string // display prefix of the credential, never the secret

	// A signed-in user's (Kind User) attributes, from the internal JWT or
	// trusted proxy headers: empty for other kinds.
	Email      string
	Department string
	Groups     []string
	Roles      []string // "admin", "user"
	AuthMethod string   // "oidc:<idp>", "saml", "kerberos", "proxy_headers"
}

// Actor names who acted, for audit records: "admin" for the admin key,
// "anonymous" for nil, else Caller ("user:alice", "virtual_key:…").
func (p *Principal) Actor() string {
	switch {
	case p == nil:
		return Anonymous.String()
	case p.Kind == Admin:
		return Admin.String()
	}
	return p.Caller()
}

// RoleAdmin is the role of a signed-in user in an admin group.
const RoleAdmin = "admin"

// IsAdmin reports whether p may use the management API: the admin key, or
// a signed-in user with the admin role.
func (p *Principal) IsAdmin() bool {
	if p == nil {
		return false
	}
	return p.Kind == Admin || p.Kind == User && slices.Contains(p.Roles, RoleAdmin)
}

// Caller is the principal itself, "<kind>:<id>": what a caller's own
// records (kept responses) are scoped to.
func (p *Principal) Caller() string { return p.Kind.String() + ":" + p.ID }

// Tenant is the principal's isolation scope: its team, or itself.
func (p *Principal) Tenant() string {
	if p.TeamID != "" {
		return "team:" + p.TeamID
	}
	return p.Caller()
}

type ctxKey struct{}

// With returns ctx carrying p.
func With(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the principal in ctx, or nil.
func From(ctx context.Context) *Principal {
	p, _ := ctx.Value(ctxKey{}).(*Principal)
	return p
}
