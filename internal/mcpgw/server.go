package mcpgw

import (
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Transports of an upstream server.
const (
	TransportStreamable = "streamable_http" // the default
	TransportSSE        = "sse"             // the 2024-11-05 HTTP+SSE transport of older servers
	TransportStdio      = "stdio"           // a program run on the gateway host (SVC_MCP_STDIO_ENABLED)
	TransportOpenAPI    = "openapi"         // a server svc hosts itself from an OpenAPI document
)

// Auth types of an upstream server's credential.
const (
	AuthNone   = "none"
	AuthBearer = "bearer" // Authorization: Bearer <auth_token>
	AuthHeader = "header" // <auth_header_name>: <auth_token>
	AuthOAuth  = "oauth"  // tokens obtained by the OAuth flow (mcpgw/oauth)
)

// Guardrail modes: what a compliance finding does to a call.
const (
	ModeStrict = "strict" // a violation blocks the call
	ModeLog    = "log"    // a violation is recorded and the call goes on
)

// Server is one registered MCP server: the spec's tool server registration
// and svc's own fields. AuthToken is write-only: it is sealed at rest and
// never returned (HasAuthToken says whether one is set).
type Server struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	BaseURL     string `json:"base_url,omitempty"`
	Transport   string `json:"transport"`

	// stdio only.
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`

	AuthType       string `json:"auth_type"`
	AuthHeaderName string `json:"auth_header_name,omitempty"`
	AuthToken      string `json:"auth_token,omitempty"`
	HasAuthToken   bool   `json:"has_auth_token"`
	// OAuth client settings when the server offers no dynamic registration.
	OAuthClientID string   `json:"oauth_client_id,omitempty"`
	OAuthScopes   []string `json:"oauth_scopes,omitempty"`

	AllowedTools    []string      `json:"allowed_tools"`
	DisallowedTools []string      `json:"disallowed_tools"`
	AllowedParams   AllowedParams `json:"allowed_params"`
	CostInfo        CostInfo      `json:"cost_info"`
	GuardrailMode   string        `json:"guardrail_mode"`
	// AvailableOnPublicInternet false: only callers whose address is in
	// SVC_MCP_TRUSTED_CIDRS reach the server. Nil (not given) means true.
	AvailableOnPublicInternet *bool `json:"available_on_public_internet"`

	// CacheableTools are cached even without a readOnlyHint; CacheTTLSeconds
	// is the tool-call cache's TTL for this server (0: the default).
	CacheableTools  []string `json:"cacheable_tools"`
	CacheTTLSeconds int      `json:"cache_ttl_seconds,omitempty"`

	// OpenAPI holds the document of a generated server (TransportOpenAPI)
	// and the methods it includes.
	OpenAPI        string   `json:"openapi_spec,omitempty"`
	IncludeMethods []string `json:"include_methods,omitempty"`

	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// CostInfo is what one call costs the caller.
type CostInfo struct {
	PerCallUSD float64 `json:"per_call_usd"`
}

// Public reports whether callers from any address may reach the server.
func (s *Server) Public() bool {
	return s.AvailableOnPublicInternet == nil || *s.AvailableOnPublicInternet
}

// Cacheable reports whether the registration marks tool as cacheable.
func (s *Server) Cacheable(tool string) bool { return slices.Contains(s.CacheableTools, tool) }

// Redacted is a copy fit for an answer: no credential, no environment
// values (a stdio server's env may hold secrets; its names are kept).
func (s *Server) Redacted() *Server {
	c := *s
	c.HasAuthToken = s.HasAuthToken || s.AuthToken != ""
	c.AuthToken = ""
	if len(s.Env) > 0 {
		c.Env = make(map[string]string, len(s.Env))
		for k := range s.Env {
			c.Env[k] = "********"
		}
	}
	return &c
}

// Limits on a registration's fields.
const (
	MaxIDLen       = 64
	MaxNameLen     = 200
	MaxURLLen      = 2048
	MaxListLen     = 1000 // tools in one list, args, env entries
	MaxPatternLen  = 512
	MaxCostPerCall = 1000.0 // USD
	MaxCacheTTL    = 7 * 24 * 3600
	MaxSpecBytes   = 2 << 20
)

var (
	idPattern     = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)
	headerPattern = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
)

// ValidationError names the field of a registration that is wrong; the
// HTTP surface answers 400 with Field as the error's param.
type ValidationError struct {
	Field   string
	Message string
}

func (e *ValidationError) Error() string { return e.Field + ": " + e.Message }

func invalid(field, format string, a ...any) error {
	return &ValidationError{Field: field, Message: fmt.Sprintf(format, a...)}
}

// ValidateOptions are the deployment's settings that bear on a registration.
type ValidateOptions struct {
	StdioEnabled bool // SVC_MCP_STDIO_ENABLED
}

// Normalize fills defaults: transport, auth type, guardrail mode, empty
// lists. Call it before Validate.
func (s *Server) Normalize() {
	if s.Transport == "" {
		s.Transport = TransportStreamable
	}
	if s.AuthType == "" {
		s.AuthType = AuthNone
	}
	if s.GuardrailMode == "" {
		s.GuardrailMode = ModeStrict
	}
	s.Transport = strings.ToLower(s.Transport)
	s.AuthType = strings.ToLower(s.AuthType)
	s.GuardrailMode = strings.ToLower(s.GuardrailMode)
	if s.Name == "" {
		s.Name = s.ID
	}
}

// Validate checks a normalised registration's syntax: the id, the
// transport and what it needs, the credential's shape, the lists and
// patterns, the numbers. Whether base_url's host resolves to an address
// svc may reach is the egress check's (at registration and at connect).
func (s *Server) Validate(o ValidateOptions) error {
	if err := validateID(s.ID); err != nil {
		return err
	}
	if len(s.Name) > MaxNameLen || len(s.Description) > 4*MaxNameLen {
		return invalid("name", "at most %d characters", MaxNameLen)
	}
	if err := s.validateTransport(o); err != nil {
		return err
	}
	if err := s.validateAuth(); err != nil {
		return err
	}
	if err := s.validateLists(); err != nil {
		return err
	}
	if s.GuardrailMode != ModeStrict && s.GuardrailMode != ModeLog {
		return invalid("guardrail_mode", "must be %q or %q", ModeStrict, ModeLog)
	}
	if c := s.CostInfo.PerCallUSD; c < 0 || c > MaxCostPerCall || c != c {
		return invalid("cost_info.per_call_usd", "must be between 0 and %g", MaxCostPerCall)
	}
	if s.CacheTTLSeconds < 0 || s.CacheTTLSeconds > MaxCacheTTL {
		return invalid("cache_ttl_seconds", "must be between 0 and %d", MaxCacheTTL)
	}
	return nil
}

func validateID(id string) error {
	switch {
	case id == "":
		return invalid("id", "is required")
	case len(id) > MaxIDLen || !idPattern.MatchString(id):
		return invalid("id", "must be 1–%d letters, digits, '_', '.' or '-', starting with a letter or digit", MaxIDLen)
	case strings.Contains(id, "__"):
		return invalid("id", "must not contain \"__\" (it separates server and tool in the aggregate endpoint)")
	}
	return nil
}

func (s *Server) validateTransport(o ValidateOptions) error {
	switch s.Transport {
	case TransportStreamable, TransportSSE:
		return validateBaseURL(s.BaseURL)
	case TransportStdio:
		if !o.StdioEnabled {
			return invalid("transport", "stdio servers run a program on the gateway host and are off: set SVC_MCP_STDIO_ENABLED=true to allow them")
		}
		if s.Command == "" || len(s.Command) > MaxURLLen {
			return invalid("command", "is required for a stdio server")
		}
		if len(s.Args) > MaxListLen || len(s.Env) > MaxListLen {
			return invalid("args", "at most %d entries", MaxListLen)
		}
		return nil
	case TransportOpenAPI:
		if s.OpenAPI == "" || len(s.OpenAPI) > MaxSpecBytes {
			return invalid("openapi_spec", "a generated server needs its OpenAPI document (at most %d bytes)", MaxSpecBytes)
		}
		return validateBaseURL(s.BaseURL)
	}
	return invalid("transport", "must be %q, %q or %q", TransportStreamable, TransportSSE, TransportStdio)
}

func validateBaseURL(raw string) error {
	if raw == "" {
		return invalid("base_url", "is required")
	}
	if len(raw) > MaxURLLen {
		return invalid("base_url", "at most %d characters", MaxURLLen)
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return invalid("base_url", "must be an absolute http or https URL")
	}
	if u.User != nil {
		return invalid("base_url", "must not carry credentials; use auth_type and auth_token")
	}
	return nil
}

func (s *Server) validateAuth() error {
	switch s.AuthType {
	case AuthNone, AuthOAuth:
	case AuthBearer:
	case AuthHeader:
		if !headerPattern.MatchString(s.AuthHeaderName) || len(s.AuthHeaderName) > 128 {
			return invalid("auth_header_name", "a valid header name is required with auth_type \"header\"")
		}
	default:
		return invalid("auth_type", "must be none, bearer, header or oauth")
	}
	if len(s.AuthToken) > 16<<10 || strings.ContainsAny(s.AuthToken, "\r\n\x00") {
		return invalid("auth_token", "must be one line of at most 16 KiB")
	}
	return nil
}

func (s *Server) validateLists() error {
	lists := map[string][]string{
		"allowed_tools": s.AllowedTools, "disallowed_tools": s.DisallowedTools,
		"cacheable_tools": s.CacheableTools, "oauth_scopes": s.OAuthScopes,
	}
	for field, l := range lists {
		if len(l) > MaxListLen {
			return invalid(field, "at most %d entries", MaxListLen)
		}
		for _, v := range l {
			if v == "" || len(v) > MaxNameLen {
				return invalid(field, "entries must be 1–%d characters", MaxNameLen)
			}
		}
	}
	if len(s.AllowedParams) > MaxListLen {
		return invalid("allowed_params", "at most %d tools", MaxListLen)
	}
	for tool, params := range s.AllowedParams {
		if err := params.compile(); err != nil {
			return invalid("allowed_params."+tool, "%v", err)
		}
	}
	return nil
}

// MarshalJSON of a Server never writes its credential.
func (s Server) MarshalJSON() ([]byte, error) {
	type plain Server
	c := plain(*s.Redacted())
	return json.Marshal(c)
}
