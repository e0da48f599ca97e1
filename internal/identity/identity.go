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

// Principal is an authenticated caller with the limits that apply to it.
type Principal struct {
	Kind      Kind
	ID        string // virtual key id, user id, device id
	Name      string // alias or display name
	TeamID    string
	MaskedKey string // display prefix of the credential, never the secret
	// Models, when non-empty, is the allow-list of models the caller may use.
	Models       []string
	RPMLimit     int
	TPMLimit     int
	BudgetPeriod string
	MaxBudgetUSD float64
	PolicySet    string
}

// Tenant is the principal's isolation scope: its team, or itself.
func (p *Principal) Tenant() string {
	if p.TeamID != "" {
		return "team:" + p.TeamID
	}
	return p.Kind.String() + ":" + p.ID
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
