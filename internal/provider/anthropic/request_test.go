package anthropic_test

import (
	"context"
	"encoding/json"
	"errors"
	"go/parser"
	"go/token"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/anthropic"
)

// TestRequestErrors covers the requests Anthropic cannot take: each is an
// InvalidRequest naming the field, before anything is sent.
func TestRequestErrors(t *testing.T) {
	tests := []struct {
		name, body, param, msgHas string
	}{
		{"input audio", `{"model":"m","messages":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"UklGRg==","format":"wav"}}]}]}`,
			"messages[0].content[0].type", "Anthropic does not accept input_audio"},
		{"invalid tool call arguments", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"{not json"}}]}]}`,
			"messages[1].tool_calls[0].function.arguments", "not a JSON object"},
		{"tool call arguments not an object", `{"model":"m","messages":[{"role":"user","content":"hi"},{"role":"assistant","tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"[1]"}}]}]}`,
			"messages[1].tool_calls[0].function.arguments", "not a JSON object"},
		{"image neither URL nor data URI", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"ftp://x/y.png"}}]}]}`,
			"messages[0].content[0].image_url.url", "https URL"},
		{"image of an unsupported type", `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/tiff;base64,AAAA"}}]}]}`,
			"messages[0].content[0].image_url.url", "image/tiff"},
		{"file that is not a PDF", `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_data":"data:text/csv;base64,YSxi"}}]}]}`,
			"messages[0].content[0].file.file_data", "PDF only"},
		{"file id", `{"model":"m","messages":[{"role":"user","content":[{"type":"file","file":{"file_id":"file-abc"}}]}]}`,
			"messages[0].content[0].file.file_id", "file ids"},
		{"function role", `{"model":"m","messages":[{"role":"function","name":"f","content":"x"}]}`,
			"messages[0].role", "function"},
		{"only a system message", `{"model":"m","messages":[{"role":"system","content":"be nice"}]}`,
			"messages", "at least one user"},
		{"temperature above one", `{"model":"m","temperature":1.5,"messages":[{"role":"user","content":"hi"}]}`, "temperature", "between 0 and 1"},
		{"n above one", `{"model":"m","n":2,"messages":[{"role":"user","content":"hi"}]}`, "n", "n > 1"},
		{"tool choice unknown", `{"model":"m","tool_choice":"sometimes","tools":[{"type":"function","function":{"name":"f"}}],"messages":[{"role":"user","content":"hi"}]}`,
			"tool_choice", "sometimes"},
		{"tool choice without tools", `{"model":"m","tool_choice":"required","messages":[{"role":"user","content":"hi"}]}`,
			"tool_choice", "needs tools"},
		{"tool not a function", `{"model":"m","tools":[{"type":"custom","function":{"name":"f"}}],"messages":[{"role":"user","content":"hi"}]}`,
			"tools[0].type", "custom"},
		{"tool result without id", `{"model":"m","messages":[{"role":"tool","content":"42"}]}`,
			"messages[0].tool_call_id", "required"},
		{"empty user message", `{"model":"m","messages":[{"role":"user","content":""}]}`,
			"messages[0].content", "empty"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := llm.DecodeChatRequest([]byte(tt.body))
			if err != nil {
				t.Fatalf("the body must be a valid chat request: %v", err)
			}
			hreq, err := anthropic.New().NewChatRequest(context.Background(),
				provider.Deployment{Provider: "anthropic", Model: "claude-sonnet-4-5", BaseURL: "https://api.anthropic.com"},
				provider.ChatCall{Req: req, Raw: []byte(tt.body)})
			var e *apierr.Error
			if !errors.As(err, &e) {
				t.Fatalf("got request %v, error %v; want an *apierr.Error", hreq, err)
			}
			if e.Kind != apierr.InvalidRequest || e.Status() != http.StatusBadRequest {
				t.Errorf("kind: got %d (HTTP %d), want InvalidRequest (400)", e.Kind, e.Status())
			}
			if e.Param != tt.param {
				t.Errorf("param: got %q, want %q", e.Param, tt.param)
			}
			if !strings.Contains(e.Message, tt.msgHas) {
				t.Errorf("message: got %q, want it to contain %q", e.Message, tt.msgHas)
			}
		})
	}
}

// TestModels covers the ModelLister ability.
func TestModels(t *testing.T) {
	a := anthropic.New()
	req, err := a.NewModelsRequest(context.Background(), provider.Deployment{BaseURL: "https://api.anthropic.com/"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := req.Method+" "+req.URL.String(), "GET https://api.anthropic.com/v1/models?limit=1000"; got != want {
		t.Errorf("request: got %s, want %s", got, want)
	}
	if got := req.Header.Get("anthropic-version"); got != anthropic.DefaultVersion {
		t.Errorf("anthropic-version: got %q, want %q", got, anthropic.DefaultVersion)
	}
	ids, err := a.DecodeModels([]byte(`{"data":[{"type":"model","id":"claude-sonnet-4-5-20250929","display_name":"Claude Sonnet 4.5","created_at":"2025-09-29T00:00:00Z"},{"type":"model","id":"claude-opus-4-1-20250805"}],"has_more":false,"first_id":"claude-sonnet-4-5-20250929","last_id":"claude-opus-4-1-20250805"}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805"}, ids); diff != "" {
		t.Errorf("ids (-want +got):\n%s", diff)
	}
	if _, err := a.DecodeModels([]byte(`<html>`)); apierr.KindOf(err) != apierr.UpstreamError {
		t.Errorf("invalid list: got %v, want an UpstreamError", err)
	}
}

// TestNativeUsage reads usage from a non-stream Messages answer.
func TestNativeUsage(t *testing.T) {
	u, model, err := anthropic.NativeUsage([]byte(`{"id":"msg_1","type":"message","role":"assistant","model":"claude-haiku-4-5","content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn","usage":{"input_tokens":10,"cache_creation_input_tokens":20,"cache_read_input_tokens":30,"output_tokens":5}}`))
	if err != nil {
		t.Fatal(err)
	}
	want := llm.Usage{PromptTokens: 60, CompletionTokens: 5, TotalTokens: 65,
		PromptTokensDetails: &llm.PromptTokensDetails{CachedTokens: 30, CacheWriteTokens: 20}}
	if diff := cmp.Diff(want, u); diff != "" || model != "claude-haiku-4-5" {
		t.Errorf("got model %q, usage diff (-want +got):\n%s", model, diff)
	}
	for _, body := range []string{`{"type":"error","error":{"type":"api_error","message":"x"}}`, `nope`} {
		if _, _, err := anthropic.NativeUsage([]byte(body)); apierr.KindOf(err) != apierr.UpstreamError {
			t.Errorf("NativeUsage(%s): got %v, want an UpstreamError", body, err)
		}
	}
}

// TestRequestImports keeps the adapter pure: of svc, its non-test files
// import only llm, llm/sse, apierr and provider.
func TestRequestImports(t *testing.T) {
	allowed := map[string]bool{
		"github.com/svc-gateway/svc/internal/llm":      true,
		"github.com/svc-gateway/svc/internal/llm/sse":  true,
		"github.com/svc-gateway/svc/internal/apierr":   true,
		"github.com/svc-gateway/svc/internal/provider": true,
	}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if strings.Contains(p, ".") && !allowed[p] {
				t.Errorf("%s imports %s; an adapter imports, beyond the standard library, only llm, llm/sse, apierr and provider", f, p)
			}
		}
	}
}

// TestMaxTokens checks the precedence of max_tokens over
// max_completion_tokens, and the default.
func TestMaxTokens(t *testing.T) {
	for _, tt := range []struct {
		extra string
		want  int
	}{
		{``, anthropic.DefaultMaxTokens},
		{`"max_completion_tokens":300,`, 300},
		{`"max_tokens":200,"max_completion_tokens":300,`, 200},
	} {
		req, err := llm.DecodeChatRequest([]byte(`{` + tt.extra + `"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		if err != nil {
			t.Fatal(err)
		}
		body, err := anthropic.MessagesBody(req, "claude")
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			MaxTokens int `json:"max_tokens"`
		}
		if err := json.Unmarshal(body, &got); err != nil || got.MaxTokens != tt.want {
			t.Errorf("%s: got max_tokens %d (%v), want %d", tt.extra, got.MaxTokens, err, tt.want)
		}
	}
}
