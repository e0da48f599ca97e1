package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"
)

var weatherFn = responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
	Name:        "get_weather",
	Description: openai.String("Get the weather"),
	Strict:      openai.Bool(false),
	Parameters: map[string]any{"type": "object",
		"properties": map[string]any{"location": map[string]any{"type": "string"}, "unit": map[string]any{"type": "string"}},
		"required":   []string{"location", "unit"}},
}}

// streamed reads a Responses stream with the SDK: the event types in
// order, and the final response.
func streamed(t *testing.T, st interface {
	Next() bool
	Current() responses.ResponseStreamEventUnion
	Err() error
}) ([]string, *responses.Response) {
	t.Helper()
	var types []string
	var final *responses.Response
	for st.Next() {
		ev := st.Current()
		types = append(types, ev.Type)
		if ev.Type == "response.completed" {
			r := ev.Response
			final = &r
		}
	}
	if err := st.Err(); err != nil {
		t.Fatalf("stream: %v (events %v)", err, types)
	}
	return types, final
}

// The OpenAI Go SDK's Responses client through svc to a provider without
// the Responses API (the fake Anthropic): a plain answer, streamed
// function calling, the tool's result continued with
// previous_response_id, and the responses read back and deleted — all
// scoped to the caller.
func TestResponsesTranslatedWithSDK(t *testing.T) {
	g, fake := anthropicGateway(t)
	key, _ := g.newKey(nil)
	client := g.client(key)
	ctx := context.Background()

	var httpResp *http.Response
	r, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model:        shared.ResponsesModel("claude-sonnet-4-5"),
		Instructions: openai.String("Be brief."),
		Input:        responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello.")},
	}, option.WithResponseInto(&httpResp))
	if err != nil {
		t.Fatal(err)
	}
	if r.OutputText() == "" || r.Status != "completed" || r.Usage.InputTokens == 0 || !strings.HasPrefix(r.ID, "resp_") {
		t.Errorf("response: status %s, text %q, usage %+v, id %s", r.Status, r.OutputText(), r.Usage, r.ID)
	}
	if cost, _ := strconv.ParseFloat(httpResp.Header.Get("x-svc-cost-usd"), 64); cost <= 0 || httpResp.Header.Get("x-svc-provider") != "anthropic" {
		t.Errorf("headers: provider %q cost %q", httpResp.Header.Get("x-svc-provider"), httpResp.Header.Get("x-svc-cost-usd"))
	}
	var up map[string]any
	json.Unmarshal(lastPost(t, fake.Requests()).Body, &up)
	if up["system"] == nil || !strings.Contains(string(lastPost(t, fake.Requests()).Body), "Be brief.") {
		t.Errorf("upstream request %v: the instructions did not become the system prompt", up)
	}

	// Streamed function calling.
	st := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
		Model: shared.ResponsesModel("claude-sonnet-4-5"),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")},
		Tools: []responses.ToolUnionParam{weatherFn},
	})
	types, final := streamed(t, st)
	for _, want := range []string{"response.created", "response.output_item.added", "response.function_call_arguments.delta", "response.function_call_arguments.done", "response.output_item.done", "response.completed"} {
		if !contains(types, want) {
			t.Errorf("stream events %v lack %s", types, want)
		}
	}
	if final == nil {
		t.Fatal("no response.completed")
	}
	var call *responses.ResponseOutputItemUnion
	for i := range final.Output {
		if final.Output[i].Type == "function_call" {
			call = &final.Output[i]
		}
	}
	if call == nil || call.Name != "get_weather" || !strings.HasPrefix(call.CallID, "toolu_") || !json.Valid([]byte(call.Arguments.OfString)) {
		t.Fatalf("function call = %+v", call)
	}

	// The tool's result, continuing the streamed response.
	out := responses.ResponseInputItemParamOfFunctionCallOutput(`{"temp_c":21}`)
	out.OfFunctionCallOutput.CallID = openai.String(call.CallID)
	next, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model:              shared.ResponsesModel("claude-sonnet-4-5"),
		PreviousResponseID: openai.String(final.ID),
		Input:              responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{out}},
		Tools:              []responses.ToolUnionParam{weatherFn},
	})
	if err != nil {
		t.Fatal(err)
	}
	body := string(lastPost(t, fake.Requests()).Body)
	for _, want := range []string{"Weather in Paris?", `"tool_use"`, `"tool_result"`, call.CallID, "temp_c"} {
		if !strings.Contains(body, want) {
			t.Errorf("continued request upstream lacks %s: %s", want, body)
		}
	}
	if next.OutputText() == "" || next.PreviousResponseID != final.ID {
		t.Errorf("continued response: text %q previous %q", next.OutputText(), next.PreviousResponseID)
	}

	// Read back, listed, refused to others, deleted.
	got, err := client.Responses.Get(ctx, next.ID, responses.ResponseGetParams{})
	if err != nil || got.ID != next.ID || got.OutputText() != next.OutputText() {
		t.Errorf("Get: %v %+v", err, got)
	}
	items, err := client.Responses.InputItems.List(ctx, next.ID, responses.InputItemListParams{})
	if err != nil || len(items.Data) != 1 || items.Data[0].Type != "function_call_output" {
		t.Errorf("input items: %v %+v", err, items)
	}
	other, _ := g.newKey(nil)
	stranger := g.client(other)
	if _, err := stranger.Responses.Get(ctx, next.ID, responses.ResponseGetParams{}); status(err) != http.StatusNotFound {
		t.Errorf("another key's Get: %v, want 404", err)
	}
	_, err = stranger.Responses.New(ctx, responses.ResponseNewParams{
		Model: shared.ResponsesModel("claude-sonnet-4-5"), PreviousResponseID: openai.String(next.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("And tomorrow?")},
	})
	if status(err) != http.StatusNotFound || param(err) != "previous_response_id" {
		t.Errorf("another key continuing: %v, want 404 naming previous_response_id", err)
	}
	if err := client.Responses.Delete(ctx, next.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Responses.Get(ctx, next.ID, responses.ResponseGetParams{}); status(err) != http.StatusNotFound {
		t.Errorf("Get after Delete: %v, want 404", err)
	}
}

// store:false keeps nothing; a built-in tool a translation cannot carry is
// a 400 naming it; malformed items are 400s naming the field.
func TestResponsesRefusals(t *testing.T) {
	g, _ := anthropicGateway(t)
	key, _ := g.newKey(nil)
	client := g.client(key)
	ctx := context.Background()
	r, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: shared.ResponsesModel("claude-sonnet-4-5"), Store: openai.Bool(false),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Hi")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Responses.Get(ctx, r.ID, responses.ResponseGetParams{}); status(err) != http.StatusNotFound {
		t.Errorf("Get of a store:false response: %v, want 404", err)
	}
	_, err = client.Responses.New(ctx, responses.ResponseNewParams{
		Model: shared.ResponsesModel("claude-sonnet-4-5"),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("News?")},
		Tools: []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}},
	})
	if status(err) != http.StatusBadRequest || param(err) != "tools[0].type" || !strings.Contains(message(err), "web_search") {
		t.Errorf("web_search to Anthropic: %v, want 400 naming the tool", err)
	}
	for _, tc := range []struct{ body, param string }{
		{`{"model":"claude-sonnet-4-5","input":[{"type":"bogus"}]}`, "input[0].type"},
		{`{"model":"claude-sonnet-4-5","input":[{"role":"user","content":[{"type":"input_text"}]}]}`, "input[0].content[0].text"},
		{`{"model":"claude-sonnet-4-5","input":"hi","previous_response_id":"resp_nope"}`, "previous_response_id"},
	} {
		resp, body := g.post("/v1/responses", key, []byte(tc.body), nil)
		var e struct {
			Error struct{ Param string } `json:"error"`
		}
		json.Unmarshal(body, &e)
		if resp.StatusCode >= 500 || resp.StatusCode < 400 || e.Error.Param != tc.param {
			t.Errorf("%s: %d %s, want a 4xx naming %s", tc.body, resp.StatusCode, body, tc.param)
		}
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// status is the HTTP status of an SDK error, 0 for none.
func status(err error) int {
	var e *openai.Error
	if errors.As(err, &e) {
		return e.StatusCode
	}
	return 0
}

// param and message are an SDK error's error.param and error.message.
func param(err error) string {
	var e *openai.Error
	if errors.As(err, &e) {
		return e.Param
	}
	return ""
}

func message(err error) string {
	var e *openai.Error
	if errors.As(err, &e) {
		return e.Message
	}
	return ""
}
