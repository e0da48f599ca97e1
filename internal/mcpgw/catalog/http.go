package catalog

import (
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
)

// CatalogHandler answers GET /api/mcp/catalog: a Listing.
func (c *Catalog) CatalogHandler() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c.write(w, c.List(c.filter(r)))
	}
}

// IndexHandler answers GET /api/mcp/tools/index: an IndexListing.
func (c *Catalog) IndexHandler() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		c.write(w, c.Index(c.filter(r)))
	}
}

// SearchAnswer is the search's answer.
type SearchAnswer struct {
	Results []Result `json:"results"`
}

// SearchHandler answers GET /api/mcp/tools/search?q=&k=: a SearchAnswer.
// q is required (not blank, UTF-8, at most MaxQueryBytes) and k is 1–MaxK
// (DefaultK when absent); else 400 naming the parameter. An embedder that
// fails is a 503.
func (c *Catalog) SearchHandler() http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		query := r.URL.Query()
		q := query.Get("q")
		switch {
		case strings.TrimSpace(q) == "":
			apierr.Write(w, apierr.BadParam("q", "q is required: the text to search tools for"))
			return
		case len(q) > MaxQueryBytes:
			apierr.Write(w, apierr.BadParam("q", "q must be at most %d bytes", MaxQueryBytes))
			return
		case !utf8.ValidString(q) || strings.ContainsRune(q, 0):
			apierr.Write(w, apierr.BadParam("q", "q must be UTF-8 text"))
			return
		}
		k, err := jsonbody.QueryInt(query, "k", DefaultK, 1, MaxK)
		if err != nil {
			apierr.Write(w, err)
			return
		}
		results, err := c.Search(r.Context(), q, k, c.filter(r))
		if err != nil {
			if r.Context().Err() == nil {
				err = apierr.Wrap(apierr.Unavailable, "embedder_unavailable", "tool search is unavailable: the embedder failed", err)
			}
			c.o.Log.Warn("catalog: tool search failed", "err", err)
			apierr.Write(w, err)
			return
		}
		c.write(w, SearchAnswer{Results: results})
	}
}

func (c *Catalog) filter(r *http.Request) Filter {
	if c.o.Visible == nil {
		return nil
	}
	return c.o.Visible(r)
}

func (c *Catalog) write(w http.ResponseWriter, v any) {
	if err := jsonbody.Write(w, http.StatusOK, v); err != nil {
		apierr.Write(w, err)
	}
}
