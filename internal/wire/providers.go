package wire

import (
	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/openai"
	"github.com/svc-gateway/svc/internal/upstream/cred"
)

// format is how svc talks to the providers of one wire format: the adapter
// (pure translation) and the credentials it signs requests with.
type format struct {
	adapter provider.ChatAdapter
	signer  func(s config.ProviderSettings) cred.Signer
	// needsBase: the format has no default host (Azure): the provider is
	// registered only when <PROVIDER>_API_BASE is set.
	needsBase bool
}

func bearer(config.ProviderSettings) cred.Signer { return cred.Bearer{} }

// formats lists the wire formats this build speaks. A catalog provider whose
// format is missing here is not registered.
var formats = map[string]format{
	"openai": {adapter: openai.New(), signer: bearer},
	// Azure OpenAI: deployment URLs under AZURE_API_BASE, the api-key header.
	"azure": {adapter: openai.NewAzure(), signer: header("api-key"), needsBase: true},
}

func header(name string) func(config.ProviderSettings) cred.Signer {
	return func(config.ProviderSettings) cred.Signer { return cred.Header{Name: name} }
}

// Registry builds the providers from the catalog and the settings: every
// catalog provider whose wire format this build speaks, and an
// OpenAI-compatible provider for any other <NAME>_API_BASE.
func Registry(cfg *config.Config) *provider.Registry {
	var ps []*provider.Provider
	seen := map[string]bool{}
	for _, spec := range provider.Catalog {
		seen[spec.Name] = true
		if p, ok := build(spec, cfg.Providers[spec.Name]); ok {
			ps = append(ps, p)
		}
	}
	for name, s := range cfg.Providers {
		if seen[name] || s.APIBase == "" {
			continue
		}
		if p, ok := build(provider.Spec{Name: name, Format: "openai"}, s); ok {
			ps = append(ps, p)
		}
	}
	return provider.NewRegistry(cfg.DefaultProvider, ps...)
}

func build(spec provider.Spec, s config.ProviderSettings) (*provider.Provider, bool) {
	f, ok := formats[spec.Format]
	if !ok || (f.needsBase && s.APIBase == "") {
		return nil, false
	}
	p := &provider.Provider{
		Name: spec.Name, Adapter: f.adapter, Signer: f.signer(s), BaseURL: spec.BaseURL, KeyOptional: spec.KeyOptional,
		Families: spec.Families, EnvKey: s.APIKey, APIVersion: s.APIVersion,
		Region: s.Region, Project: s.Project, Location: s.Location,
	}
	if s.APIBase != "" {
		p.BaseURL = s.APIBase
	}
	if s.Enabled != nil {
		p.Enabled = *s.Enabled
	}
	return p, true
}
