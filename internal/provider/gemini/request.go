// Package gemini is the adapter for Google's generateContent wire format, as
// the Gemini API (generativelanguage.googleapis.com, New) and Vertex AI
// (aiplatform.googleapis.com, NewVertex) speak it. It owns the translation of
// OpenAI chat completions to GenerateContentRequest and of
// GenerateContentResponse (whole or streamed as server-sent events with
// alt=sse) and Google error bodies back to OpenAI shapes. It never does I/O
// and never sees credentials: the Gemini API key (x-goog-api-key) and Vertex
// AI's OAuth token are applied by upstream/cred.
//
// Imported by wire (to register it) and tests only. It imports, of svc, only
// llm, llm/sse, apierr and provider, as every adapter (archtest enforces it).
package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
)

// DefaultBaseURL is the Gemini API's host root, used when Deployment.BaseURL is empty.
const DefaultBaseURL = "https://generativelanguage.googleapis.com"

// Adapter speaks generateContent, for the Gemini API or for Vertex AI.
type Adapter struct {
	vertex bool
}

// New returns the adapter for the Gemini API:
// POST {base}/v1beta/models/{model}:generateContent, base being the host root.
func New() *Adapter { return &Adapter{} }

// NewVertex returns the adapter for Vertex AI:
// POST https://{location}-aiplatform.googleapis.com/v1/projects/{project}/locations/{location}/publishers/google/models/{model}:generateContent,
// from Deployment.Project and Deployment.Location. A Deployment.BaseURL replaces the
// https://{location}-aiplatform.googleapis.com part.
func NewVertex() *Adapter { return &Adapter{vertex: true} }

// NewChatRequest builds the generateContent (or, for a stream,
// streamGenerateContent?alt=sse) request.
func (a *Adapter) NewChatRequest(ctx context.Context, t provider.Deployment, c provider.ChatCall) (*http.Request, error) {
	body, err := BuildRequest(c.Req)
	if err != nil {
		return nil, err
	}
	method := "generateContent"
	if c.Req.Stream {
		method = "streamGenerateContent?alt=sse"
	}
	u, err := a.modelURL(t, method)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Req.Stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	return req, nil
}

// modelURL is the URL of method (with its query) on the deployment's model.
func (a *Adapter) modelURL(t provider.Deployment, method string) (string, error) {
	model := strings.TrimPrefix(t.Model, "models/")
	if model == "" {
		return "", apierr.BadParam("model", "you must provide a model parameter")
	}
	model = url.PathEscape(model)
	if !a.vertex {
		return strings.TrimRight(orDefault(t.BaseURL, DefaultBaseURL), "/") + "/v1beta/models/" + model + ":" + method, nil
	}
	base, err := vertexBase(t)
	if err != nil {
		return "", err
	}
	return base + "/v1/projects/" + url.PathEscape(t.Project) + "/locations/" + url.PathEscape(t.Location) +
		"/publishers/google/models/" + model + ":" + method, nil
}

// vertexBase is Vertex AI's scheme and host for t: the regional endpoint, the
// global one for location "global", or t.BaseURL.
func vertexBase(t provider.Deployment) (string, error) {
	var missing []string
	if t.Project == "" {
		missing = append(missing, "VERTEX_PROJECT")
	}
	if t.Location == "" {
		missing = append(missing, "VERTEX_LOCATION")
	}
	if len(missing) > 0 {
		return "", apierr.Newf(apierr.Unavailable, "provider_not_configured",
			"the Vertex AI provider is not configured: set %s", strings.Join(missing, " and "))
	}
	if t.BaseURL != "" {
		return strings.TrimRight(t.BaseURL, "/"), nil
	}
	for _, r := range t.Location {
		if (r < 'a' || r > 'z') && (r < '0' || r > '9') && r != '-' {
			return "", apierr.Newf(apierr.Unavailable, "provider_not_configured",
				"the Vertex AI provider is misconfigured: VERTEX_LOCATION %q is not a region name", t.Location)
		}
	}
	if t.Location == "global" {
		return "https://aiplatform.googleapis.com", nil
	}
	return "https://" + t.Location + "-aiplatform.googleapis.com", nil
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

// The GenerateContentRequest, as much of it as svc writes.
type (
	genRequest struct {
		Contents          []content         `json:"contents"`
		SystemInstruction *content          `json:"systemInstruction,omitempty"`
		Tools             []tool            `json:"tools,omitempty"`
		ToolConfig        *toolConfig       `json:"toolConfig,omitempty"`
		GenerationConfig  *generationConfig `json:"generationConfig,omitempty"`
	}
	content struct {
		Role  string `json:"role,omitempty"`
		Parts []part `json:"parts"`
	}
	part struct {
		Text             string            `json:"text,omitempty"`
		Thought          bool              `json:"thought,omitempty"`
		InlineData       *blob             `json:"inlineData,omitempty"`
		FileData         *fileData         `json:"fileData,omitempty"`
		FunctionCall     *functionCall     `json:"functionCall,omitempty"`
		FunctionResponse *functionResponse `json:"functionResponse,omitempty"`
		ThoughtSignature string            `json:"thoughtSignature,omitempty"`
	}
	blob struct {
		MIMEType string `json:"mimeType"`
		Data     string `json:"data"`
	}
	fileData struct {
		MIMEType string `json:"mimeType,omitempty"`
		FileURI  string `json:"fileUri"`
	}
	functionCall struct {
		ID   string          `json:"id,omitempty"`
		Name string          `json:"name"`
		Args json.RawMessage `json:"args,omitempty"`
	}
	functionResponse struct {
		Name     string          `json:"name"`
		Response json.RawMessage `json:"response"`
	}
	tool struct {
		FunctionDeclarations []functionDeclaration `json:"functionDeclarations"`
	}
	functionDeclaration struct {
		Name        string          `json:"name"`
		Description string          `json:"description,omitempty"`
		Parameters  json.RawMessage `json:"parameters,omitempty"`
	}
	toolConfig struct {
		FunctionCallingConfig functionCallingConfig `json:"functionCallingConfig"`
	}
	functionCallingConfig struct {
		Mode                 string   `json:"mode"`
		AllowedFunctionNames []string `json:"allowedFunctionNames,omitempty"`
	}
	generationConfig struct {
		Temperature      *float64        `json:"temperature,omitempty"`
		TopP             *float64        `json:"topP,omitempty"`
		MaxOutputTokens  *int            `json:"maxOutputTokens,omitempty"`
		StopSequences    []string        `json:"stopSequences,omitempty"`
		CandidateCount   *int            `json:"candidateCount,omitempty"`
		Seed             *int64          `json:"seed,omitempty"`
		PresencePenalty  *float64        `json:"presencePenalty,omitempty"`
		FrequencyPenalty *float64        `json:"frequencyPenalty,omitempty"`
		ResponseMIMEType string          `json:"responseMimeType,omitempty"`
		ResponseSchema   json.RawMessage `json:"responseSchema,omitempty"`
		ThinkingConfig   *thinkingConfig `json:"thinkingConfig,omitempty"`
	}
	thinkingConfig struct {
		ThinkingBudget int `json:"thinkingBudget"`
	}
)

// BuildRequest translates an OpenAI chat request to a GenerateContentRequest
// body. Errors are InvalidRequest naming the offending parameter.
func BuildRequest(r *llm.ChatRequest) ([]byte, error) {
	var g genRequest
	if err := translateMessages(r.Messages, &g); err != nil {
		return nil, err
	}
	if err := translateTools(r, &g); err != nil {
		return nil, err
	}
	gc, err := translateConfig(r)
	if err != nil {
		return nil, err
	}
	g.GenerationConfig = gc
	if g.Contents == nil {
		g.Contents = []content{}
	}
	out, err := json.Marshal(&g)
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "encode_failed", "could not encode the provider request", err)
	}
	return out, nil
}

// translateMessages fills contents and systemInstruction. System and
// developer messages, wherever they are, become systemInstruction; tool
// results become functionResponse parts of a user turn; consecutive turns of
// one role are merged, as Gemini wants user and model turns to alternate.
func translateMessages(msgs []llm.Message, g *genRequest) error {
	toolNames := map[string]string{} // tool call id → function name
	var sys []part
	add := func(role string, parts []part) {
		if len(parts) == 0 {
			return
		}
		if n := len(g.Contents); n > 0 && g.Contents[n-1].Role == role {
			g.Contents[n-1].Parts = append(g.Contents[n-1].Parts, parts...)
			return
		}
		g.Contents = append(g.Contents, content{Role: role, Parts: parts})
	}
	for i, m := range msgs {
		param := fmt.Sprintf("messages[%d]", i)
		switch m.Role {
		case "system", "developer":
			if t := m.Content.String(); t != "" {
				sys = append(sys, part{Text: t})
			}
		case "user":
			parts, err := contentParts(m.Content, param+".content")
			if err != nil {
				return err
			}
			add("user", parts)
		case "assistant":
			parts, err := contentParts(m.Content, param+".content")
			if err != nil {
				return err
			}
			for j, tc := range m.ToolCalls {
				p := fmt.Sprintf("%s.tool_calls[%d].function", param, j)
				if tc.Function.Name == "" {
					return apierr.BadParam(p+".name", "%s.name must be set", p)
				}
				args, err := objectJSON(tc.Function.Arguments)
				if err != nil {
					return apierr.BadParam(p+".arguments", "%s.arguments must be a JSON object: %v", p, err)
				}
				if tc.ID != "" {
					toolNames[tc.ID] = tc.Function.Name
				}
				_, sig := splitCallID(tc.ID)
				parts = append(parts, part{FunctionCall: &functionCall{Name: tc.Function.Name, Args: args}, ThoughtSignature: sig})
			}
			add("model", parts)
		case "tool", "function":
			name := m.Name
			if m.Role == "tool" {
				name = toolNames[m.ToolCallID]
				if name == "" {
					return apierr.BadParam(param+".tool_call_id", "%s.tool_call_id %q does not match a tool call of an earlier assistant message", param, m.ToolCallID)
				}
			} else if name == "" {
				return apierr.BadParam(param+".name", "%s.name must be set", param)
			}
			add("user", []part{{FunctionResponse: &functionResponse{Name: name, Response: toolResponse(m.Content.String())}}})
		default:
			return apierr.BadParam(param+".role", "%s.role %q is not supported", param, m.Role)
		}
	}
	if len(sys) > 0 {
		g.SystemInstruction = &content{Parts: sys}
	}
	return nil
}

// objectJSON returns the compact form of a JSON object given as text ("" is
// the empty object).
func objectJSON(s string) (json.RawMessage, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return json.RawMessage("{}"), nil
	}
	if !strings.HasPrefix(s, "{") {
		return nil, fmt.Errorf("not an object")
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, []byte(s)); err != nil {
		return nil, fmt.Errorf("invalid JSON")
	}
	return buf.Bytes(), nil
}

// toolResponse is a tool's result as functionResponse.response: the content
// itself when it is a JSON object, else {"content": text}.
func toolResponse(text string) json.RawMessage {
	if obj, err := objectJSON(text); err == nil && strings.TrimSpace(text) != "" {
		return obj
	}
	b, _ := json.Marshal(map[string]string{"content": text})
	return b
}

// contentParts translates a user or assistant message's content.
func contentParts(c llm.Content, param string) ([]part, error) {
	if !c.IsParts {
		if c.Text == "" {
			return nil, nil
		}
		return []part{{Text: c.Text}}, nil
	}
	out := make([]part, 0, len(c.Parts))
	for i, p := range c.Parts {
		pp := fmt.Sprintf("%s[%d]", param, i)
		switch p.Type {
		case "text":
			if p.Text != "" {
				out = append(out, part{Text: p.Text})
			}
		case "refusal":
			if p.Refusal != "" {
				out = append(out, part{Text: p.Refusal})
			}
		case "image_url":
			if p.ImageURL == nil || p.ImageURL.URL == "" {
				return nil, apierr.BadParam(pp+".image_url.url", "%s.image_url.url must be set", pp)
			}
			q, err := mediaPart(p.ImageURL.URL, "", pp+".image_url.url")
			if err != nil {
				return nil, err
			}
			out = append(out, q)
		case "input_audio":
			if p.InputAudio == nil || p.InputAudio.Data == "" {
				return nil, apierr.BadParam(pp+".input_audio.data", "%s.input_audio.data must be set", pp)
			}
			if strings.HasPrefix(p.InputAudio.Data, "data:") {
				q, err := mediaPart(p.InputAudio.Data, "", pp+".input_audio.data")
				if err != nil {
					return nil, err
				}
				out = append(out, q)
				continue
			}
			out = append(out, part{InlineData: &blob{MIMEType: "audio/" + orDefault(p.InputAudio.Format, "wav"), Data: p.InputAudio.Data}})
		case "file":
			switch {
			case p.File == nil:
				return nil, apierr.BadParam(pp+".file", "%s.file must be set", pp)
			case p.File.FileData != "":
				q, err := mediaPart(p.File.FileData, mimeOf(p.File.Filename, ""), pp+".file.file_data")
				if err != nil {
					return nil, err
				}
				out = append(out, q)
			case isRemote(p.File.FileID):
				out = append(out, part{FileData: &fileData{MIMEType: mimeOf(p.File.Filename, mimeOf(p.File.FileID, "application/pdf")), FileURI: p.File.FileID}})
			default:
				return nil, apierr.BadParam(pp+".file.file_id", "%s: this provider takes files as data URIs (file_data) or https/gs:// URIs (file_id)", pp)
			}
		default:
			return nil, apierr.BadParam(pp+".type", "%s.type %q is not supported by this provider", pp, p.Type)
		}
	}
	return out, nil
}

func isRemote(u string) bool {
	return strings.HasPrefix(u, "https://") || strings.HasPrefix(u, "gs://")
}

// mediaPart is inlineData for a base64 data URI, fileData for an https or
// gs:// URI. fallback is the MIME type of a URI whose extension says none.
func mediaPart(u, fallback, param string) (part, error) {
	if rest, ok := strings.CutPrefix(u, "data:"); ok {
		meta, data, ok := strings.Cut(rest, ",")
		mime, isB64 := strings.CutSuffix(meta, ";base64")
		if !ok || !isB64 || data == "" {
			return part{}, apierr.BadParam(param, "%s must be a base64 data URI (data:<type>;base64,<data>) or an https/gs:// URL", param)
		}
		if i := strings.IndexByte(mime, ';'); i >= 0 { // parameters such as charset
			mime = mime[:i]
		}
		return part{InlineData: &blob{MIMEType: orDefault(orDefault(mime, fallback), "application/octet-stream"), Data: data}}, nil
	}
	if !isRemote(u) {
		return part{}, apierr.BadParam(param, "%s must be a base64 data URI or an https/gs:// URL", param)
	}
	return part{FileData: &fileData{MIMEType: mimeOf(u, orDefault(fallback, "image/jpeg")), FileURI: u}}, nil
}

// mimeTypes are the MIME types Gemini accepts, by file extension.
var mimeTypes = map[string]string{
	".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp",
	".gif": "image/gif", ".heic": "image/heic", ".heif": "image/heif",
	".pdf": "application/pdf", ".txt": "text/plain", ".html": "text/html", ".csv": "text/csv",
	".md": "text/md", ".xml": "text/xml", ".json": "application/json",
	".wav": "audio/wav", ".mp3": "audio/mp3", ".aac": "audio/aac", ".ogg": "audio/ogg",
	".flac": "audio/flac", ".aiff": "audio/aiff",
	".mp4": "video/mp4", ".mpeg": "video/mpeg", ".mov": "video/mov", ".avi": "video/avi",
	".webm": "video/webm", ".wmv": "video/wmv", ".flv": "video/x-flv", ".3gp": "video/3gpp",
}

// mimeOf is the MIME type a name's extension says, or fallback.
func mimeOf(name, fallback string) string {
	if i := strings.IndexAny(name, "?#"); i >= 0 {
		name = name[:i]
	}
	if m, ok := mimeTypes[strings.ToLower(path.Ext(name))]; ok {
		return m
	}
	return fallback
}

// translateTools fills tools and toolConfig.
func translateTools(r *llm.ChatRequest, g *genRequest) error {
	if len(r.Tools) > 0 {
		decls := make([]functionDeclaration, 0, len(r.Tools))
		for i, t := range r.Tools {
			p := fmt.Sprintf("tools[%d]", i)
			if t.Type != "" && t.Type != "function" {
				return apierr.BadParam(p+".type", "%s.type %q is not supported by this provider", p, t.Type)
			}
			if t.Function.Name == "" {
				return apierr.BadParam(p+".function.name", "%s.function.name must be set", p)
			}
			d := functionDeclaration{Name: t.Function.Name, Description: t.Function.Description}
			if len(t.Function.Parameters) > 0 && !bytes.Equal(bytes.TrimSpace(t.Function.Parameters), []byte("null")) {
				s, err := CleanSchema(t.Function.Parameters)
				if err != nil {
					return apierr.BadParam(p+".function.parameters", "%s.function.parameters must be a JSON schema object", p)
				}
				if !emptyObjectSchema(s) {
					d.Parameters = s
				}
			}
			decls = append(decls, d)
		}
		g.Tools = []tool{{FunctionDeclarations: decls}}
	}
	tc := bytes.TrimSpace(r.ToolChoice)
	if len(tc) == 0 || bytes.Equal(tc, []byte("null")) {
		return nil
	}
	bad := apierr.BadParam("tool_choice", `tool_choice must be "auto", "none", "required" or {"type":"function","function":{"name":...}}`)
	var cfg functionCallingConfig
	if tc[0] == '"' {
		var s string
		if json.Unmarshal(tc, &s) != nil {
			return bad
		}
		switch s {
		case "auto":
			cfg.Mode = "AUTO"
		case "none":
			cfg.Mode = "NONE"
		case "required", "any":
			cfg.Mode = "ANY"
		default:
			return bad
		}
	} else {
		var o struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if json.Unmarshal(tc, &o) != nil || o.Function.Name == "" {
			return bad
		}
		cfg = functionCallingConfig{Mode: "ANY", AllowedFunctionNames: []string{o.Function.Name}}
	}
	g.ToolConfig = &toolConfig{FunctionCallingConfig: cfg}
	return nil
}

// thinkingBudgets maps reasoning_effort to Gemini's thinkingBudget (tokens):
// "none" turns thinking off (0; models that cannot turn it off reject it),
// "minimal" 512, "low" 1024, "medium" 8192 and "high" 24576, the largest
// budget every thinking Gemini 2.5 model accepts.
var thinkingBudgets = map[string]int{"none": 0, "minimal": 512, "low": 1024, "medium": 8192, "high": 24576}

// translateConfig builds generationConfig (nil when nothing is set).
func translateConfig(r *llm.ChatRequest) (*generationConfig, error) {
	gc := generationConfig{
		Temperature: r.Temperature, TopP: r.TopP, CandidateCount: r.N, Seed: r.Seed,
		PresencePenalty: r.PresencePenalty, FrequencyPenalty: r.FrequencyPenalty,
		StopSequences: r.Stop, MaxOutputTokens: r.MaxTokens,
	}
	if r.MaxCompletionTokens != nil {
		gc.MaxOutputTokens = r.MaxCompletionTokens
	}
	if r.ReasoningEffort != "" {
		b, ok := thinkingBudgets[r.ReasoningEffort]
		if !ok {
			return nil, apierr.BadParam("reasoning_effort", "reasoning_effort must be none, minimal, low, medium or high")
		}
		gc.ThinkingConfig = &thinkingConfig{ThinkingBudget: b}
	}
	if rf := bytes.TrimSpace(r.ResponseFormat); len(rf) > 0 && !bytes.Equal(rf, []byte("null")) {
		var f struct {
			Type       string `json:"type"`
			JSONSchema *struct {
				Schema json.RawMessage `json:"schema"`
			} `json:"json_schema"`
		}
		if err := json.Unmarshal(rf, &f); err != nil {
			return nil, apierr.BadParam("response_format", "response_format must be an object")
		}
		switch f.Type {
		case "text", "":
		case "json_object":
			gc.ResponseMIMEType = "application/json"
		case "json_schema":
			gc.ResponseMIMEType = "application/json"
			if f.JSONSchema != nil && len(f.JSONSchema.Schema) > 0 && !bytes.Equal(f.JSONSchema.Schema, []byte("null")) {
				s, err := cleanResponseSchema(f.JSONSchema.Schema)
				if err != nil {
					return nil, apierr.BadParam("response_format.json_schema.schema", "response_format.json_schema.schema must be a JSON schema object")
				}
				gc.ResponseSchema = s
			}
		default:
			return nil, apierr.BadParam("response_format.type", "response_format.type %q is not supported by this provider", f.Type)
		}
	}
	if gc.Temperature == nil && gc.TopP == nil && gc.MaxOutputTokens == nil && len(gc.StopSequences) == 0 &&
		gc.CandidateCount == nil && gc.Seed == nil && gc.PresencePenalty == nil && gc.FrequencyPenalty == nil &&
		gc.ResponseMIMEType == "" && gc.ThinkingConfig == nil {
		return nil, nil
	}
	return &gc, nil
}
