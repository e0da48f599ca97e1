package catalog

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/cache/embed"
)

// Bounds of a search.
const (
	DefaultK      = 5
	MaxK          = 50
	MaxQueryBytes = 1 << 10
)

// Result is one tool a search found.
type Result struct {
	ServerID    string  `json:"server_id"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Score       float64 `json:"score"` // cosine similarity, 0–1
}

// Search returns the k tools visible under f whose text is nearest q, best
// first (ties by server and name); tools with no similarity are left out.
// It embeds q, and fails only if the embedder does.
func (c *Catalog) Search(ctx context.Context, q string, k int, f Filter) ([]Result, error) {
	k = min(max(k, 1), MaxK)
	vecs, err := c.emb.Embed(ctx, []string{queryText(q)})
	if err != nil {
		return nil, fmt.Errorf("catalog: embed the query: %w", err)
	}
	if len(vecs) != 1 {
		return nil, fmt.Errorf("catalog: embedder %s returned %d vectors for 1 text", c.emb.Name(), len(vecs))
	}
	qv, model := vecs[0], c.emb.Name()
	type hit struct {
		server string
		t      *indexedTool
		score  float32
	}
	top := make([]hit, 0, k+1)
	better := func(a, b hit) int {
		if a.score != b.score {
			return cmp.Compare(b.score, a.score)
		}
		return cmp.Or(cmp.Compare(a.server, b.server), cmp.Compare(a.t.tool.Name, b.t.tool.Name))
	}
	for _, e := range c.snapshot() {
		for _, t := range e.tools {
			if t.model != model || len(t.vec) != len(qv) || !f.shows(e.id, t.tool.Name) {
				continue
			}
			h := hit{server: e.id, t: t, score: embed.Cosine(qv, t.vec)}
			if h.score <= 0 || (len(top) == k && better(h, top[k-1]) >= 0) {
				continue
			}
			i, _ := slices.BinarySearchFunc(top, h, better)
			top = slices.Insert(top, i, h)
			if len(top) > k {
				top = top[:k]
			}
		}
	}
	out := make([]Result, len(top))
	for i, h := range top {
		out[i] = Result{
			ServerID: h.server, Name: h.t.tool.Name, Description: h.t.tool.Description,
			Score: math.Round(float64(h.score)*1e4) / 1e4,
		}
	}
	return out, nil
}

// snapshot returns the entries, sorted by server id.
func (c *Catalog) snapshot() []*serverEntry {
	c.mu.RLock()
	out := make([]*serverEntry, 0, len(c.entries))
	for _, e := range c.entries {
		out = append(out, e)
	}
	c.mu.RUnlock()
	slices.SortFunc(out, func(a, b *serverEntry) int { return cmp.Compare(a.id, b.id) })
	return out
}

// ServerTools is one server of the catalog.
type ServerTools struct {
	ServerID    string      `json:"server_id"`
	Name        string      `json:"name"`
	Description string      `json:"description,omitempty"`
	ToolCount   int         `json:"tool_count"`
	Tools       []*mcp.Tool `json:"tools"`
	// RefreshedAt is the last good listing; absent if none succeeded yet.
	RefreshedAt *time.Time `json:"refreshed_at,omitempty"`
	// Error is the last listing's failure (the tools are then the last good
	// ones), with its time; absent when it succeeded.
	Error   string     `json:"error,omitempty"`
	ErrorAt *time.Time `json:"error_at,omitempty"`
}

// Listing is the catalog's answer.
type Listing struct {
	Servers []ServerTools `json:"servers"`
	Count   int           `json:"count"` // tools, all servers together
}

// List returns the catalog as f shows it, servers by id, tools by name.
// With a filter, a server none of whose tools is shown is left out.
func (c *Catalog) List(f Filter) Listing {
	l := Listing{Servers: []ServerTools{}}
	for _, e := range c.snapshot() {
		st := ServerTools{ServerID: e.id, Name: e.name, Description: e.description, Tools: []*mcp.Tool{}, Error: e.err}
		for _, t := range e.tools {
			if f.shows(e.id, t.tool.Name) {
				st.Tools = append(st.Tools, t.tool)
			}
		}
		if f != nil && len(st.Tools) == 0 {
			continue
		}
		st.ToolCount = len(st.Tools)
		st.RefreshedAt, st.ErrorAt = timePtr(e.refreshedAt), timePtr(e.errAt)
		l.Servers = append(l.Servers, st)
		l.Count += st.ToolCount
	}
	return l
}

// IndexedTool is one tool of the index with its embedding's metadata.
type IndexedTool struct {
	ServerID    string    `json:"server_id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	Model       string    `json:"model"`
	Dimensions  int       `json:"dimensions"`
	IndexedAt   time.Time `json:"indexed_at"`
}

// IndexListing is the index's answer: the embedder searches use now, and
// every tool.
type IndexListing struct {
	Model      string        `json:"model"`
	Dimensions int           `json:"dimensions"` // 0 until known (a remote embedder before its first answer)
	Count      int           `json:"count"`
	Tools      []IndexedTool `json:"tools"`
}

// Index returns every tool f shows with its embedding's metadata, by
// server then name.
func (c *Catalog) Index(f Filter) IndexListing {
	l := IndexListing{Model: c.emb.Name(), Dimensions: c.emb.Dim(), Tools: []IndexedTool{}}
	for _, e := range c.snapshot() {
		for _, t := range e.tools {
			if !f.shows(e.id, t.tool.Name) {
				continue
			}
			l.Tools = append(l.Tools, IndexedTool{
				ServerID: e.id, Name: t.tool.Name, Description: t.tool.Description,
				Model: t.model, Dimensions: len(t.vec), IndexedAt: t.indexedAt.UTC(),
			})
		}
	}
	l.Count = len(l.Tools)
	return l
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}
