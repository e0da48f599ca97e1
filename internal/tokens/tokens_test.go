package tokens

import (
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/svc-gateway/svc/internal/llm"
)

func TestEncodingFor(t *testing.T) {
	tests := []struct {
		model string
		want  Encoding
	}{
		{"gpt-4o", O200kBase},
		{"gpt-4o-mini-2024-07-18", O200kBase},
		{"openai/gpt-4.1-nano", O200kBase},
		{"ft:gpt-4o-mini-2024-07-18:acme::abc123", O200kBase},
		{"GPT-5", O200kBase},
		{"o3-mini", O200kBase},
		{"o1", O200kBase},
		{"o4-mini-2025-04-16", O200kBase},
		{"chatgpt-4o-latest", O200kBase},
		{"gpt-oss-120b", O200kBase},
		{"gpt-4", Cl100kBase},
		{"gpt-4-turbo", Cl100kBase},
		{"gpt-3.5-turbo-0125", Cl100kBase},
		{"gpt-35-turbo", Cl100kBase},
		{"text-embedding-3-small", Cl100kBase},
		{"text-embedding-ada-002", Cl100kBase},
		{"claude-sonnet-4-5", Unknown},
		{"gemini-2.5-flash", Unknown},
		{"meta-llama/Llama-3.3-70B-Instruct", Unknown},
		{"mistral-large-latest", Unknown},
		{"my-azure-deployment", Unknown},
		{"", Unknown},
	}
	for _, tt := range tests {
		if got := EncodingFor(tt.model); got != tt.want {
			t.Errorf("EncodingFor(%q): got %q, want %q", tt.model, got, tt.want)
		}
	}
}

// TestChatPromptCookbook checks ChatPrompt against the prompt tokens the
// OpenAI API billed for the OpenAI Cookbook's example conversation ("How to
// count tokens with tiktoken"): 129 for gpt-3.5-turbo and gpt-4, 124 for
// gpt-4o and gpt-4o-mini.
func TestChatPromptCookbook(t *testing.T) {
	msg := func(role, name, content string) llm.Message {
		return llm.Message{Role: role, Name: name, Content: llm.TextContent(content)}
	}
	req := &llm.ChatRequest{Messages: []llm.Message{
		msg("system", "", "You are a helpful, pattern-following assistant that translates corporate jargon into plain English."),
		msg("system", "example_user", "New synergies will help drive top-line growth."),
		msg("system", "example_assistant", "Things working well together will increase revenue."),
		msg("system", "example_user", "Let's circle back when we have more bandwidth to touch base on opportunities for increased leverage."),
		msg("system", "example_assistant", "Let's talk later when we're less busy about how to do better."),
		msg("user", "", "This late pivot means we don't have time to boil the ocean for the client deliverable."),
	}}
	for model, want := range map[string]int64{"gpt-3.5-turbo": 129, "gpt-4-0613": 129, "gpt-4o": 124, "gpt-4o-mini": 124} {
		if got := ChatPrompt(model, req); got != want {
			t.Errorf("ChatPrompt(%q, cookbook example): got %d, want %d (billed by the API)", model, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	tests := []struct {
		model, text string
		want        int64
	}{
		{"gpt-4o", "", 0},
		{"gpt-4o", "hello world", 2},
		{"gpt-4", "hello world", 2},
		// cl100k: 1.5×2 + 0 digits + ⌈1/4⌉ spaces + 0 + 1.
		{"claude-sonnet-4", "hello world", 5},
		{"claude-sonnet-4", "", 0},
	}
	for _, tt := range tests {
		if got := Count(tt.model, tt.text); got != tt.want {
			t.Errorf("Count(%q, %q): got %d, want %d", tt.model, tt.text, got, tt.want)
		}
	}
}

// TestBeyondExactBytes checks that text past ExactBytes in one call counts
// one token per byte (and is not tokenized).
func TestBeyondExactBytes(t *testing.T) {
	big := strings.Repeat("a", ExactBytes+1)
	if got, want := Count("gpt-4o", big), int64(len(big)+1); got != want {
		t.Errorf("Count of %d bytes: got %d, want %d", len(big), got, want)
	}
	half := strings.Repeat("word ", (ExactBytes/2-100)/5)
	req := &llm.ChatRequest{Messages: []llm.Message{
		{Role: "user", Content: llm.TextContent(half)},
		{Role: "user", Content: llm.TextContent(half)},
		{Role: "user", Content: llm.TextContent(half)},
	}}
	exact := Count("gpt-4o", half)
	got := ChatPrompt("gpt-4o", req)
	if want := 2*exact + int64(len(half)+1) + 3*(3+1) + 3; got != want {
		t.Errorf("ChatPrompt of 3 × %d bytes: got %d, want %d (two counted, the third at a token per byte)", len(half), got, want)
	}
}

func TestAddSaturates(t *testing.T) {
	if got := add(math.MaxInt64-1, 1, 1); got != math.MaxInt64 {
		t.Errorf("add(MaxInt64-1, 1, 1): got %d, want MaxInt64", got)
	}
	if got := add(2, 3); got != 5 {
		t.Errorf("add(2, 3): got %d, want 5", got)
	}
}

func TestChatPromptParts(t *testing.T) {
	text := "Describe this image."
	base := func(model string) int64 { return 3 + (3 + Count(model, "user")) }
	img := func(url, detail string) llm.Part {
		return llm.Part{Type: "image_url", ImageURL: &llm.ImageURL{URL: url, Detail: detail}}
	}
	audio := strings.Repeat("A", 10_000)
	tests := []struct {
		name  string
		model string
		parts []llm.Part
		want  func(model string) int64
	}{
		{"text part", "gpt-4o", []llm.Part{{Type: "text", Text: text}},
			func(m string) int64 { return base(m) + Count(m, text) }},
		{"image, gpt-4o", "gpt-4o", []llm.Part{{Type: "text", Text: text}, img("https://example.com/a.png", "")},
			func(m string) int64 { return base(m) + Count(m, text) + ImageTokens }},
		{"image, gpt-4o-mini", "gpt-4o-mini", []llm.Part{img("data:image/png;base64,AAAA", "high")},
			func(m string) int64 { return base(m) + MiniImageTokens }},
		{"low-detail image, gpt-4o-mini", "gpt-4o-mini", []llm.Part{img("https://example.com/a.png", "low")},
			func(m string) int64 { return base(m) + MiniLowImageTokens }},
		{"image, claude", "claude-sonnet-4", []llm.Part{img("https://example.com/a.png", "")},
			func(m string) int64 { return base(m) + OtherImageTokens }},
		{"audio", "gpt-4o-audio-preview", []llm.Part{{Type: "input_audio", InputAudio: &llm.InputAudio{Data: audio, Format: "wav"}}},
			func(m string) int64 { return base(m) + int64(len(audio)/AudioBytesPerToken) + 1 }},
		{"uploaded file", "gpt-4o", []llm.Part{{Type: "file", File: &llm.File{FileID: "file-abc"}}},
			func(m string) int64 { return base(m) + FileTokens }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req := &llm.ChatRequest{Messages: []llm.Message{{Role: "user", Content: llm.Content{IsParts: true, Parts: tt.parts, Present: true}}}}
			if got, want := ChatPrompt(tt.model, req), tt.want(tt.model); got != want {
				t.Errorf("ChatPrompt: got %d, want %d", got, want)
			}
		})
	}
}

// TestChatPromptTools checks that tool definitions and tool calls count, as
// their JSON and text plus the fixed overheads.
func TestChatPromptTools(t *testing.T) {
	params := `{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"]}`
	args := `{"city":"Paris"}`
	req := &llm.ChatRequest{
		Messages: []llm.Message{
			{Role: "user", Content: llm.TextContent("Weather in Paris?")},
			{Role: "assistant", Content: llm.Content{Null: true, Present: true}, ToolCalls: []llm.ToolCall{
				{ID: "call_1", Type: "function", Function: llm.FunctionCall{Name: "get_weather", Arguments: args}}}},
			{Role: "tool", ToolCallID: "call_1", Content: llm.TextContent("18°C, sunny")},
		},
		Tools: []llm.Tool{{Type: "function", Function: llm.FunctionDecl{Name: "get_weather", Description: "Current weather", Parameters: []byte(params)}}},
	}
	m := "gpt-4o"
	c := func(s string) int64 { return Count(m, s) }
	want := 3 +
		3 + c("user") + c("Weather in Paris?") +
		3 + c("assistant") + toolOverhead + c("call_1") + c("get_weather") + c(args) +
		3 + c("tool") + c("call_1") + c("18°C, sunny") +
		toolsOverhead + toolOverhead + c("get_weather") + c("Current weather") + c(params)
	if got := ChatPrompt(m, req); got != want {
		t.Errorf("ChatPrompt with tools: got %d, want %d", got, want)
	}
	if got := ChatPrompt(m, nil); got != 0 {
		t.Errorf("ChatPrompt(nil): got %d, want 0", got)
	}
}

// TestCacheConcurrent counts the same texts from many goroutines (run with
// -race) and checks that cached counts equal fresh ones.
func TestCacheConcurrent(t *testing.T) {
	texts := []string{strings.Repeat("alpha beta ", 100), strings.Repeat("γάμμα δέλτα ", 80), strings.Repeat("x", 300)}
	want := make([]int64, len(texts))
	for i, s := range texts {
		want[i] = exact(o200k(), s)
	}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				k := (g + i) % len(texts)
				if got := Count("gpt-4o", texts[k]); got != want[k] {
					t.Errorf("Count(text %d): got %d, want %d", k, got, want[k])
					return
				}
			}
		})
	}
	wg.Wait()
}
