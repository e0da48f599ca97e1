package providertest

// The OpenAI fake's Responses API (POST /v1/responses and the stored
// responses' GET, DELETE and input_items), shaped as the OpenAI API reference
// shows it. The package doc lists what it does; this file reads requests and
// builds the response object, openai_responses_stream.go streams it and
// openai_responses_store.go keeps it.

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"time"
)

// respRequest is the part of a Responses API request the fake reads; the
// fields it only echoes into the response object stay raw.
type respRequest struct {
	Model              string            `json:"model"`
	Input              json.RawMessage   `json:"input"`
	Instructions       json.RawMessage   `json:"instructions"`
	Tools              []json.RawMessage `json:"tools"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	PreviousResponseID string            `json:"previous_response_id"`
	Store              *bool             `json:"store"`
	Stream             bool              `json:"stream"`
	Background         bool              `json:"background"`
	Metadata           json.RawMessage   `json:"metadata"`
	Temperature        json.RawMessage   `json:"temperature"`
	TopP               json.RawMessage   `json:"top_p"`
	MaxOutputTokens    json.RawMessage   `json:"max_output_tokens"`
	MaxToolCalls       json.RawMessage   `json:"max_tool_calls"`
	ParallelToolCalls  json.RawMessage   `json:"parallel_tool_calls"`
	Reasoning          json.RawMessage   `json:"reasoning"`
	Text               json.RawMessage   `json:"text"`
	Truncation         json.RawMessage   `json:"truncation"`
	User               json.RawMessage   `json:"user"`
}

// respItem is the part of an input item the fake reads.
type respItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Role      string          `json:"role"`
	Content   textLen         `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"` // a string in a function_call`
	Output    textLen         `json:"output"`
	Summary   []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// respInputTypes are the input item types of the API reference.
var respInputTypes = []string{
	"message", "function_call", "function_call_output", "reasoning", "item_reference",
	"file_search_call", "computer_call", "computer_call_output", "web_search_call",
	"tool_search_call", "tool_search_output", "additional_tools", "configuration_update",
	"compaction", "compaction_trigger", "image_generation_call", "code_interpreter_call",
	"local_shell_call", "local_shell_call_output", "shell_call", "shell_call_output",
	"apply_patch_call", "apply_patch_call_output", "mcp_list_tools", "mcp_approval_request",
	"mcp_approval_response", "mcp_call", "custom_tool_call", "custom_tool_call_output",
	"program", "program_output",
}

// respTurn is a decoded request: its input items and what decides the answer.
type respTurn struct {
	req        respRequest
	items      []json.RawMessage // input items as input_items lists them, with ids
	inputText  int               // text bytes of instructions, the history and the input items
	convText   int               // text bytes of the history and the input items
	lastOutput bool              // the last input item is a function_call_output
	tools      []functionTool
	choice     toolChoice
}

// decodeResponses parses and checks a POST /v1/responses body; a previous
// response it names must be kept (404 otherwise), and the function calls of
// the conversation must pair with their outputs, as OpenAI checks.
func (s *OpenAI) decodeResponses(body []byte, t *respTurn) (bad apiError) {
	if err := json.Unmarshal(body, &t.req); err != nil {
		return badJSON(err)
	}
	req := &t.req
	switch {
	case req.Model == "":
		return missingParam("model")
	case req.Background:
		return invalidRequest("background", "", "providertest: background responses are not supported by the fake.")
	}
	if len(req.ToolChoice) > 0 {
		if err := json.Unmarshal(req.ToolChoice, &t.choice); err != nil {
			return invalidRequest("tool_choice", "invalid_type", "Invalid type for 'tool_choice': "+err.Error())
		}
	}
	for i, raw := range req.Tools {
		var tool struct {
			Type       string `json:"type"`
			Name       string `json:"name"`
			Parameters struct {
				Required []string `json:"required"`
			} `json:"parameters"`
		}
		p := "tools[" + strconv.Itoa(i) + "]"
		if err := json.Unmarshal(raw, &tool); err != nil {
			return invalidRequest(p, "invalid_type", "Invalid '"+p+"': "+err.Error())
		}
		switch {
		case tool.Type == "":
			return missingParam(p + ".type")
		case tool.Type == "function" && tool.Name == "":
			return missingParam(p + ".name")
		case tool.Type == "function":
			t.tools = append(t.tools, functionTool{name: tool.Name, required: tool.Parameters.Required})
		}
	}
	var instr textLen
	if len(req.Instructions) > 0 {
		_ = json.Unmarshal(req.Instructions, &instr)
	}

	var pending []string // call_ids of function calls without their output yet
	hasRef := false
	if req.PreviousResponseID != "" {
		prev := s.stored.get(req.PreviousResponseID)
		if prev == nil {
			return apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Param: "previous_response_id", Code: "previous_response_not_found",
				Message: "Previous response with id '" + req.PreviousResponseID + "' not found."}
		}
		t.convText = prev.conv
		if prev.call != "" {
			pending = append(pending, prev.call)
		}
	}

	if bad := s.readInput(t, &pending, &hasRef); bad.Status != 0 {
		return bad
	}
	if len(pending) > 0 {
		return invalidRequest("input", "", "No tool output found for function call "+pending[0]+".")
	}
	t.inputText = int(instr) + t.convText
	return apiError{}
}

// readInput reads the input: a string (one user message) or a list of items,
// which it checks, gives ids and counts the text of. A function_call adds its
// call_id to pending and a function_call_output removes it.
func (s *OpenAI) readInput(t *respTurn, pending *[]string, hasRef *bool) apiError {
	in := t.req.Input
	if len(in) == 0 || string(in) == "null" {
		return apiError{}
	}
	if in[0] == '"' {
		var text string
		if err := json.Unmarshal(in, &text); err != nil {
			return badJSON(err)
		}
		t.convText += len(text)
		item, _ := json.Marshal(map[string]any{
			"id": s.itemID("msg"), "type": "message", "role": "user",
			"content": []map[string]string{{"type": "input_text", "text": text}},
		})
		t.items = append(t.items, item)
		return apiError{}
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(in, &raws); err != nil {
		return invalidRequest("input", "invalid_type", "Invalid type for 'input': expected one of a string or array of input items, but got "+jsonKind(in)+" instead.")
	}
	for i, raw := range raws {
		p := "input[" + strconv.Itoa(i) + "]"
		var fields map[string]json.RawMessage
		var it respItem
		if json.Unmarshal(raw, &fields) != nil {
			return invalidRequest(p, "invalid_type", "Invalid type for '"+p+"': expected an input item, but got "+jsonKind(raw)+" instead.")
		}
		if err := json.Unmarshal(raw, &it); err != nil {
			return invalidRequest(p, "invalid_type", "Invalid '"+p+"': "+err.Error())
		}
		if it.Type == "" && it.Role != "" {
			it.Type = "message" // an easy input message
			fields["type"] = json.RawMessage(`"message"`)
		}
		if bad := checkItem(p, &it, fields); bad.Status != 0 {
			return bad
		}
		switch it.Type {
		case "message":
			t.convText += int(it.Content)
			if c := fields["content"]; len(c) > 0 && c[0] == '"' {
				fields["content"] = textParts(c, it.Role)
			}
		case "function_call":
			var args string
			if json.Unmarshal(it.Arguments, &args) != nil {
				return invalidRequest(p+".arguments", "invalid_type", "Invalid type for '"+p+".arguments': expected a string, but got "+jsonKind(it.Arguments)+" instead.")
			}
			t.convText += len(args)
			if !slices.Contains(*pending, it.CallID) {
				*pending = append(*pending, it.CallID)
			}
		case "function_call_output":
			t.convText += int(it.Output)
			if k := slices.Index(*pending, it.CallID); k >= 0 {
				*pending = slices.Delete(*pending, k, k+1)
			} else if !*hasRef {
				return invalidRequest("input", "", "No tool call found for function call output with call_id "+it.CallID+".")
			}
		case "reasoning":
			for _, sum := range it.Summary {
				t.convText += len(sum.Text)
			}
		case "item_reference":
			// Not resolved: its text is not counted, and it may be the call
			// an output answers.
			*hasRef = true
		}
		if it.ID == "" {
			fields["id"], _ = json.Marshal(s.itemID(itemPrefix(it.Type)))
		}
		item, _ := json.Marshal(fields)
		t.items = append(t.items, item)
		t.lastOutput = it.Type == "function_call_output"
	}
	return apiError{}
}

// checkItem checks the fields an item of its type requires.
func checkItem(p string, it *respItem, fields map[string]json.RawMessage) apiError {
	if it.Type == "" {
		return missingParam(p + ".type")
	}
	if !slices.Contains(respInputTypes, it.Type) {
		return invalidRequest(p+".type", "invalid_value", "Invalid value: '"+it.Type+"'. Supported values are: 'message', 'function_call', 'function_call_output', 'reasoning', 'item_reference' and the other input item types of the API reference.")
	}
	var need []string
	switch it.Type {
	case "message":
		need = []string{"role", "content"}
		if it.Role != "" && !slices.Contains([]string{"user", "assistant", "system", "developer"}, it.Role) {
			return invalidRequest(p+".role", "invalid_value", "Invalid value: '"+it.Role+"'. Supported values are: 'user', 'assistant', 'system', and 'developer'.")
		}
	case "function_call":
		need = []string{"call_id", "name", "arguments"}
	case "function_call_output":
		need = []string{"call_id", "output"}
	case "item_reference":
		need = []string{"id"}
	}
	for _, k := range need {
		if v, ok := fields[k]; !ok || string(v) == "null" {
			return missingParam(p + "." + k)
		}
	}
	return apiError{}
}

// textParts turns a message's string content into the one content part the
// API lists for it: output_text for the assistant's words, input_text else.
func textParts(content json.RawMessage, role string) json.RawMessage {
	var text string
	_ = json.Unmarshal(content, &text)
	typ := "input_text"
	if role == "assistant" {
		typ = "output_text"
	}
	part := map[string]any{"type": typ, "text": text}
	if typ == "output_text" {
		part["annotations"] = []any{}
	}
	b, _ := json.Marshal([]any{part})
	return b
}

// itemPrefix is the id prefix of an item of type typ.
func itemPrefix(typ string) string {
	switch typ {
	case "message":
		return "msg"
	case "function_call":
		return "fc"
	case "reasoning":
		return "rs"
	}
	return "item"
}

func (s *OpenAI) itemID(prefix string) string {
	return prefix + "_providertest_" + strconv.FormatUint(s.ids.Add(1), 10)
}

// jsonKind names the JSON type of v as OpenAI's errors do.
func jsonKind(v json.RawMessage) string {
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// respUsage is a Responses API usage object.
type respUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

// respObject is the response object, its fields in the API reference's order.
type respObject struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	CreatedAt          int64             `json:"created_at"`
	Status             string            `json:"status"`
	Background         bool              `json:"background"`
	CompletedAt        *int64            `json:"completed_at"`
	Error              json.RawMessage   `json:"error"`
	IncompleteDetails  json.RawMessage   `json:"incomplete_details"`
	Instructions       json.RawMessage   `json:"instructions"`
	MaxOutputTokens    json.RawMessage   `json:"max_output_tokens"`
	MaxToolCalls       json.RawMessage   `json:"max_tool_calls"`
	Model              string            `json:"model"`
	Output             []any             `json:"output"`
	ParallelToolCalls  json.RawMessage   `json:"parallel_tool_calls"`
	PreviousResponseID *string           `json:"previous_response_id"`
	Reasoning          json.RawMessage   `json:"reasoning"`
	ServiceTier        string            `json:"service_tier"`
	Store              bool              `json:"store"`
	Temperature        json.RawMessage   `json:"temperature"`
	Text               json.RawMessage   `json:"text"`
	ToolChoice         json.RawMessage   `json:"tool_choice"`
	Tools              []json.RawMessage `json:"tools"`
	TopLogprobs        int               `json:"top_logprobs"`
	TopP               json.RawMessage   `json:"top_p"`
	Truncation         json.RawMessage   `json:"truncation"`
	Usage              *respUsage        `json:"usage"`
	User               json.RawMessage   `json:"user"`
	Metadata           json.RawMessage   `json:"metadata"`
}

// respMessage is an output message item.
type respMessage struct {
	ID      string     `json:"id"`
	Type    string     `json:"type"`
	Status  string     `json:"status"`
	Content []respText `json:"content"`
	Role    string     `json:"role"`
}

// respText is an output_text content part.
type respText struct {
	Type        string   `json:"type"`
	Annotations []string `json:"annotations"`
	Logprobs    []string `json:"logprobs"`
	Text        string   `json:"text"`
}

func outputText(text string) respText {
	return respText{Type: "output_text", Annotations: []string{}, Logprobs: []string{}, Text: text}
}

// respFunctionCall is an output function_call item.
type respFunctionCall struct {
	ID        string `json:"id"`
	Type      string `json:"type"`
	Status    string `json:"status"`
	Arguments string `json:"arguments"`
	CallID    string `json:"call_id"`
	Name      string `json:"name"`
}

// orRaw is v, or def when the request did not send it.
func orRaw(v json.RawMessage, def string) json.RawMessage {
	if len(v) == 0 {
		return json.RawMessage(def)
	}
	return v
}

// newRespObject is the completed response object answering t, with output
// and usage u.
func newRespObject(id string, t *respTurn, output any, u *respUsage, store bool) *respObject {
	now := time.Now().Unix()
	req := &t.req
	o := &respObject{
		ID: id, Object: "response", CreatedAt: now, Status: "completed", CompletedAt: &now,
		Instructions: req.Instructions, MaxOutputTokens: req.MaxOutputTokens, MaxToolCalls: req.MaxToolCalls,
		Model: req.Model, Output: []any{output},
		ParallelToolCalls: orRaw(req.ParallelToolCalls, "true"),
		Reasoning:         orRaw(req.Reasoning, `{"effort":null,"summary":null}`),
		ServiceTier:       "default", Store: store,
		Temperature: orRaw(req.Temperature, "1.0"),
		Text:        orRaw(req.Text, `{"format":{"type":"text"},"verbosity":"medium"}`),
		ToolChoice:  orRaw(req.ToolChoice, `"auto"`),
		Tools:       append([]json.RawMessage{}, req.Tools...),
		TopP:        orRaw(req.TopP, "1.0"),
		Truncation:  orRaw(req.Truncation, `"disabled"`),
		Usage:       u, User: req.User,
		Metadata: orRaw(req.Metadata, "{}"),
	}
	if req.PreviousResponseID != "" {
		o.PreviousResponseID = &req.PreviousResponseID
	}
	return o
}

// inProgress is o as response.created and response.in_progress show it.
func (o *respObject) inProgress() *respObject {
	c := *o
	c.Status, c.CompletedAt, c.Output, c.Usage = "in_progress", nil, []any{}, nil
	return &c
}

// createResponse serves POST /v1/responses.
func (s *OpenAI) createResponse(w http.ResponseWriter, r *http.Request) {
	x, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer x.end()

	var t respTurn
	bad := s.decodeResponses(x.body, &t)
	if x.ctl.status != 0 {
		writeError(w, forcedError(x.ctl.status, t.req.Model))
		return
	}
	if bad.Status != 0 {
		writeError(w, bad)
		return
	}
	s.requestID(w)

	// The answer: a call of a function tool unless the turn brings tool
	// results, else the reply.
	id := s.itemID("resp")
	var call *toolCall
	if tool, ok := pickTool(t.tools, t.choice); ok && !t.lastOutput {
		call = &toolCall{id: s.itemID("call"), name: tool.name, args: string(toolArguments(tool.required))}
	}
	outText := len(x.ctl.reply)
	var output any
	var itemID string
	if call != nil {
		outText = len(call.args)
		itemID = s.itemID("fc")
		output = &respFunctionCall{ID: itemID, Type: "function_call", Status: "completed", Arguments: call.args, CallID: call.id, Name: call.name}
	} else {
		itemID = s.itemID("msg")
		output = &respMessage{ID: itemID, Type: "message", Status: "completed", Role: "assistant", Content: []respText{outputText(x.ctl.reply)}}
	}
	u := &respUsage{InputTokens: tokens(t.inputText), OutputTokens: tokens(outText) + x.ctl.reasoningTokens}
	u.InputTokensDetails.CachedTokens = min(x.ctl.cachedTokens, u.InputTokens)
	u.OutputTokensDetails.ReasoningTokens = x.ctl.reasoningTokens
	u.TotalTokens = u.InputTokens + u.OutputTokens

	store := t.req.Store == nil || *t.req.Store
	o := newRespObject(id, &t, output, u, store)
	body, err := json.Marshal(o)
	if err != nil {
		writeError(w, apiError{Status: http.StatusInternalServerError, Type: "server_error", Message: "providertest: " + err.Error()})
		return
	}
	if store {
		kept := &storedResponse{body: body, input: t.items, conv: t.convText + outText}
		if call != nil {
			kept.call = call.id
		}
		s.stored.put(id, kept, x.cfg.storeLimit)
	}
	if t.req.Stream {
		s.streamResponse(w, r, x, o, call, itemID)
		return
	}
	writeJSONAnswer(w, x, append(append(x.out[:0], body...), '\n'))
}

// storedFor answers the forced error or the 404 of a request about the
// stored response {id}, or returns it.
func (s *OpenAI) storedFor(w http.ResponseWriter, r *http.Request, x *exchange) (string, *storedResponse, bool) {
	if x.ctl.status != 0 {
		writeError(w, forcedError(x.ctl.status, ""))
		return "", nil, false
	}
	id := r.PathValue("id")
	kept := s.stored.get(id)
	if kept == nil {
		writeError(w, apiError{Status: http.StatusNotFound, Type: "invalid_request_error", Message: "Response with id '" + id + "' not found."})
		return "", nil, false
	}
	s.requestID(w)
	return id, kept, true
}

// getResponse serves GET /v1/responses/{id}.
func (s *OpenAI) getResponse(w http.ResponseWriter, r *http.Request) {
	x, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer x.end()
	_, kept, ok := s.storedFor(w, r, x)
	if !ok {
		return
	}
	if r.URL.Query().Get("stream") == "true" {
		writeError(w, invalidRequest("stream", "", "providertest: streaming a stored response is not supported by the fake."))
		return
	}
	writeJSONAnswer(w, x, append(append(x.out[:0], kept.body...), '\n'))
}

// deleteResponse serves DELETE /v1/responses/{id}.
func (s *OpenAI) deleteResponse(w http.ResponseWriter, r *http.Request) {
	x, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer x.end()
	id, _, ok := s.storedFor(w, r, x)
	if !ok {
		return
	}
	s.stored.remove(id)
	b := append(x.out[:0], `{"id":`...)
	b = appendStringOrNull(b, id)
	writeJSONAnswer(w, x, append(b, `,"object":"response","deleted":true}`+"\n"...))
}

// listInputItems serves GET /v1/responses/{id}/input_items: a page of the
// response's input items, newest first unless order=asc, limit (1 to 100,
// default 20) items after the item named by after.
func (s *OpenAI) listInputItems(w http.ResponseWriter, r *http.Request) {
	x, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer x.end()
	_, kept, ok := s.storedFor(w, r, x)
	if !ok {
		return
	}
	q := r.URL.Query()
	limit := 20
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			writeError(w, invalidRequest("limit", "integer_out_of_range", "Invalid 'limit': integer out of range. Expected a value between 1 and 100, but got "+v+" instead."))
			return
		}
		limit = n
	}
	items := slices.Clone(kept.input)
	switch q.Get("order") {
	case "", "desc":
		slices.Reverse(items)
	case "asc":
	default:
		writeError(w, invalidRequest("order", "invalid_value", "Invalid value: '"+q.Get("order")+"'. Supported values are: 'asc' and 'desc'."))
		return
	}
	if after := q.Get("after"); after != "" {
		k := slices.IndexFunc(items, func(it json.RawMessage) bool { return itemIDOf(it) == after })
		if k < 0 {
			writeError(w, invalidRequest("after", "", "providertest: no input item '"+after+"' in this response."))
			return
		}
		items = items[k+1:]
	}
	more := len(items) > limit
	items = items[:min(len(items), limit)]

	b := append(x.out[:0], `{"object":"list","data":[`...)
	for i, it := range items {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, it...)
	}
	b = append(b, `],"first_id":`...)
	var first, last string
	if len(items) > 0 {
		first, last = itemIDOf(items[0]), itemIDOf(items[len(items)-1])
	}
	b = appendStringOrNull(b, first)
	b = append(b, `,"last_id":`...)
	b = appendStringOrNull(b, last)
	b = append(b, `,"has_more":`...)
	b = strconv.AppendBool(b, more)
	writeJSONAnswer(w, x, append(b, "}\n"...))
}

// itemIDOf is the id of a listed input item.
func itemIDOf(item json.RawMessage) string {
	var v struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(item, &v)
	return v.ID
}
