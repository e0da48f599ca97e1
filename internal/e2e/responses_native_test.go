package e2e

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/providertest"
)

// lastCall is the last request of method on path among reqs.
func lastCall(t *testing.T, reqs []providertest.Recorded, method, path string) providertest.Recorded {
	t.Helper()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Method == method && reqs[i].Path == path {
			return reqs[i]
		}
	}
	t.Fatalf("no %s %s upstream among %d requests", method, path, len(reqs))
	return providertest.Recorded{}
}

// The OpenAI Go SDK's Responses client through svc to OpenAI (the fake),
// which serves the API itself: the body and the stream's events pass
// untranslated, previous_response_id goes to OpenAI as it is, built-in
// tools pass, and DELETE reaches OpenAI too.
func TestResponsesForwardedWithSDK(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithAPIKey(upstreamKey))
	g := start(t, fake, nil)
	key, _ := g.newKey(nil)
	client := g.client(key)
	ctx := context.Background()

	var httpResp *http.Response
	r, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: shared.ResponsesModel("gpt-4o-mini"),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Say hello.")},
		Tools: []responses.ToolUnionParam{{OfWebSearch: &responses.WebSearchToolParam{Type: responses.WebSearchToolTypeWebSearch}}},
	}, option.WithResponseInto(&httpResp))
	if err != nil {
		t.Fatal(err)
	}
	up := lastCall(t, fake.Requests(), http.MethodPost, "/v1/responses")
	if r.OutputText() == "" || httpResp.Header.Get("x-svc-provider") != "openai" || !strings.Contains(string(up.Body), "web_search") {
		t.Errorf("forwarded: text %q provider %q, upstream body %s", r.OutputText(), httpResp.Header.Get("x-svc-provider"), up.Body)
	}
	if up.Header.Get("Authorization") != "Bearer "+upstreamKey {
		t.Error("upstream did not get svc's provider key")
	}

	st := client.Responses.NewStreaming(ctx, responses.ResponseNewParams{
		Model: shared.ResponsesModel("gpt-4o-mini"),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")},
		Tools: []responses.ToolUnionParam{weatherFn},
	})
	types, final := streamed(t, st)
	if final == nil || !contains(types, "response.function_call_arguments.delta") {
		t.Fatalf("stream events %v, final %v", types, final)
	}
	var callID string
	for _, it := range final.Output {
		if it.Type == "function_call" {
			callID = it.CallID
		}
	}
	out := responses.ResponseInputItemParamOfFunctionCallOutput(`{"temp_c":21}`)
	out.OfFunctionCallOutput.CallID = openai.String(callID)
	next, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: shared.ResponsesModel("gpt-4o-mini"), PreviousResponseID: openai.String(final.ID),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{out}},
		Tools: []responses.ToolUnionParam{weatherFn},
	})
	if err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	json.Unmarshal(lastCall(t, fake.Requests(), http.MethodPost, "/v1/responses").Body, &body)
	if body["previous_response_id"] != final.ID {
		t.Errorf("continuation upstream %v: previous_response_id not forwarded to the provider that holds it", body)
	}
	if got, err := client.Responses.Get(ctx, next.ID, responses.ResponseGetParams{}); err != nil || got.OutputText() != next.OutputText() {
		t.Errorf("Get: %v %+v", err, got)
	}
	if err := client.Responses.Delete(ctx, next.ID); err != nil {
		t.Fatal(err)
	}
	lastCall(t, fake.Requests(), http.MethodDelete, "/v1/responses/"+next.ID)
	if _, err := client.Responses.Get(ctx, next.ID, responses.ResponseGetParams{}); status(err) != http.StatusNotFound {
		t.Errorf("Get after Delete: %v, want 404", err)
	}
}

// A conversation moves between providers: begun on Anthropic (translated),
// continued on OpenAI's own Responses API, which never saw the first turn
// and gets it as input items instead of the id.
func TestResponsesAcrossProviders(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithAPIKey(upstreamKey))
	anth := providertest.NewAnthropic(t, providertest.AnthAPIKey(anthKey))
	g := start(t, fake, config.Map{"ANTHROPIC_API_BASE": anth.URL(), "ANTHROPIC_API_KEY": anthKey})
	key, _ := g.newKey(nil)
	client := g.client(key)
	ctx := context.Background()
	first, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: shared.ResponsesModel("claude-sonnet-4-5"),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("My name is Ada.")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := client.Responses.New(ctx, responses.ResponseNewParams{
		Model: shared.ResponsesModel("gpt-4o-mini"), PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What is my name?")},
	}); err != nil {
		t.Fatal(err)
	}
	up := string(lastCall(t, fake.Requests(), http.MethodPost, "/v1/responses").Body)
	if strings.Contains(up, "previous_response_id") || !strings.Contains(up, "My name is Ada.") || !strings.Contains(up, first.OutputText()) || !strings.Contains(up, "What is my name?") {
		t.Errorf("OpenAI got %s: want the earlier turn as input items and no previous_response_id", up)
	}
}

// A chat-only OpenAI-compatible server (OPENAI_RESPONSES_API=false here)
// gets the Responses API translated to chat completions, function calls
// included, streamed.
func TestResponsesToChatOnlyServer(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithAPIKey(upstreamKey), providertest.WithToolCalls(true))
	g := start(t, fake, config.Map{"OPENAI_RESPONSES_API": "false"})
	key, _ := g.newKey(nil)
	client := g.client(key)
	st := client.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
		Model: shared.ResponsesModel("gpt-4o-mini"),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Weather in Paris?")},
		Tools: []responses.ToolUnionParam{weatherFn},
	})
	types, final := streamed(t, st)
	up := lastCall(t, fake.Requests(), http.MethodPost, "/v1/chat/completions")
	if !strings.Contains(string(up.Body), `"tools"`) || final == nil || !contains(types, "response.function_call_arguments.delta") {
		t.Fatalf("events %v; upstream chat body %s", types, up.Body)
	}
	var call *responses.ResponseOutputItemUnion
	for i := range final.Output {
		if final.Output[i].Type == "function_call" {
			call = &final.Output[i]
		}
	}
	if call == nil || call.Name != "get_weather" || !json.Valid([]byte(call.Arguments.OfString)) || final.Usage.TotalTokens == 0 {
		t.Errorf("final response %+v", final)
	}
}

// The openai npm package's Responses client to OpenAI's own API (the fake).
func TestNPMResponsesForwarded(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithAPIKey(upstreamKey))
	g := start(t, fake, nil)
	r := checkNPMResponses(t, g, "gpt-4o-mini")
	var body map[string]any
	json.Unmarshal(lastCall(t, fake.Requests(), http.MethodPost, "/v1/responses").Body, &body)
	if body["previous_response_id"] != r.First {
		t.Errorf("continuation upstream %v: want previous_response_id %s forwarded", body, r.First)
	}
}
