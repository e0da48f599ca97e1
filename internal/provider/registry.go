package provider

import (
	"sort"
	"strings"

	"github.com/svc-gateway/svc/internal/upstream/cred"
)

// Provider is one configured provider.
type Provider struct {
	Name       string
	Adapter    ChatAdapter
	BaseURL    string
	APIVersion string
	Region     string
	Project    string
	Location   string
	Signer     cred.Signer
	// EnvKey is the key from <PROVIDER>_API_KEY; a key stored through the
	// management API wins over it.
	EnvKey string
	// KeyOptional is true for local servers that need no key (Ollama, vLLM).
	KeyOptional bool
	// Enabled is the <PROVIDER>_ENABLED flag (intelligent routing).
	Enabled bool
	// Families are model-name prefixes that select this provider without a
	// <provider>/ prefix (primary providers only).
	Families []string
	// Models are known model names, for GET /v1/models.
	Models []string
	// Responses: the provider serves OpenAI's Responses API itself (an
	// OpenAI-format provider only); svc translates it to chat for the others.
	Responses bool
}

// Registry holds the configured providers.
type Registry struct {
	byName map[string]*Provider
	names  []string
	deflt  string
}

// NewRegistry builds a registry; defaultProvider is used when a model names
// no provider and matches no family.
func NewRegistry(defaultProvider string, ps ...*Provider) *Registry {
	r := &Registry{byName: map[string]*Provider{}, deflt: defaultProvider}
	for _, p := range ps {
		r.byName[p.Name] = p
		r.names = append(r.names, p.Name)
	}
	sort.Strings(r.names)
	return r
}

// Lookup returns the provider named name.
func (r *Registry) Lookup(name string) (*Provider, bool) {
	p, ok := r.byName[name]
	return p, ok
}

// Default is the default provider's name.
func (r *Registry) Default() string { return r.deflt }

// Names lists the providers, sorted.
func (r *Registry) Names() []string { return r.names }

// Deployment is where a call of p for model goes.
func (p *Provider) Deployment(model string) Deployment {
	return Deployment{Provider: p.Name, Model: model, BaseURL: p.BaseURL, APIVersion: p.APIVersion,
		Region: p.Region, Project: p.Project, Location: p.Location}
}

// ByFamily returns the provider whose family prefix matches model (the
// longest prefix wins).
func (r *Registry) ByFamily(model string) (*Provider, bool) {
	var best *Provider
	bestLen := 0
	m := strings.ToLower(model)
	for _, n := range r.names {
		p := r.byName[n]
		for _, f := range p.Families {
			if len(f) > bestLen && strings.HasPrefix(m, f) {
				best, bestLen = p, len(f)
			}
		}
	}
	return best, best != nil
}
