package wire

import (
	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/egress"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/anthropic"
	"github.com/svc-gateway/svc/internal/provider/bedrock"
	"github.com/svc-gateway/svc/internal/provider/cohere"
	"github.com/svc-gateway/svc/internal/provider/gemini"
	"github.com/svc-gateway/svc/internal/provider/openai"
	"github.com/svc-gateway/svc/internal/upstream/cred"
)

// format is how svc talks to the providers of one wire format: the adapter
// (pure translation) and the credentials it signs requests with.
type format struct {
	adapter provider.ChatAdapter
	// auth returns the signer, and whether the provider needs no key from
	// the vault (the signer holds its own credentials).
	auth func(cfg *config.Config, s config.ProviderSettings) (signer cred.Signer, keyOptional bool)
	// needsBase: the format has no default host (Azure): the provider is
	// registered only when <PROVIDER>_API_BASE is set.
	needsBase bool
}

func bearer(*config.Config, config.ProviderSettings) (cred.Signer, bool) { return cred.Bearer{}, false }

func header(name string) func(*config.Config, config.ProviderSettings) (cred.Signer, bool) {
	return func(*config.Config, config.ProviderSettings) (cred.Signer, bool) {
		return cred.Header{Name: name}, false
	}
}

// bedrockAuth signs with BEDROCK_API_KEY as a bearer token when one is set or
// stored; else with SigV4 and the standard AWS credentials.
func bedrockAuth(cfg *config.Config, s config.ProviderSettings) (cred.Signer, bool) {
	if s.APIKey != "" || cfg.AWS.AccessKeyID == "" {
		return cred.Bearer{}, false
	}
	region := s.Region
	if region == "" {
		region = cfg.AWS.Region
	}
	return cred.NewSigV4(cred.SigV4Credentials{
		AccessKeyID: cfg.AWS.AccessKeyID, SecretAccessKey: cfg.AWS.SecretAccessKey, SessionToken: cfg.AWS.SessionToken,
	}, region, "bedrock"), true
}

// vertexAuth exchanges the service account in VERTEX_API_KEY (its JSON, or a
// path to it; stored through the management API like any key) for tokens.
// The key names its own token endpoint (token_uri): the request goes
// through the egress policy (private addresses allowed, as for providers;
// the clouds' metadata endpoints refused at connect time; no redirects), so
// a stored key cannot point svc's signed assertion at the host's metadata.
func vertexAuth(*config.Config, config.ProviderSettings) (cred.Signer, bool) {
	return cred.NewGoogleKeySigner(cred.WithGoogleTokenClient(egress.Policy{AllowPrivate: true}.Client(0))), false
}

// formats lists the wire formats this build speaks. A catalog provider whose
// format is missing here is not registered.
var formats = map[string]format{
	"openai":    {adapter: openai.New(), auth: bearer},
	"azure":     {adapter: openai.NewAzure(), auth: header("api-key"), needsBase: true},
	"anthropic": {adapter: anthropic.New(), auth: header("x-api-key")},
	"gemini":    {adapter: gemini.New(), auth: header("x-goog-api-key")},
	"vertex":    {adapter: gemini.NewVertex(), auth: vertexAuth},
	"bedrock":   {adapter: bedrock.New(), auth: bedrockAuth},
	"cohere":    {adapter: cohere.New(), auth: bearer},
}

// Registry builds the providers from the catalog and the settings: every
// catalog provider whose wire format this build speaks, and an
// OpenAI-compatible provider for any other <NAME>_API_BASE.
func Registry(cfg *config.Config) *provider.Registry {
	var ps []*provider.Provider
	seen := map[string]bool{}
	for _, spec := range provider.Catalog {
		seen[spec.Name] = true
		if p, ok := build(cfg, spec, cfg.Providers[spec.Name]); ok {
			ps = append(ps, p)
		}
	}
	for name, s := range cfg.Providers {
		if seen[name] || s.APIBase == "" {
			continue
		}
		if p, ok := build(cfg, provider.Spec{Name: name, Format: "openai"}, s); ok {
			ps = append(ps, p)
		}
	}
	return provider.NewRegistry(cfg.DefaultProvider, ps...)
}

func build(cfg *config.Config, spec provider.Spec, s config.ProviderSettings) (*provider.Provider, bool) {
	f, ok := formats[spec.Format]
	if !ok || (f.needsBase && s.APIBase == "") {
		return nil, false
	}
	signer, keyOptional := f.auth(cfg, s)
	p := &provider.Provider{
		Name: spec.Name, Adapter: f.adapter, Signer: signer, BaseURL: spec.BaseURL,
		KeyOptional: spec.KeyOptional || keyOptional,
		Families:    spec.Families, EnvKey: s.APIKey, APIVersion: s.APIVersion,
		Region: s.Region, Project: s.Project, Location: s.Location,
	}
	if p.Region == "" && spec.Format == "bedrock" {
		p.Region = cfg.AWS.Region
	}
	if s.APIBase != "" {
		p.BaseURL = s.APIBase
	}
	if s.Enabled != nil {
		p.Enabled = *s.Enabled
	}
	p.Responses = spec.Responses
	if s.ResponsesAPI != nil {
		p.Responses = *s.ResponsesAPI
	}
	return p, true
}
