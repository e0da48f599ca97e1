// Package identity defines the Principal — who is calling — and its context
// accessors. It is a leaf package: anyone may import it and it imports nothing
// of svc.
package identity

import "context"

// Kind is the kind of credential a principal presented.
type Kind uint8

// Kinds of principal.
const (
	Anonymous  Kind = iota
	VirtualKey      // an sk-svc- key
	Admin           // the ADMIN_API_KEY
	User            // an SSO user (internal JWT)
	Device          // a fleet device
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
