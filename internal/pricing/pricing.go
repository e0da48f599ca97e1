// Package pricing owns the per-model price table: what a model charges, in
// US dollars per million tokens, and the arithmetic that turns a request's
// token usage into its cost. The proxy (spend debits and budgets), route
// (cost-aware strategies and provider budgets) and audit (the cost on each
// entry) import it; it imports only the standard library.
//
// # Where the prices come from
//
// The table is prices.json, embedded in the binary: one entry per model,
// keyed "provider/model" (the provider as svc names it: openai, anthropic,
// gemini, mistral, deepseek, xai, groq, cohere), with the fields
//
//	input         price of a prompt token
//	output        price of a completion token
//	cached_input  price of a prompt token read from the provider's cache
//	              (absent: the input price)
//	cache_write   price of a prompt token written to the cache, which
//	              Anthropic charges for (absent: the input price)
//	reasoning     price of a reasoning token (absent: the output price,
//	              which is how every provider here bills them)
//	mode          "chat" (absent) or "embedding"; an embedding model has
//	              no completion tokens, and its output price is 0
//
// The figures are the providers' public list prices for standard
// (non-batch, non-priority) requests as of late 2025, taken from their
// pricing pages as remembered by the author and checked against public
// copies of those pages where a search found them; Mistral's, and Gemini's
// cached-input prices, are the least certain. They are a default to be
// checked, not a contract: a deployment that bills on them should compare
// them with its invoices. The table does not model batch discounts,
// long-context tiers (Gemini 2.5 Pro and Claude Sonnet 4/4.5 above 200K
// prompt tokens), Anthropic's one-hour cache writes (twice the input price;
// cache_write is the five-minute price), audio and image token rates, or
// per-call tool fees.
//
// A JSON file of the same shape, named by the SVC_PRICES_FILE setting,
// overrides the embedded table entry by entry (see [Load] and
// [Table.Merge]): an operator corrects a price, or adds a model, without
// a release.
package pricing

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
)

//go:embed prices.json
var embedded []byte

// Mode says what kind of model a price is for.
type Mode string

const (
	// ModeChat is a model that reads a prompt and writes a completion.
	ModeChat Mode = "chat"
	// ModeEmbedding is a model that only reads: it has no completion tokens.
	ModeEmbedding Mode = "embedding"
)

// Price is what one model charges, in US dollars per million tokens. A
// Price from a [Table] has every field filled in: the defaults for absent
// fields have been applied.
type Price struct {
	Input       float64
	Output      float64
	CachedInput float64
	CacheWrite  float64
	Reasoning   float64
	Mode        Mode
}

// A Table maps providers' models to their prices. A Table is never changed
// once made, so it is safe for concurrent use. A nil *Table is an empty
// table.
type Table struct {
	// byProvider maps provider to model to price: two lookups with the
	// caller's strings, so that an exact hit allocates nothing.
	byProvider map[string]map[string]Price
}

// Default returns the table embedded in the binary, parsed on first use.
func Default() *Table { return defaultTable() }

var defaultTable = sync.OnceValue(func() *Table {
	t, err := Load(bytes.NewReader(embedded))
	if err != nil {
		panic("pricing: the embedded prices.json is invalid: " + err.Error())
	}
	return t
})

// entry is one model's prices as JSON has them; nil means absent.
type entry struct {
	Input       *float64 `json:"input"`
	Output      *float64 `json:"output"`
	CachedInput *float64 `json:"cached_input"`
	CacheWrite  *float64 `json:"cache_write"`
	Reasoning   *float64 `json:"reasoning"`
	Mode        Mode     `json:"mode"`
}

// Load reads a table from JSON: an object whose keys are "provider/model"
// and whose values have the fields the package documentation lists. Every
// entry must have input and output; no price may be negative; unknown
// fields are refused, so that a misspelt field is an error rather than a
// price silently left at its default.
func Load(r io.Reader) (*Table, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var raw map[string]entry
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("pricing: %w", err)
	}
	if raw == nil {
		return nil, errors.New("pricing: the price table is null, want an object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("pricing: unexpected data after the price table")
	}
	t := &Table{byProvider: make(map[string]map[string]Price)}
	for key, e := range raw {
		provider, model, ok := strings.Cut(key, "/")
		if !ok || provider == "" || model == "" {
			return nil, fmt.Errorf("pricing: key %q is not of the form provider/model", key)
		}
		p, err := e.price()
		if err != nil {
			return nil, fmt.Errorf("pricing: %s: %w", key, err)
		}
		models := t.byProvider[provider]
		if models == nil {
			models = make(map[string]Price)
			t.byProvider[provider] = models
		}
		models[model] = p
	}
	return t, nil
}

// price checks e and fills in the defaults for its absent fields.
func (e entry) price() (Price, error) {
	if e.Input == nil || e.Output == nil {
		return Price{}, errors.New("input and output prices are required")
	}
	for _, f := range []*float64{e.Input, e.Output, e.CachedInput, e.CacheWrite, e.Reasoning} {
		if f != nil && (*f < 0 || math.IsInf(*f, 0) || math.IsNaN(*f)) {
			return Price{}, fmt.Errorf("price %v is not a non-negative number", *f)
		}
	}
	p := Price{Input: *e.Input, Output: *e.Output, Mode: e.Mode}
	p.CachedInput = valueOr(e.CachedInput, p.Input)
	p.CacheWrite = valueOr(e.CacheWrite, p.Input)
	p.Reasoning = valueOr(e.Reasoning, p.Output)
	switch p.Mode {
	case "":
		p.Mode = ModeChat
	case ModeChat, ModeEmbedding:
	default:
		return Price{}, fmt.Errorf("mode %q is neither %q nor %q", p.Mode, ModeChat, ModeEmbedding)
	}
	return p, nil
}

func valueOr(f *float64, def float64) float64 {
	if f == nil {
		return def
	}
	return *f
}

// Merge returns a table with the entries of both t and other, other's
// winning where both have a model. Neither table is changed.
func (t *Table) Merge(other *Table) *Table {
	m := &Table{byProvider: make(map[string]map[string]Price)}
	for provider, models := range t.providers() {
		m.byProvider[provider] = maps.Clone(models)
	}
	for provider, models := range other.providers() {
		if m.byProvider[provider] == nil {
			m.byProvider[provider] = make(map[string]Price, len(models))
		}
		maps.Copy(m.byProvider[provider], models)
	}
	return m
}

// Lookup returns the price of a provider's model. It looks for the model
// by its exact name first; failing that, for the longest known model whose
// name the given one extends with a snapshot suffix, so that dated and
// aliased snapshots are priced as their model: gpt-4o-2024-08-06 as gpt-4o,
// claude-sonnet-4-5-20250929 as claude-sonnet-4-5, mistral-large-latest as
// mistral-large, gemini-2.5-flash-preview-05-20 as gemini-2.5-flash.
//
// A snapshot suffix is "-" or "@" followed by "-"-separated parts each of
// which is a number of two or more digits (a date, 0125, 001) or one of
// "latest", "preview" and "exp". Any other suffix names a different model,
// whose price may differ (o3-pro is not o3, gemini-2.5-flash-lite not
// gemini-2.5-flash), so it is not matched: an unknown model is reported as
// unknown rather than priced wrongly.
//
// Lookup does not allocate.
func (t *Table) Lookup(provider, model string) (Price, bool) {
	models := t.providers()[provider]
	if models == nil {
		return Price{}, false
	}
	if p, ok := models[model]; ok {
		return p, true
	}
	for i := len(model) - 1; i > 0; i-- {
		if c := model[i]; c != '-' && c != '@' {
			continue
		}
		if p, ok := models[model[:i]]; ok && isSnapshotSuffix(model[i+1:]) {
			return p, true
		}
	}
	return Price{}, false
}

// isSnapshotSuffix reports whether s (a suffix without its leading
// separator) names a snapshot of a model rather than another model.
func isSnapshotSuffix(s string) bool {
	if s == "" {
		return false
	}
	for part := range strings.SplitSeq(s, "-") {
		switch part {
		case "latest", "preview", "exp":
			continue
		}
		if len(part) < 2 {
			return false
		}
		for i := 0; i < len(part); i++ {
			if part[i] < '0' || part[i] > '9' {
				return false
			}
		}
	}
	return true
}

// Models returns the names of a provider's models in the table, sorted.
func (t *Table) Models(provider string) []string {
	return slices.Sorted(maps.Keys(t.providers()[provider]))
}

// providers returns the table's map, which is nil for a nil table.
func (t *Table) providers() map[string]map[string]Price {
	if t == nil {
		return nil
	}
	return t.byProvider
}
