package pricing

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDefaultTable(t *testing.T) {
	tab := Default()
	if tab != Default() {
		t.Error("Default returned a different table on its second call, want the same one")
	}
	n := 0
	for provider, models := range tab.byProvider {
		for model, p := range models {
			n++
			key := provider + "/" + model
			if p.Input <= 0 {
				t.Errorf("%s: got input price %v, want more than 0", key, p.Input)
			}
			if p.Output <= 0 && p.Mode != ModeEmbedding {
				t.Errorf("%s: got output price %v, want more than 0", key, p.Output)
			}
			if p.Mode == ModeEmbedding && p.Output != 0 {
				t.Errorf("%s: embedding model has output price %v, want 0", key, p.Output)
			}
			if p.CachedInput > p.Input {
				t.Errorf("%s: cached input price %v is above the input price %v", key, p.CachedInput, p.Input)
			}
			if p.CacheWrite < p.Input {
				t.Errorf("%s: cache write price %v is below the input price %v", key, p.CacheWrite, p.Input)
			}
			if p.Reasoning != p.Output {
				t.Errorf("%s: reasoning price %v differs from the output price %v; no provider here bills them apart", key, p.Reasoning, p.Output)
			}
		}
	}
	if n < 50 {
		t.Errorf("got %d entries, want the whole table", n)
	}
}

// TestDefaultTableCoversModels checks that every model svc is expected to
// price resolves, by its alias or its dated API id.
func TestDefaultTableCoversModels(t *testing.T) {
	want := map[string][]string{
		"openai": {
			"gpt-4o", "gpt-4o-2024-08-06", "gpt-4o-mini", "gpt-4o-mini-2024-07-18",
			"gpt-4.1", "gpt-4.1-2025-04-14", "gpt-4.1-mini", "gpt-4.1-nano",
			"o1", "o1-2024-12-17", "o3", "o3-2025-04-16", "o3-mini", "o3-mini-2025-01-31",
			"o4-mini", "o4-mini-2025-04-16", "gpt-5", "gpt-5-2025-08-07", "gpt-5-mini", "gpt-5-nano",
			"text-embedding-3-small", "text-embedding-3-large", "text-embedding-ada-002",
		},
		"anthropic": {
			"claude-3-5-haiku-20241022", "claude-3-5-haiku-latest",
			"claude-3-5-sonnet-20240620", "claude-3-5-sonnet-20241022", "claude-3-5-sonnet-latest",
			"claude-3-7-sonnet-20250219", "claude-3-7-sonnet-latest",
			"claude-sonnet-4-20250514", "claude-sonnet-4-0", "claude-opus-4-20250514", "claude-opus-4-0",
			"claude-opus-4-1-20250805", "claude-opus-4-1",
			"claude-sonnet-4-5-20250929", "claude-sonnet-4-5",
			"claude-haiku-4-5-20251001", "claude-haiku-4-5",
			"claude-opus-4-5-20251101", "claude-opus-4-5",
		},
		"gemini":   {"gemini-2.0-flash", "gemini-2.0-flash-001", "gemini-2.5-flash", "gemini-2.5-pro"},
		"mistral":  {"mistral-large-latest", "mistral-medium-latest", "mistral-small-latest", "codestral-latest"},
		"deepseek": {"deepseek-chat", "deepseek-reasoner"},
		"xai":      {"grok-3", "grok-3-latest", "grok-4", "grok-4-0709", "grok-4-latest"},
		"groq":     {"llama-3.3-70b-versatile"},
		"cohere":   {"command-r", "command-r-08-2024", "command-r-plus", "command-r-plus-08-2024", "command-a", "command-a-03-2025"},
	}
	for provider, models := range want {
		for _, model := range models {
			if _, ok := Default().Lookup(provider, model); !ok {
				t.Errorf("Lookup(%q, %q): got no price, want one", provider, model)
			}
		}
	}
}

func TestLookup(t *testing.T) {
	tests := []struct {
		provider, model string
		want            string // the table's model whose price is expected; "" for none
	}{
		{"openai", "gpt-4o", "gpt-4o"},
		{"openai", "gpt-4o-2024-08-06", "gpt-4o"},
		{"openai", "gpt-4o-2024-05-13", "gpt-4o-2024-05-13"}, // exact beats prefix
		{"openai", "gpt-4o-mini-2024-07-18", "gpt-4o-mini"},  // longest prefix
		{"openai", "o1-preview", "o1"},
		{"openai", "o1-mini-2024-09-12", "o1-mini"},
		{"openai", "o3-pro-2025-06-10", "o3-pro"},
		{"openai", "gpt-5-chat-latest", "gpt-5-chat-latest"},
		{"anthropic", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5"},
		{"anthropic", "claude-sonnet-4-20250514", "claude-sonnet-4"},
		{"anthropic", "claude-opus-4-20250514", "claude-opus-4"},
		{"anthropic", "claude-opus-4-1-20250805", "claude-opus-4-1"},
		{"anthropic", "claude-opus-4-5-20251101", "claude-opus-4-5"},
		{"anthropic", "claude-3-5-sonnet@20240620", "claude-3-5-sonnet"},
		{"gemini", "gemini-2.5-flash-preview-05-20", "gemini-2.5-flash"},
		{"gemini", "gemini-2.5-flash-lite-preview-06-17", "gemini-2.5-flash-lite"},
		{"gemini", "gemini-2.0-flash-exp", "gemini-2.0-flash"},
		{"mistral", "mistral-large-latest", "mistral-large"},
		{"mistral", "mistral-large-2411", "mistral-large-2411"},
		{"mistral", "mistral-large-2512", "mistral-large"},
		{"xai", "grok-4-0709", "grok-4"},
		{"cohere", "command-r-08-2024", "command-r"},
		{"cohere", "command-r-plus-08-2024", "command-r-plus"},
		{"cohere", "command-r7b-12-2024", "command-r7b"},

		// Other models, not snapshots: unknown rather than priced wrongly.
		{"openai", "gpt-4o-audio-preview", ""},
		{"openai", "gpt-4o-mini-tts", ""},
		{"openai", "gpt-5.1", ""},
		{"openai", "o4-mini-deep-research", ""},
		{"anthropic", "claude-opus-4-6", ""},
		{"gemini", "gemini-2.5-flash-image", ""},
		{"xai", "grok-3-fast", ""},
		{"cohere", "command-a-vision-07-2025", ""},
		{"openai", "gpt-4o-", ""},
		{"openai", "gpt-4o-1", ""},
		{"openai", "-gpt-4o", ""},
		{"openai", "", ""},
		{"openai", "GPT-4O", ""},
		{"azure", "gpt-4o", ""},
		{"", "gpt-4o", ""},
	}
	tab := Default()
	for _, tt := range tests {
		t.Run(tt.provider+"/"+tt.model, func(t *testing.T) {
			got, ok := tab.Lookup(tt.provider, tt.model)
			if tt.want == "" {
				if ok {
					t.Fatalf("got price %+v, want none", got)
				}
				return
			}
			if !ok {
				t.Fatalf("got no price, want that of %s", tt.want)
			}
			if want := tab.byProvider[tt.provider][tt.want]; got != want {
				t.Errorf("got %+v, want %+v (the price of %s)", got, want, tt.want)
			}
		})
	}
}

func TestIsSnapshotSuffix(t *testing.T) {
	for s, want := range map[string]bool{
		"2024-08-06": true, "20250929": true, "0125": true, "001": true, "latest": true,
		"preview": true, "preview-05-20": true, "exp": true, "08-2024": true,
		"": false, "1": false, "mini": false, "pro": false, "2024-": false, "-2024": false,
		"2024--08": false, "lite": false, "audio-preview": false, "v1": false,
	} {
		if got := isSnapshotSuffix(s); got != want {
			t.Errorf("isSnapshotSuffix(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestLoad(t *testing.T) {
	tab, err := Load(strings.NewReader(`{
		"acme/plain": {"input": 1, "output": 2},
		"acme/full": {"input": 1, "output": 2, "cached_input": 0.1, "cache_write": 1.25, "reasoning": 3, "mode": "chat"},
		"acme/free-cache": {"input": 1, "output": 2, "cached_input": 0},
		"acme/embed": {"input": 0.5, "output": 0, "mode": "embedding"},
		"router/vendor/model": {"input": 1, "output": 1}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		provider, model string
		want            Price
	}{
		{"acme", "plain", Price{Input: 1, Output: 2, CachedInput: 1, CacheWrite: 1, Reasoning: 2, Mode: ModeChat}},
		{"acme", "full", Price{Input: 1, Output: 2, CachedInput: 0.1, CacheWrite: 1.25, Reasoning: 3, Mode: ModeChat}},
		{"acme", "free-cache", Price{Input: 1, Output: 2, CachedInput: 0, CacheWrite: 1, Reasoning: 2, Mode: ModeChat}},
		{"acme", "embed", Price{Input: 0.5, Output: 0, CachedInput: 0.5, CacheWrite: 0.5, Reasoning: 0, Mode: ModeEmbedding}},
		{"router", "vendor/model", Price{Input: 1, Output: 1, CachedInput: 1, CacheWrite: 1, Reasoning: 1, Mode: ModeChat}},
	}
	for _, tt := range tests {
		got, ok := tab.Lookup(tt.provider, tt.model)
		if !ok {
			t.Errorf("Lookup(%q, %q): got no price, want one", tt.provider, tt.model)
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("Lookup(%q, %q) mismatch (-want +got):\n%s", tt.provider, tt.model, diff)
		}
	}

	empty, err := Load(strings.NewReader(`{}`))
	if err != nil {
		t.Fatalf("empty table: got error %v, want none", err)
	}
	if got := empty.Models("openai"); len(got) != 0 {
		t.Errorf("empty table: got models %v, want none", got)
	}
}

func TestLoadErrors(t *testing.T) {
	for name, in := range map[string]string{
		"not JSON":           `{`,
		"not an object":      `[]`,
		"null":               `null`,
		"trailing data":      `{} {}`,
		"no input":           `{"a/b": {"output": 1}}`,
		"no output":          `{"a/b": {"input": 1}}`,
		"null input":         `{"a/b": {"input": null, "output": 1}}`,
		"negative input":     `{"a/b": {"input": -1, "output": 1}}`,
		"negative cached":    `{"a/b": {"input": 1, "output": 1, "cached_input": -0.1}}`,
		"negative reasoning": `{"a/b": {"input": 1, "output": 1, "reasoning": -2}}`,
		"misspelt field":     `{"a/b": {"input": 1, "output": 1, "cache_input": 0.5}}`,
		"string price":       `{"a/b": {"input": "1", "output": 1}}`,
		"unknown mode":       `{"a/b": {"input": 1, "output": 1, "mode": "image"}}`,
		"key without slash":  `{"gpt-4o": {"input": 1, "output": 1}}`,
		"key without model":  `{"openai/": {"input": 1, "output": 1}}`,
		"key without vendor": `{"/gpt-4o": {"input": 1, "output": 1}}`,
	} {
		if _, err := Load(strings.NewReader(in)); err == nil {
			t.Errorf("%s: got no error, want one", name)
		}
	}
}

func TestMerge(t *testing.T) {
	base := Default()
	before, _ := base.Lookup("openai", "gpt-4o")
	override, err := Load(strings.NewReader(`{
		"openai/gpt-4o": {"input": 2, "output": 8},
		"acme/model-x": {"input": 1, "output": 1}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	merged := base.Merge(override)

	tests := []struct {
		provider, model string
		want            float64 // input price
	}{
		{"openai", "gpt-4o", 2},            // the override wins
		{"openai", "gpt-4o-2024-08-06", 2}, // for snapshots too
		{"openai", "gpt-4o-mini", 0.15},    // the rest of the base stays
		{"anthropic", "claude-sonnet-4-5", 3},
		{"acme", "model-x", 1}, // new providers are added
	}
	for _, tt := range tests {
		got, ok := merged.Lookup(tt.provider, tt.model)
		if !ok || got.Input != tt.want {
			t.Errorf("merged Lookup(%q, %q): got input %v (found %v), want %v", tt.provider, tt.model, got.Input, ok, tt.want)
		}
	}
	if got, _ := base.Lookup("openai", "gpt-4o"); got != before {
		t.Errorf("base table changed by Merge: got %+v, want %+v", got, before)
	}
	if _, ok := base.Lookup("acme", "model-x"); ok {
		t.Error("base table gained the override's model, want it unchanged")
	}
	if _, ok := override.Lookup("openai", "gpt-4o-mini"); ok {
		t.Error("override table gained the base's model, want it unchanged")
	}

	same := base.Merge(nil)
	if diff := cmp.Diff(base.byProvider, same.byProvider); diff != "" {
		t.Errorf("Merge(nil) mismatch (-want +got):\n%s", diff)
	}
	var none *Table
	if diff := cmp.Diff(override.byProvider, none.Merge(override).byProvider); diff != "" {
		t.Errorf("nil table's Merge mismatch (-want +got):\n%s", diff)
	}
}

func TestNilTable(t *testing.T) {
	var tab *Table
	if p, ok := tab.Lookup("openai", "gpt-4o"); ok {
		t.Errorf("got price %+v from a nil table, want none", p)
	}
	if got := tab.Models("openai"); len(got) != 0 {
		t.Errorf("got models %v from a nil table, want none", got)
	}
}

func TestModels(t *testing.T) {
	got := Default().Models("deepseek")
	if want := []string{"deepseek-chat", "deepseek-reasoner"}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
	openai := Default().Models("openai")
	if !slices.IsSorted(openai) || !slices.Contains(openai, "gpt-4o") {
		t.Errorf("got %v, want a sorted list holding gpt-4o", openai)
	}
	if got := Default().Models("nobody"); len(got) != 0 {
		t.Errorf("unknown provider: got %v, want no models", got)
	}
}

func TestLookupAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	tab := Default()
	for _, model := range []string{"gpt-4o", "gpt-4o-2024-08-06", "gpt-4o-audio-preview"} {
		if got := testing.AllocsPerRun(100, func() { tab.Lookup("openai", model) }); got != 0 {
			t.Errorf("Lookup(openai, %q): got %v allocations, want 0", model, got)
		}
	}
}

func BenchmarkLookup(b *testing.B) {
	tab := Default()
	for _, bm := range []struct{ name, provider, model string }{
		{"exact", "openai", "gpt-4o-mini"},
		{"snapshot", "anthropic", "claude-sonnet-4-5-20250929"},
		{"miss", "openai", "gpt-4o-mini-realtime-preview-2024-12-17"},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				tab.Lookup(bm.provider, bm.model)
			}
		})
	}
}

func BenchmarkCost(b *testing.B) {
	p, _ := Default().Lookup("anthropic", "claude-sonnet-4-5")
	u := Usage{PromptTokens: 12000, CompletionTokens: 800, CachedPromptTokens: 9000, CacheWriteTokens: 2000, ReasoningTokens: 300}
	b.ReportAllocs()
	var sink float64
	for b.Loop() {
		sink += p.Cost(u)
	}
	_ = sink
}
