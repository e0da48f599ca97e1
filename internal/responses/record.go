package responses

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/store"
)

// DefaultRetention is how long records are kept unless configured
// (SVC_RESPONSES_RETENTION): OpenAI's own retention of stored responses.
const DefaultRetention = 30 * 24 * time.Hour

// MaxTurns bounds how many earlier responses a previous_response_id chain
// may reach back through.
const MaxTurns = 1000

// Record is a response svc keeps so that a later request can continue it
// (previous_response_id) or read it back (GET /v1/responses/{id}).
type Record struct {
	ID    string
	Owner string // the caller that made it (identity.Principal.Caller)
	// Provider served it; Native: through its own Responses API, which
	// keeps the conversation too.
	Provider string
	Native   bool
	Previous string // its previous_response_id
	// Input is its own turn's input items (a string input as one user
	// message); earlier turns are the previous records'.
	Input    []Item
	Response *Response
	Created  time.Time
	Expires  time.Time
}

// Store keeps records. Load and Delete see only the owner's records that
// have not expired; any other is store.ErrNotFound, so a caller cannot
// learn that another's response exists.
type Store interface {
	Save(ctx context.Context, r *Record) error
	Load(ctx context.Context, owner, id string, now time.Time) (*Record, error)
	Delete(ctx context.Context, owner, id string) error
	// Purge removes the records that expired before now.
	Purge(ctx context.Context, now time.Time) (int64, error)
}

// NotFound is the caller's error for a response id it cannot see.
func NotFound(param, id string) error {
	e := apierr.Newf(apierr.NotFound, "response_not_found", "no response with id %q", id)
	e.Param = param
	return e
}

// History is the conversation before a request continuing previous: the
// input and output items of every turn of its chain, oldest first, and
// the previous record itself. A missing, expired or foreign response
// anywhere in the chain is a 404 naming previous_response_id.
func History(ctx context.Context, s Store, owner, previous string, now time.Time) ([]Item, *Record, error) {
	var chain []*Record
	for id := previous; id != ""; {
		if len(chain) == MaxTurns {
			return nil, nil, apierr.BadParam("previous_response_id", "the conversation is longer than %d turns", MaxTurns)
		}
		r, err := s.Load(ctx, owner, id, now)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, NotFound("previous_response_id", id)
		}
		if err != nil {
			return nil, nil, apierr.Wrap(apierr.Unavailable, "response_store_unavailable", "the response store is unavailable", err)
		}
		chain = append(chain, r)
		id = r.Previous
	}
	var items []Item
	for i := len(chain) - 1; i >= 0; i-- {
		items = append(items, chain[i].Input...)
		items = append(items, chain[i].Response.Output...)
	}
	var last *Record
	if len(chain) > 0 {
		last = chain[0]
	}
	return items, last, nil
}

// InputItems is a request's input as items: a string input is one user
// message.
func InputItems(r *Request) []Item {
	if r.Input.IsItems {
		return r.Input.Items
	}
	text := r.Input.Text
	return []Item{{Type: TypeMessage, Role: "user", Content: &Content{IsParts: true,
		Parts: []Part{{Type: PartInputText, Text: &text}}}}}
}

// ListItems is the body of GET /v1/responses/{id}/input_items: the
// response's own input items, newest first unless order is "asc", each
// with an id (svc names the items a caller sent without one).
func ListItems(r *Record, order string) ([]Item, error) {
	items := make([]Item, len(r.Input))
	copy(items, r.Input)
	for i := range items {
		if items[i].ID == "" {
			items[i].ID = fmt.Sprintf("%s_in_%d", r.ID, i)
		}
		if items[i].Type == "" {
			items[i].Type = TypeMessage
		}
	}
	switch order {
	case "", "desc":
		for i, j := 0, len(items)-1; i < j; i, j = i+1, j-1 {
			items[i], items[j] = items[j], items[i]
		}
	case "asc":
	default:
		return nil, apierr.BadParam("order", "order must be asc or desc")
	}
	return items, nil
}

// Expand rewrites a Responses body for a provider's own Responses API that
// does not hold the earlier turns (they were served elsewhere): the
// history's items go before the input, without their ids (which only svc
// knows) and without reasoning items (only the provider that made them
// can read them), and previous_response_id is removed. Other fields keep
// their bytes.
func Expand(body []byte, r *Request, history []Item) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(body, &m); err != nil {
		return nil, apierr.Wrap(apierr.InvalidRequest, "invalid_json", "request body is not valid JSON", err)
	}
	items := make([]Item, 0, len(history)+len(r.Input.Items)+1)
	for _, it := range history {
		if it.Kind() == TypeReasoning {
			continue
		}
		it.ID = ""
		if it.Kind() == TypeMessage {
			it.Status = ""
		}
		items = append(items, it)
	}
	items = append(items, InputItems(r)...)
	in, err := json.Marshal(items)
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "expand_failed", "could not build the conversation", err)
	}
	m["input"] = in
	delete(m, "previous_response_id")
	return json.Marshal(m)
}

// Turn is a Responses request as the proxy carries it through the stages.
type Turn struct {
	Req *Request
	// History is the conversation before it (previous_response_id's chain,
	// oldest first) and Previous the record it continues; empty and nil
	// for a new conversation.
	History  []Item
	Previous *Record
	// Chat is the request with its history translated to chat
	// completions (ToChat), made once for every attempt; nil when it
	// cannot be translated (a built-in tool), which only a provider
	// without the Responses API refuses.
	Chat *llm.ChatRequest
	// Keep, set by the proxy when the response is to be stored, keeps the
	// finished response; native says the provider's own Responses API
	// made it.
	Keep func(resp *Response, native bool)
}
