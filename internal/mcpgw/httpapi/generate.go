package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/mcpgw"
)

// Generator turns an OpenAPI document into the tools of a hosted server
// (the wiring's adapter over mcpgw/openapi). Its errors for a bad document
// are *apierr.Error values naming the problem (400).
type Generator interface {
	Tools(spec []byte, includeMethods []string) ([]*mcp.Tool, error)
}

// generateRequest is the body of POST /api/mcp/generate: the spec's fields
// and the registration fields a generated server may set at creation (the
// rest through PUT /api/mcp/servers/{id}).
type generateRequest struct {
	Spec           json.RawMessage     `json:"spec"` // a JSON object, or JSON or YAML text in a string
	ServerID       string              `json:"server_id"`
	ServerName     string              `json:"server_name"`
	Description    string              `json:"description"`
	BaseURL        string              `json:"base_url"`
	IncludeMethods []string            `json:"include_methods"`
	AuthType       string              `json:"auth_type"`
	AuthToken      string              `json:"auth_token"`
	AuthHeaderName string              `json:"auth_header_name"`
	AllowedTools   []string            `json:"allowed_tools"`
	AllowedParams  mcpgw.AllowedParams `json:"allowed_params"`
	CostInfo       mcpgw.CostInfo      `json:"cost_info"`
	GuardrailMode  string              `json:"guardrail_mode"`
	Public         *bool               `json:"available_on_public_internet"`
}

// toolSummary is one generated tool in the answer.
type toolSummary struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	ReadOnly    bool   `json:"read_only"`
}

// generate serves POST /api/mcp/generate: the document is checked and its
// tools built before anything is stored, so a bad document registers
// nothing; then the server is registered like any other (transport
// "openapi") and answered with its tools.
func (a *Admin) generate(w http.ResponseWriter, r *http.Request) {
	if a.Generator == nil {
		apierr.Write(w, apierr.New(apierr.NotFound, "generate_unavailable", "OpenAPI generation is not configured"))
		return
	}
	var req generateRequest
	if err := jsonbody.Read(r, maxRegistrationBytes, &req, true); err != nil {
		apierr.Write(w, err)
		return
	}
	spec, err := specText(req.Spec)
	if err != nil {
		apierr.Write(w, err)
		return
	}
	tools, err := a.Generator.Tools(spec, req.IncludeMethods)
	if err != nil {
		apierr.Write(w, apierr.From(err))
		return
	}
	out, err := a.Registrations.Create(r.Context(), req.server(spec))
	if err != nil {
		apierr.Write(w, registryError(err))
		return
	}
	a.stored(r, EventServerGenerate, out)
	sums := make([]toolSummary, 0, len(tools))
	for _, t := range tools {
		sums = append(sums, toolSummary{Name: t.Name, Description: t.Description,
			ReadOnly: t.Annotations != nil && t.Annotations.ReadOnlyHint})
	}
	_ = jsonbody.Write(w, http.StatusCreated, map[string]any{"server": out.Redacted(), "tools": sums})
}

// specText is the document's bytes: an object as it came, a string's text.
func specText(raw json.RawMessage) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
		return nil, apierr.BadParam("spec", "spec is required: the OpenAPI document as a JSON object or as JSON or YAML text")
	case raw[0] == '{':
		return raw, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || s == "" {
			return nil, apierr.BadParam("spec", "spec must be a non-empty string or an object")
		}
		return []byte(s), nil
	}
	return nil, apierr.BadParam("spec", "spec must be the OpenAPI document as a JSON object or as JSON or YAML text")
}

// server is the registration the request describes.
func (g generateRequest) server(spec []byte) mcpgw.Server {
	return mcpgw.Server{
		ID: g.ServerID, Name: g.ServerName, Description: g.Description, BaseURL: g.BaseURL,
		Transport: mcpgw.TransportOpenAPI, OpenAPI: string(spec), IncludeMethods: g.IncludeMethods,
		AuthType: g.AuthType, AuthToken: g.AuthToken, AuthHeaderName: g.AuthHeaderName,
		AllowedTools: g.AllowedTools, AllowedParams: g.AllowedParams, CostInfo: g.CostInfo,
		GuardrailMode: g.GuardrailMode, AvailableOnPublicInternet: g.Public,
	}
}
