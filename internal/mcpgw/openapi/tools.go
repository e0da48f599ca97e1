package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Errors about what to build tools of, as opposed to the document.
var (
	// ErrUnknownMethod: include_methods names a method that is not one of
	// GET, PUT, POST, DELETE, OPTIONS, HEAD, PATCH.
	ErrUnknownMethod = errors.New("unknown or unsupported HTTP method")
	// ErrNoOperations: no operation of the document has an included method.
	ErrNoOperations = errors.New("no operation of the document has an included method")
)

// MaxTotalSchemaNodes bounds the input schemas of all a document's tools
// together.
const MaxTotalSchemaNodes = 250000

const (
	maxNameLen        = 128 // the MCP SDK's bound on tool names
	maxDescriptionLen = 4096
)

// tool is one operation made a tool: what tools/list shows and what a call
// needs.
type tool struct {
	mcp  *mcp.Tool
	call *binding
}

// binding is what a call of one tool needs to build its request.
type binding struct {
	method string
	path   []pathPart
	params map[string][]*param // by group: "path", "query", "header"
	body   *bodySpec           // nil: no JSON body
}

// param is one parameter as a call serialises it.
type param struct {
	name     string
	in       string
	required bool
	style    string
	explode  bool
	content  string // the media type when the parameter has content instead of a schema
}

type bodySpec struct {
	mediaType string
	required  bool
}

// Tools returns one tool per operation whose method is in include (all when
// include is empty; case-insensitive), in the document's tool order. An
// unknown method is ErrUnknownMethod, none matching ErrNoOperations; a
// tool's schema over its bound is a *SpecError.
func (d *Document) Tools(include []string) ([]*mcp.Tool, error) {
	built, err := d.build(include)
	if err != nil {
		return nil, err
	}
	out := make([]*mcp.Tool, len(built))
	for i, t := range built {
		out[i] = t.mcp
	}
	return out, nil
}

func (d *Document) build(include []string) ([]tool, error) {
	want, err := methodSet(include)
	if err != nil {
		return nil, err
	}
	b := builder{doc: d.doc, taken: map[string]bool{}, credentials: apiKeyParams(d.doc)}
	var out []tool
	for _, op := range d.ops {
		if !want[op.method] {
			continue
		}
		t, err := b.tool(op)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w (%s)", ErrNoOperations, strings.Join(include, ", "))
	}
	return out, nil
}

func methodSet(include []string) (map[string]bool, error) {
	want := map[string]bool{}
	if len(include) == 0 {
		for _, m := range methods {
			want[m] = true
		}
		return want, nil
	}
	for _, m := range include {
		up := strings.ToUpper(strings.TrimSpace(m))
		if !slices.Contains(methods, up) {
			return nil, fmt.Errorf("%w: %q (use %s)", ErrUnknownMethod, m, strings.Join(methods, ", "))
		}
		want[up] = true
	}
	return want, nil
}

// builder builds the tools of one document: it hands out unique names and
// counts schema nodes across them.
type builder struct {
	doc         *openapi3.T
	taken       map[string]bool
	credentials map[paramKey]bool
	nodes       int
}

type paramKey struct{ in, name string }

func (b *builder) tool(op *operation) (tool, error) {
	where := func(err error) error { return specErrorf("operation %s %s: %s", op.method, op.path, err) }
	parts, err := parseTemplate(op.path)
	if err != nil {
		return tool{}, where(err)
	}
	limit := min(MaxSchemaNodes, MaxTotalSchemaNodes-b.nodes)
	c := newSchemas(limit)
	bind := &binding{method: op.method, path: parts, params: map[string][]*param{}}
	props := map[string]any{}
	var required []string
	for _, group := range []string{"path", "query", "header"} {
		schema, req := b.group(c, bind, op, group)
		if schema != nil {
			props[group] = schema
			if req {
				required = append(required, group)
			}
		}
	}
	note := b.body(c, bind, op, props, &required)
	defs := c.finish()
	b.nodes += c.nodes
	if c.err != nil {
		if b.nodes >= MaxTotalSchemaNodes {
			return tool{}, specErrorf("the tools' input schemas together have more than %d nodes", MaxTotalSchemaNodes)
		}
		return tool{}, where(c.err)
	}
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		schema["required"] = required
	}
	if defs != nil {
		schema["$defs"] = defs
	}
	raw, err := json.Marshal(schema)
	if err != nil {
		return tool{}, where(fmt.Errorf("its input schema cannot be written as JSON: %v", err))
	}
	t := &mcp.Tool{
		Name:        b.name(op),
		Title:       oneLine(op.op.Summary),
		Description: description(op, note),
		InputSchema: json.RawMessage(raw),
		Annotations: annotations(op),
	}
	return tool{mcp: t, call: bind}, nil
}

// group builds the schema of one parameter group and the binding's list;
// nil when the operation has no parameter there.
func (b *builder) group(c *schemas, bind *binding, op *operation, in string) (map[string]any, bool) {
	props := map[string]any{}
	var required []string
	for _, p := range op.params {
		if p.In != in || !b.exposed(p) {
			continue
		}
		bp := &param{name: p.Name, in: in, required: p.Required || in == "path", style: p.Style}
		bp.explode = bp.style == "" || bp.style == "form"
		if in != "query" {
			bp.explode = false
		}
		if p.Explode != nil {
			bp.explode = *p.Explode
		}
		props[p.Name] = b.paramSchema(c, p, bp)
		if bp.required {
			required = append(required, p.Name)
		}
		bind.params[in] = append(bind.params[in], bp)
	}
	if len(props) == 0 {
		return nil, false
	}
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		schema["required"] = required
	}
	return schema, len(required) > 0
}

// exposed reports whether a parameter is one a tool call may set.
func (b *builder) exposed(p *openapi3.Parameter) bool {
	k := paramKey{p.In, p.Name}
	if p.In == "header" {
		k.name = strings.ToLower(p.Name)
		if refusedHeader(k.name) || !validHeaderName(p.Name) {
			return false
		}
	}
	return !b.credentials[k]
}

// paramSchema is a parameter's schema with its description and deprecation.
func (b *builder) paramSchema(c *schemas, p *openapi3.Parameter, bp *param) map[string]any {
	var s map[string]any
	switch {
	case p.Schema != nil:
		s = c.ref(p.Schema, 1)
	case len(p.Content) > 0:
		mt, media := firstMedia(p.Content)
		bp.content = mt
		if media != nil {
			s = c.ref(media.Schema, 1)
		} else {
			s = map[string]any{}
		}
	default:
		s = map[string]any{}
	}
	if _, ok := s["description"]; !ok && p.Description != "" {
		s["description"] = p.Description
	}
	setBool(s, "deprecated", p.Deprecated)
	return s
}

// body adds the JSON request body to the schema, or returns a note saying
// why an operation's body is not offered.
func (b *builder) body(c *schemas, bind *binding, op *operation, props map[string]any, required *[]string) string {
	rb := op.op.RequestBody
	if rb == nil || rb.Value == nil || len(rb.Value.Content) == 0 {
		return ""
	}
	mt, media := jsonMedia(rb.Value.Content)
	if media == nil {
		types := make([]string, 0, len(rb.Value.Content))
		for k := range rb.Value.Content {
			types = append(types, k)
		}
		sort.Strings(types)
		return fmt.Sprintf("This tool cannot send this operation's request body (%s): only JSON bodies are supported.", strings.Join(types, ", "))
	}
	s := c.ref(media.Schema, 1)
	if _, ok := s["description"]; !ok && rb.Value.Description != "" {
		s["description"] = rb.Value.Description
	}
	props["body"] = s
	bind.body = &bodySpec{mediaType: mt, required: rb.Value.Required}
	if rb.Value.Required {
		*required = append(*required, "body")
	}
	return ""
}

// jsonMedia picks the JSON media type of a body: application/json, then a
// +json type, then */* (sent as application/json).
func jsonMedia(content openapi3.Content) (string, *openapi3.MediaType) {
	keys := make([]string, 0, len(content))
	for k := range content {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, rank := range []func(string) bool{
		func(t string) bool { return t == "application/json" },
		func(t string) bool { return strings.HasSuffix(t, "+json") },
		func(t string) bool { return t == "*/*" },
	} {
		for _, k := range keys {
			for _, t := range strings.Split(k, ",") {
				base, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(t)), ";")
				base = strings.TrimSpace(base)
				if content[k] != nil && rank(base) {
					if base == "*/*" {
						base = "application/json"
					}
					return base, content[k]
				}
			}
		}
	}
	return "", nil
}

// firstMedia is a parameter's one media type (the validator allows one).
func firstMedia(content openapi3.Content) (string, *openapi3.MediaType) {
	if mt, media := jsonMedia(content); media != nil {
		return mt, media
	}
	keys := make([]string, 0, len(content))
	for k := range content {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys[0], content[keys[0]]
}

// apiKeyParams lists the parameters apiKey security schemes carry.
func apiKeyParams(doc *openapi3.T) map[paramKey]bool {
	out := map[paramKey]bool{}
	if doc.Components == nil {
		return out
	}
	for _, ref := range doc.Components.SecuritySchemes {
		if ref == nil || ref.Value == nil || ref.Value.Type != "apiKey" {
			continue
		}
		k := paramKey{ref.Value.In, ref.Value.Name}
		if k.in == "header" {
			k.name = strings.ToLower(k.name)
		}
		out[k] = true
	}
	return out
}

// name is the operation's unique tool name.
func (b *builder) name(op *operation) string {
	base := sanitise(op.op.OperationID, maxNameLen)
	if base == "" {
		base = sanitise(strings.ToLower(op.method)+"_"+strings.Trim(op.path, "/"), maxNameLen)
	}
	name := base
	for i := 2; b.taken[name]; i++ {
		suffix := fmt.Sprintf("_%d", i)
		name = base[:min(len(base), maxNameLen-len(suffix))] + suffix
	}
	b.taken[name] = true
	return name
}

// sanitise keeps [A-Za-z0-9_.-], turns runs of anything else into one "_",
// trims "_" from the ends and cuts to max bytes.
func sanitise(s string, max int) string {
	var sb strings.Builder
	under := false
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.'
		if !ok {
			if !under {
				sb.WriteByte('_')
			}
			under = true
			continue
		}
		under = false
		sb.WriteRune(r)
	}
	out := strings.Trim(sb.String(), "_")
	if len(out) > max {
		out = strings.TrimRight(out[:max], "_")
	}
	return out
}

func description(op *operation, note string) string {
	var parts []string
	head := op.method + " " + op.path
	if s := oneLine(op.op.Summary); s != "" {
		head += ": " + s
	}
	if op.op.Deprecated {
		head = "[deprecated] " + head
	}
	parts = append(parts, head)
	if d := strings.TrimSpace(op.op.Description); d != "" && d != strings.TrimSpace(op.op.Summary) {
		parts = append(parts, d)
	}
	if note != "" {
		parts = append(parts, note)
	}
	return truncateText(strings.Join(parts, "\n\n"), maxDescriptionLen)
}

func oneLine(s string) string {
	return truncateText(strings.Join(strings.Fields(s), " "), 200)
}

// truncateText cuts s to at most max bytes on a rune boundary, marking the
// cut with "…".
func truncateText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	cut := max - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func annotations(op *operation) *mcp.ToolAnnotations {
	yes := true
	a := &mcp.ToolAnnotations{Title: oneLine(op.op.Summary), OpenWorldHint: &yes}
	switch op.method {
	case "GET", "HEAD", "OPTIONS":
		a.ReadOnlyHint = true
		a.IdempotentHint = true
	case "PUT":
		a.IdempotentHint = true
	case "DELETE":
		a.IdempotentHint = true
		a.DestructiveHint = &yes
	}
	return a
}
