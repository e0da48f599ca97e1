package providertest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/svc-gateway/svc/internal/providertest"
)

// The Responses API driven by the official OpenAI SDK's Responses client.

func newResponsesClient(t *testing.T, opts ...providertest.Option) (*providertest.OpenAI, responses.ResponseService) {
	t.Helper()
	s := providertest.NewOpenAI(t, append([]providertest.Option{providertest.WithAPIKey("sk-test")}, opts...)...)
	c := openai.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey("sk-test"), option.WithMaxRetries(0))
	return s, c.Responses
}

func weatherTool() responses.ToolUnionParam {
	return responses.ToolParamOfFunction("get_weather", map[string]any{
		"type":       "object",
		"properties": map[string]any{"city": map[string]any{"type": "string"}, "unit": map[string]any{"type": "string"}},
		"required":   []string{"city", "unit"},
	}, false)
}

func callOutput(callID, output string) responses.ResponseInputItemUnionParam {
	item := responses.ResponseInputItemParamOfFunctionCallOutput(output)
	item.OfFunctionCallOutput.CallID = openai.String(callID)
	return item
}

// stored is the response's "store" field, which the SDK's Response lacks.
func stored(t *testing.T, r *responses.Response) bool {
	t.Helper()
	var v struct {
		Store *bool `json:"store"`
	}
	if err := json.Unmarshal([]byte(r.RawJSON()), &v); err != nil || v.Store == nil {
		t.Fatalf("no store field in %s (%v)", r.RawJSON(), err)
	}
	return *v.Store
}

func textInput(s string) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfString: openai.String(s)}
}

func itemsInput(items ...responses.ResponseInputItemUnionParam) responses.ResponseNewParamsInputUnion {
	return responses.ResponseNewParamsInputUnion{OfInputItemList: items}
}

// apiError is err as an *openai.Error with status, or fails the test.
func apiError(t *testing.T, err error, status int) *openai.Error {
	t.Helper()
	var e *openai.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want an *openai.Error", err)
	}
	if e.StatusCode != status {
		t.Fatalf("status: got %d, want %d (%v)", e.StatusCode, status, err)
	}
	return e
}

func TestResponsesText(t *testing.T) {
	s, rs := newResponsesClient(t)
	ctx := context.Background()
	const instr, question = "You are terse.", "Say hello to the gateway tests."
	r, err := rs.New(ctx, responses.ResponseNewParams{
		Model: "gpt-4.1-mini", Instructions: openai.String(instr), Input: textInput(question),
	}, option.WithHeader(providertest.HeaderCachedTokens, "2"), option.WithHeader(providertest.HeaderReasoningTokens, "3"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(r.ID, "resp_") || r.Object != "response" || r.Status != "completed" || r.Model != "gpt-4.1-mini" || r.CreatedAt == 0 {
		t.Errorf("got id %q object %q status %q model %q created_at %v", r.ID, r.Object, r.Status, r.Model, r.CreatedAt)
	}
	if r.OutputText() != providertest.DefaultReply || len(r.Output) != 1 {
		t.Fatalf("output: got %d items, text %q, want one message with the reply", len(r.Output), r.OutputText())
	}
	m := r.Output[0]
	if m.Type != "message" || m.Role != "assistant" || m.Status != "completed" || !strings.HasPrefix(m.ID, "msg_") || m.Content[0].Type != "output_text" {
		t.Errorf("message: got %s", m.RawJSON())
	}
	if !stored(t, r) || r.PreviousResponseID != "" || r.Instructions.OfString != instr {
		t.Errorf("store %v, previous_response_id %q, instructions %q", stored(t, r), r.PreviousResponseID, r.Instructions.OfString)
	}
	in := (len(instr) + len(question)) / 4
	out := len(providertest.DefaultReply)/4 + 3
	u := r.Usage
	if u.InputTokens != int64(in) || u.InputTokensDetails.CachedTokens != 2 || u.OutputTokens != int64(out) ||
		u.OutputTokensDetails.ReasoningTokens != 3 || u.TotalTokens != int64(in+out) {
		t.Errorf("usage: got %s, want input %d (cached 2), output %d (reasoning 3)", u.RawJSON(), in, out)
	}
	if got := s.LastRequest(); got.Method != http.MethodPost || got.Path != "/v1/responses" || !strings.Contains(string(got.Body), question) {
		t.Errorf("recorded: got %s %s %s", got.Method, got.Path, got.Body)
	}

	t.Run("reply header", func(t *testing.T) {
		r, err := rs.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: textInput("hi")}, option.WithHeader(providertest.HeaderReply, "ciao ✓"))
		if err != nil {
			t.Fatal(err)
		}
		if r.OutputText() != "ciao ✓" {
			t.Errorf("got %q, want the header's reply", r.OutputText())
		}
	})

	// A continuation counts the whole conversation as input: the earlier
	// input and output, not the earlier instructions.
	t.Run("previous_response_id", func(t *testing.T) {
		const next = "And once more."
		r2, err := rs.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: textInput(next), PreviousResponseID: openai.String(r.ID)})
		if err != nil {
			t.Fatal(err)
		}
		if r2.PreviousResponseID != r.ID || r2.ID == r.ID || r2.OutputText() != providertest.DefaultReply {
			t.Errorf("got id %q previous %q text %q", r2.ID, r2.PreviousResponseID, r2.OutputText())
		}
		want := (len(question) + len(providertest.DefaultReply) + len(next)) / 4
		if r2.Usage.InputTokens != int64(want) {
			t.Errorf("input tokens: got %d, want %d (the conversation's bytes / 4)", r2.Usage.InputTokens, want)
		}
	})

	t.Run("errors", func(t *testing.T) {
		_, err := rs.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: textInput("hi")}, option.WithHeader(providertest.HeaderStatus, "429"))
		if e := apiError(t, err, http.StatusTooManyRequests); e.Code != "rate_limit_exceeded" {
			t.Errorf("code: got %q, want rate_limit_exceeded", e.Code)
		}
		_, err = rs.New(ctx, responses.ResponseNewParams{Input: textInput("hi")})
		if e := apiError(t, err, http.StatusBadRequest); e.Param != "model" || e.Code != "missing_required_parameter" {
			t.Errorf("no model: got param %q code %q", e.Param, e.Code)
		}
		_, err = rs.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: textInput("hi")}, option.WithAPIKey("sk-wrong"))
		if e := apiError(t, err, http.StatusUnauthorized); e.Code != "invalid_api_key" {
			t.Errorf("wrong key: got code %q", e.Code)
		}
		_, err = rs.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: textInput("hi")}, option.WithHeader(providertest.HeaderEchoKey, "422"))
		if e := apiError(t, err, 422); !strings.Contains(e.Message, "sk-test") {
			t.Errorf("echo key: got message %q", e.Message)
		}
	})
}

func TestResponsesFunctionCalling(t *testing.T) {
	_, rs := newResponsesClient(t)
	ctx := context.Background()
	question := "What is the weather in Paris?"
	tools := []responses.ToolUnionParam{responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch), weatherTool()}

	r, err := rs.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: textInput(question), Tools: tools})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Output) != 1 {
		t.Fatalf("output: got %d items, want 1", len(r.Output))
	}
	fc := r.Output[0]
	if fc.Type != "function_call" || fc.Name != "get_weather" || fc.Arguments.OfString != weatherArgs || fc.Status != "completed" ||
		!strings.HasPrefix(fc.CallID, "call_") || !strings.HasPrefix(fc.ID, "fc_") {
		t.Fatalf("function call: got %s", fc.RawJSON())
	}
	if r.Usage.OutputTokens != int64(len(weatherArgs)/4) {
		t.Errorf("output tokens: got %d, want %d (the arguments' bytes / 4)", r.Usage.OutputTokens, len(weatherArgs)/4)
	}
	if len(r.Tools) != 2 || r.Tools[1].Name != "get_weather" {
		t.Errorf("tools: got %d, want both echoed", len(r.Tools))
	}

	t.Run("output with previous_response_id", func(t *testing.T) {
		r2, err := rs.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Tools: tools, PreviousResponseID: openai.String(r.ID),
			Input: itemsInput(callOutput(fc.CallID, `{"temp_c":21}`))})
		if err != nil {
			t.Fatal(err)
		}
		if r2.OutputText() != providertest.DefaultReply {
			t.Errorf("after the tool result: got %s, want the reply", r2.Output[0].RawJSON())
		}
	})

	t.Run("full history without previous_response_id", func(t *testing.T) {
		call := fc.AsFunctionCall().ToParam()
		r2, err := rs.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Tools: tools, Store: openai.Bool(false),
			Input: itemsInput(
				responses.ResponseInputItemParamOfMessage(question, responses.EasyInputMessageRoleUser),
				responses.ResponseInputItemUnionParam{OfFunctionCall: &call},
				callOutput(fc.CallID, `{"temp_c":21}`),
			)})
		if err != nil {
			t.Fatal(err)
		}
		if r2.OutputText() != providertest.DefaultReply {
			t.Errorf("got %s, want the reply", r2.Output[0].RawJSON())
		}
	})

	tests := []struct {
		name     string
		tools    []responses.ToolUnionParam
		choice   responses.ResponseNewParamsToolChoiceUnion
		wantCall string
	}{
		{"built-in tools only", []responses.ToolUnionParam{responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch)}, responses.ResponseNewParamsToolChoiceUnion{}, ""},
		{"tool_choice none", tools, responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsNone)}, ""},
		{"tool_choice required", tools, responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsRequired)}, "get_weather"},
		{"tool_choice named", append(tools, responses.ToolParamOfFunction("get_time", nil, false)),
			responses.ResponseNewParamsToolChoiceUnion{OfFunctionTool: &responses.ToolChoiceFunctionParam{Name: "get_time"}}, "get_time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := rs.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: textInput(question), Tools: tt.tools, ToolChoice: tt.choice})
			if err != nil {
				t.Fatal(err)
			}
			got := ""
			if r.Output[0].Type == "function_call" {
				got = r.Output[0].Name
			}
			if got != tt.wantCall {
				t.Errorf("called %q, want %q", got, tt.wantCall)
			}
		})
	}

	// OpenAI refuses a conversation whose calls and outputs do not pair.
	t.Run("unanswered call", func(t *testing.T) {
		_, err := rs.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", PreviousResponseID: openai.String(r.ID), Input: textInput("never mind")})
		e := apiError(t, err, http.StatusBadRequest)
		if want := "No tool output found for function call " + fc.CallID + "."; e.Message != want || e.Param != "input" {
			t.Errorf("got message %q param %q, want %q, input", e.Message, e.Param, want)
		}
	})
	t.Run("output without call", func(t *testing.T) {
		_, err := rs.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: itemsInput(callOutput("call_nowhere", "{}"))})
		e := apiError(t, err, http.StatusBadRequest)
		if want := "No tool call found for function call output with call_id call_nowhere."; e.Message != want {
			t.Errorf("got message %q, want %q", e.Message, want)
		}
	})
}

func TestResponsesStoreAndRetrieve(t *testing.T) {
	s, rs := newResponsesClient(t)
	ctx := context.Background()
	params := responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: textInput("Remember me.")}

	t.Run("get and delete", func(t *testing.T) {
		r, err := rs.New(ctx, params)
		if err != nil {
			t.Fatal(err)
		}
		got, err := rs.Get(ctx, r.ID, responses.ResponseGetParams{})
		if err != nil {
			t.Fatal(err)
		}
		if got.RawJSON() != r.RawJSON() {
			t.Errorf("GET: got %s, want the response as created %s", got.RawJSON(), r.RawJSON())
		}
		if err := rs.Delete(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
		if s.LastRequest().Method != http.MethodDelete {
			t.Errorf("recorded %s, want DELETE", s.LastRequest().Method)
		}
		_, err = rs.Get(ctx, r.ID, responses.ResponseGetParams{})
		if e := apiError(t, err, http.StatusNotFound); e.Message != "Response with id '"+r.ID+"' not found." {
			t.Errorf("GET after DELETE: got %q", e.Message)
		}
		apiError(t, rs.Delete(ctx, r.ID), http.StatusNotFound)
		_, err = rs.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: textInput("hi"), PreviousResponseID: openai.String(r.ID)})
		apiError(t, err, http.StatusNotFound)
	})

	t.Run("store false", func(t *testing.T) {
		p := params
		p.Store = openai.Bool(false)
		r, err := rs.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if stored(t, r) {
			t.Error("store: got true, want false")
		}
		_, err = rs.Get(ctx, r.ID, responses.ResponseGetParams{})
		apiError(t, err, http.StatusNotFound)
		_, err = rs.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: textInput("hi"), PreviousResponseID: openai.String(r.ID)})
		e := apiError(t, err, http.StatusNotFound)
		if e.Message != "Previous response with id '"+r.ID+"' not found." || e.Type != "invalid_request_error" ||
			e.Param != "previous_response_id" || e.Code != "previous_response_not_found" {
			t.Errorf("got message %q type %q param %q code %q", e.Message, e.Type, e.Param, e.Code)
		}
	})

	t.Run("input items", func(t *testing.T) {
		r, err := rs.New(ctx, responses.ResponseNewParams{Model: "gpt-4.1-mini", Input: itemsInput(
			responses.ResponseInputItemParamOfMessage("Be brief.", responses.EasyInputMessageRoleDeveloper),
			responses.ResponseInputItemParamOfMessage(responses.ResponseInputMessageContentListParam{
				{OfInputText: &responses.ResponseInputTextParam{Text: "part one"}},
				{OfInputText: &responses.ResponseInputTextParam{Text: "part two"}},
			}, responses.EasyInputMessageRoleUser),
			responses.ResponseInputItemParamOfMessage("Earlier answer.", responses.EasyInputMessageRoleAssistant),
		)})
		if err != nil {
			t.Fatal(err)
		}
		if want := (len("Be brief.") + len("part one") + len("part two") + len("Earlier answer.")) / 4; r.Usage.InputTokens != int64(want) {
			t.Errorf("input tokens: got %d, want %d", r.Usage.InputTokens, want)
		}
		page, err := rs.InputItems.List(ctx, r.ID, responses.InputItemListParams{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Data) != 3 || page.HasMore {
			t.Fatalf("got %d items, has_more %v, want 3 and false", len(page.Data), page.HasMore)
		}
		// Newest first by default; string content listed as one part.
		type part struct{ Type, Text string }
		parts := func(it responses.ResponseItemUnion) []part {
			var v struct{ Content []part }
			if err := json.Unmarshal([]byte(it.RawJSON()), &v); err != nil {
				t.Fatal(err)
			}
			return v.Content
		}
		last := page.Data[0]
		if last.Type != "message" || last.Role != "assistant" || !strings.HasPrefix(last.ID, "msg_") ||
			!slices.Equal(parts(last), []part{{"output_text", "Earlier answer."}}) {
			t.Errorf("first listed: got %s", last.RawJSON())
		}
		if first := page.Data[2]; first.Role != "developer" || !slices.Equal(parts(first), []part{{"input_text", "Be brief."}}) {
			t.Errorf("last listed: got %s", first.RawJSON())
		}
		if mid := page.Data[1]; !slices.Equal(parts(mid), []part{{"input_text", "part one"}, {"input_text", "part two"}}) {
			t.Errorf("middle: got %s", mid.RawJSON())
		}

		asc, err := rs.InputItems.List(ctx, r.ID, responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc, Limit: openai.Int(2)})
		if err != nil {
			t.Fatal(err)
		}
		if len(asc.Data) != 2 || !asc.HasMore || asc.Data[0].ID != page.Data[2].ID || asc.Data[1].ID != page.Data[1].ID {
			t.Errorf("asc, limit 2: got %d items (has_more %v) %s", len(asc.Data), asc.HasMore, asc.RawJSON())
		}
		var raw struct {
			FirstID string `json:"first_id"`
			LastID  string `json:"last_id"`
		}
		_ = json.Unmarshal([]byte(asc.RawJSON()), &raw)
		if raw.FirstID != asc.Data[0].ID || raw.LastID != asc.Data[1].ID {
			t.Errorf("first_id, last_id: got %q, %q", raw.FirstID, raw.LastID)
		}

		var ids []string
		iter := rs.InputItems.ListAutoPaging(ctx, r.ID, responses.InputItemListParams{Order: responses.InputItemListParamsOrderAsc, Limit: openai.Int(1)})
		for iter.Next() {
			ids = append(ids, iter.Current().ID)
		}
		if err := iter.Err(); err != nil || len(ids) != 3 || ids[2] != page.Data[0].ID {
			t.Errorf("paging one by one: got %v, %v", ids, err)
		}

		_, err = rs.InputItems.List(ctx, "resp_unknown", responses.InputItemListParams{})
		apiError(t, err, http.StatusNotFound)
	})

	t.Run("bounded", func(t *testing.T) {
		s, rs := newResponsesClient(t, providertest.WithStoredResponses(2))
		var ids []string
		for range 3 {
			r, err := rs.New(ctx, params)
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, r.ID)
		}
		if n := s.StoredResponses(); n != 2 {
			t.Errorf("stored: got %d, want 2", n)
		}
		_, err := rs.Get(ctx, ids[0], responses.ResponseGetParams{})
		apiError(t, err, http.StatusNotFound)
		if _, err := rs.Get(ctx, ids[2], responses.ResponseGetParams{}); err != nil {
			t.Errorf("newest: %v", err)
		}
	})
}

func TestResponsesInvalidRequests(t *testing.T) {
	s := providertest.NewOpenAI(t)
	tests := []struct {
		name, body, param, code string
	}{
		{"not JSON", `{"model":`, "", ""},
		{"no model", `{"input":"hi"}`, "model", "missing_required_parameter"},
		{"input an object", `{"model":"m","input":{"role":"user"}}`, "input", "invalid_type"},
		{"item not an object", `{"model":"m","input":["hi"]}`, "input[0]", "invalid_type"},
		{"item without type or role", `{"model":"m","input":[{"content":"hi"}]}`, "input[0].type", "missing_required_parameter"},
		{"unknown item type", `{"model":"m","input":[{"type":"telepathy"}]}`, "input[0].type", "invalid_value"},
		{"bad role", `{"model":"m","input":[{"role":"robot","content":"hi"}]}`, "input[0].role", "invalid_value"},
		{"message without content", `{"model":"m","input":[{"type":"message","role":"user"}]}`, "input[0].content", "missing_required_parameter"},
		{"call without call_id", `{"model":"m","input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, "input[0].call_id", "missing_required_parameter"},
		{"call arguments an object", `{"model":"m","input":[{"type":"function_call","call_id":"c","name":"f","arguments":{}}]}`, "input[0].arguments", "invalid_type"},
		{"output without output", `{"model":"m","input":[{"type":"function_call_output","call_id":"c"}]}`, "input[0].output", "missing_required_parameter"},
		{"function tool without name", `{"model":"m","input":"hi","tools":[{"type":"function"}]}`, "tools[0].name", "missing_required_parameter"},
		{"background", `{"model":"m","input":"hi","background":true}`, "background", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var code *string
			if tt.code != "" {
				code = &tt.code
			}
			resp := post(t, s.URL()+"/responses", tt.body, nil)
			raw, _ := io.ReadAll(resp.Body)
			resp.Body = io.NopCloser(bytes.NewReader(raw))
			checkError(t, resp, http.StatusBadRequest, "invalid_request_error", code)
			var e errorJSON
			_ = json.Unmarshal(raw, &e)
			if got := ptrString(e.Error.Param); got != tt.param {
				t.Errorf("param: got %q, want %q (%s)", got, tt.param, raw)
			}
		})
	}
}

func ptrString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
