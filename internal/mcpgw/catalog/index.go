package catalog

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Bounds on what is embedded of a tool.
const (
	maxDescriptionBytes = 2 << 10
	maxParams           = 100
	embedBatch          = 64
)

// index returns tools as indexed, sorted by name: duplicates and nameless
// tools dropped, at most MaxToolsPerServer kept; a tool whose text and
// model did not change keeps its vector from prev, the others are embedded.
func (c *Catalog) index(ctx context.Context, tools []*mcp.Tool, prev *serverEntry) ([]*indexedTool, error) {
	old := map[string]*indexedTool{}
	if prev != nil {
		for _, t := range prev.tools {
			old[t.tool.Name] = t
		}
	}
	seen := map[string]bool{}
	out := make([]*indexedTool, 0, min(len(tools), MaxToolsPerServer))
	var todo []*indexedTool
	model, now := c.emb.Name(), c.o.Now()
	for _, t := range tools {
		if t == nil || t.Name == "" || seen[t.Name] || len(out) == MaxToolsPerServer {
			continue
		}
		seen[t.Name] = true
		it := &indexedTool{tool: t, text: toolText(t), model: model}
		if o := old[t.Name]; o != nil && o.text == it.text && o.model == model && o.vec != nil {
			it.vec, it.indexedAt = o.vec, o.indexedAt
		} else {
			todo = append(todo, it)
		}
		out = append(out, it)
	}
	for start := 0; start < len(todo); start += embedBatch {
		batch := todo[start:min(start+embedBatch, len(todo))]
		texts := make([]string, len(batch))
		for i, it := range batch {
			texts[i] = it.text
		}
		vecs, err := c.emb.Embed(ctx, texts)
		if err != nil {
			return nil, err
		}
		if len(vecs) != len(batch) {
			return nil, fmt.Errorf("embedder %s returned %d vectors for %d texts", model, len(vecs), len(batch))
		}
		for i, it := range batch {
			it.vec, it.indexedAt = vecs[i], now
		}
	}
	slices.SortFunc(out, func(a, b *indexedTool) int { return strings.Compare(a.tool.Name, b.tool.Name) })
	return out, nil
}

// toolText is what is embedded of a tool: its name as words, its title, its
// description (bounded) and its parameter names as words, lower-cased (the
// lexical embedder treats a capitalised word as a name; queries are
// lower-cased too, so both sides fold the same way).
func toolText(t *mcp.Tool) string {
	var b strings.Builder
	b.WriteString(splitWords(t.Name))
	title := t.Title
	if title == "" && t.Annotations != nil {
		title = t.Annotations.Title
	}
	for _, s := range []string{title, truncate(t.Description, maxDescriptionBytes)} {
		if s != "" {
			b.WriteString(". ")
			b.WriteString(s)
		}
	}
	if params := paramNames(t.InputSchema); len(params) > 0 {
		b.WriteString(". ")
		for i, p := range params {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(splitWords(p))
		}
	}
	return strings.ToLower(b.String())
}

// queryText is what is embedded of a query.
func queryText(q string) string { return strings.ToLower(q) }

// splitWords turns an identifier into words: snake_case, kebab-case,
// dotted.names and camelCase (HTTPServer is "http server").
func splitWords(id string) string {
	var b strings.Builder
	rs := []rune(id)
	for i, r := range rs {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") {
				b.WriteByte(' ')
			}
			continue
		}
		if i > 0 && unicode.IsUpper(r) {
			prev := rs[i-1]
			nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
			if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
				if !strings.HasSuffix(b.String(), " ") {
					b.WriteByte(' ')
				}
			}
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}

// paramNames returns the top-level property names of an input schema,
// sorted, at most maxParams. The schema is whatever the lister gave: a map
// (the SDK's client), raw JSON, or a typed schema.
func paramNames(schema any) []string {
	var props map[string]json.RawMessage
	switch s := schema.(type) {
	case nil:
		return nil
	case map[string]any:
		p, _ := s["properties"].(map[string]any)
		names := make([]string, 0, len(p))
		for k := range p {
			names = append(names, k)
		}
		return boundNames(names)
	case json.RawMessage:
		props = rawProperties(s)
	default:
		b, err := json.Marshal(s)
		if err != nil {
			return nil
		}
		props = rawProperties(b)
	}
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	return boundNames(names)
}

func rawProperties(b []byte) map[string]json.RawMessage {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(b, &s) != nil {
		return nil
	}
	return s.Properties
}

func boundNames(names []string) []string {
	if len(names) == 0 {
		return nil
	}
	slices.Sort(names)
	if len(names) > maxParams {
		names = names[:maxParams]
	}
	return names
}

// truncate cuts s to at most n bytes on a character boundary.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
