package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/jsonbody"
	"github.com/svc-gateway/svc/internal/pipeline"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/responses"
	"github.com/svc-gateway/svc/internal/store"
)

// The Responses API (POST /v1/responses): forwarded untranslated to
// providers that serve it (provider.Provider.Responses), translated to
// chat completions for every other; and the responses svc keeps, read back
// and deleted by their caller (GET and DELETE /v1/responses/{id}, GET
// /v1/responses/{id}/input_items).

// responsesDialect: errors as OpenAI's; a failed stream ends with the
// API's error event, numbered after the events already sent; no [DONE].
var responsesDialect = dialect{
	writeError: apierr.Write,
	errorEvent: responses.ErrorEvent,
}

// decodeResponses validates a Responses body.
func decodeResponses(x *pipeline.Exchange) error {
	r, err := responses.Decode(x.Body)
	if err != nil {
		return err
	}
	x.Model, x.Stream = r.Model, r.Stream
	x.Responses = &responses.Turn{Req: r}
	return nil
}

// turn loads the conversation a Responses request continues (404 when
// previous_response_id is not the caller's), arranges for the response to
// be kept unless store is false, and sets x.Chat to the translated
// request, so that limits estimate the whole conversation.
func (p *Proxy) turn(ctx context.Context, x *pipeline.Exchange) error {
	t := x.Responses
	owner := ""
	if x.Principal != nil {
		owner = x.Principal.Caller()
	}
	if id := t.Req.PreviousResponseID; id != "" {
		if p.d.Responses == nil || owner == "" {
			return responses.NotFound("previous_response_id", id)
		}
		var err error
		if t.History, t.Previous, err = responses.History(ctx, p.d.Responses, owner, id, time.Now()); err != nil {
			return err
		}
	}
	if p.d.Responses != nil && owner != "" && t.Req.Stored() {
		t.Keep = func(resp *responses.Response, native bool) { p.keep(x, owner, resp, native) }
	}
	if c, err := responses.ToChat(t.Req, t.History, ""); err == nil {
		t.Chat, x.Chat = c, c
	} else {
		// For the estimate only: built-in tools, which a translation
		// refuses, do not change it much.
		est := *t.Req
		est.Tools = nil
		x.Chat, _ = responses.ToChat(&est, t.History, "")
	}
	return nil
}

// keep stores a finished response for its caller. A failure is logged:
// the caller has its answer; only a later previous_response_id to it fails.
func (p *Proxy) keep(x *pipeline.Exchange, owner string, resp *responses.Response, native bool) {
	now := time.Now()
	t := x.Responses
	rec := &responses.Record{ID: resp.ID, Owner: owner, Provider: x.Provider, Native: native,
		Previous: t.Req.PreviousResponseID, Input: responses.InputItems(t.Req), Response: resp,
		Created: now, Expires: now.Add(p.d.ResponsesRetention)}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.d.Responses.Save(ctx, rec); err != nil {
		p.d.Log.Warn("responses: could not keep a response", "response_id", resp.ID, "request_id", x.ID, "err", err)
	}
}

// responsesCall is /v1/responses: the provider's own Responses API where it
// has one, else its chat adapter with the request translated.
type responsesCall struct{}

func (responsesCall) request(ctx context.Context, x *pipeline.Exchange, prov *provider.Provider) (*http.Request, reader, error) {
	if _, ok := prov.Adapter.(provider.Passthrough); ok && prov.Responses {
		return nativeResponses(ctx, x, prov)
	}
	return translatedResponses(ctx, x, prov)
}

// nativeResponses forwards the body to the provider's /responses. When the
// earlier turns were served elsewhere (another provider, or translated),
// they are sent as input instead of previous_response_id.
func nativeResponses(ctx context.Context, x *pipeline.Exchange, prov *provider.Provider) (*http.Request, reader, error) {
	t := x.Responses
	body := x.Body
	if t.Previous != nil && !(t.Previous.Native && t.Previous.Provider == prov.Name) {
		var err error
		if body, err = responses.Expand(x.Body, t.Req, t.History); err != nil {
			return nil, nil, err
		}
	}
	req, err := prov.Adapter.(provider.Passthrough).NewPassthroughRequest(ctx, prov.Deployment(x.UpstreamModel),
		provider.PassthroughCall{Op: "responses", ContentType: "application/json", Body: body, Model: x.Model})
	if err != nil {
		return nil, nil, err
	}
	return req, func(x *pipeline.Exchange, resp *http.Response, body func() ([]byte, error)) (answer, error) {
		if x.Stream {
			info := &provider.StreamInfo{}
			s := responses.Relay(resp.Body, func(r *responses.Response) {
				info.Usage, info.Model = responses.ChatUsage(r.Usage), r.Model
				noteCalls(info, r)
				if t.Keep != nil {
					t.Keep(r, true)
				}
			})
			return answer{resp: &pipeline.Response{Status: http.StatusOK, Stream: s, Header: sseHeader.Clone()}, info: info}, nil
		}
		out, err := body()
		if err != nil {
			return answer{}, err
		}
		var r responses.Response
		if err := json.Unmarshal(out, &r); err != nil {
			return answer{}, apierr.Wrap(apierr.UpstreamError, "bad_upstream_response", "the provider's answer could not be read", err)
		}
		x.Usage, x.ResponseModel = responses.ChatUsage(r.Usage), r.Model
		if t.Keep != nil {
			t.Keep(&r, true)
		}
		return answer{resp: &pipeline.Response{Status: http.StatusOK, Body: out, Header: jsonHeader.Clone()}}, nil
	}, nil
}

// noteCalls records a response's function calls in info (the guard reads
// them as it reads a chat stream's).
func noteCalls(info *provider.StreamInfo, r *responses.Response) {
	n := 0
	for _, it := range r.Output {
		if it.Kind() == responses.TypeFunctionCall && it.Arguments != nil {
			info.AddToolCall(0, n, it.CallID, it.Name, *it.Arguments)
			n++
		}
	}
}

// translatedResponses calls the provider's chat API with the request
// translated, and translates its answer — a body or a stream — back.
func translatedResponses(ctx context.Context, x *pipeline.Exchange, prov *provider.Provider) (*http.Request, reader, error) {
	t := x.Responses
	chat := t.Chat
	if chat == nil { // not translatable: the refusal, naming the provider
		var err error
		if chat, err = responses.ToChat(t.Req, t.History, prov.Name); err != nil {
			return nil, nil, err
		}
	}
	raw, err := json.Marshal(chat)
	if err != nil {
		return nil, nil, apierr.Wrap(apierr.Internal, "translate_failed", "could not translate the request", err)
	}
	req, err := prov.Adapter.NewChatRequest(ctx, prov.Deployment(x.UpstreamModel), provider.ChatCall{Req: chat, Raw: raw})
	if err != nil {
		return nil, nil, err
	}
	frame := responses.Frame(t.Req, responses.NewID("resp_"), x.Start.Unix())
	keep := func(r *responses.Response) {
		if t.Keep != nil {
			t.Keep(r, false)
		}
	}
	return req, func(x *pipeline.Exchange, resp *http.Response, body func() ([]byte, error)) (answer, error) {
		if x.Stream {
			// Usage is not hidden: the translation reads it from the chunks.
			s, info := chatStream(prov, x.UpstreamModel, resp, false)
			return answer{resp: &pipeline.Response{Status: http.StatusOK, Stream: responses.Translate(s, frame, keep), Header: sseHeader.Clone()}, info: info}, nil
		}
		raw, err := body()
		if err != nil {
			return answer{}, err
		}
		out, usage, model, err := decodeChatAnswer(prov, x.UpstreamModel, raw)
		if err != nil {
			return answer{}, err
		}
		if err := responses.FromChat(frame, out); err != nil {
			return answer{}, err
		}
		if model != "" {
			frame.Model = model
		}
		keep(frame)
		b, err := json.Marshal(frame)
		if err != nil {
			return answer{}, apierr.Wrap(apierr.Internal, "translate_failed", "could not translate the answer", err)
		}
		x.Usage, x.ResponseModel = usage, model
		return answer{resp: &pipeline.Response{Status: http.StatusOK, Body: b, Header: jsonHeader.Clone()}}, nil
	}, nil
}

// ownResponse is the caller's kept response named by the path's id.
func (p *Proxy) ownResponse(ctx context.Context, x *pipeline.Exchange) (*responses.Record, error) {
	id := x.Inbound.PathValue("id")
	if p.d.Responses == nil || x.Principal == nil {
		return nil, responses.NotFound("id", id)
	}
	rec, err := p.d.Responses.Load(ctx, x.Principal.Caller(), id, time.Now())
	if err != nil {
		if isNotFound(err) {
			return nil, responses.NotFound("id", id)
		}
		return nil, apierr.Wrap(apierr.Unavailable, "response_store_unavailable", "the response store is unavailable", err)
	}
	x.Model, x.ResponseModel = rec.Response.Model, rec.Response.Model
	return rec, nil
}

// getResponse is GET /v1/responses/{id}.
func (p *Proxy) getResponse(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
	if x.Inbound.URL.Query().Get("stream") == "true" {
		return nil, apierr.BadParam("stream", "svc does not replay a response as a stream; omit stream")
	}
	rec, err := p.ownResponse(ctx, x)
	if err != nil {
		return nil, err
	}
	return jsonAnswer(rec.Response)
}

// deleteResponse is DELETE /v1/responses/{id}. A response the provider's
// own API made is deleted there too (the caller is told if that fails,
// and svc's record stays so the call can be repeated).
func (p *Proxy) deleteResponse(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
	rec, err := p.ownResponse(ctx, x)
	if err != nil {
		return nil, err
	}
	if rec.Native {
		if err := p.deleteUpstream(ctx, x, rec); err != nil {
			return nil, err
		}
	}
	if err := p.d.Responses.Delete(ctx, rec.Owner, rec.ID); err != nil && !isNotFound(err) {
		return nil, apierr.Wrap(apierr.Unavailable, "response_store_unavailable", "the response store is unavailable", err)
	}
	return jsonAnswer(map[string]any{"id": rec.ID, "object": "response", "deleted": true})
}

// deleteUpstream deletes rec at the provider that made it; the provider
// not knowing it (expired there) is fine.
func (p *Proxy) deleteUpstream(ctx context.Context, x *pipeline.Exchange, rec *responses.Record) error {
	prov, ok := p.d.Registry.Lookup(rec.Provider)
	if !ok {
		return nil
	}
	key, err := p.providerKey(ctx, prov)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, prov.BaseURL+"/responses/"+rec.ID, nil)
	if err != nil {
		return apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	resp, _, err := p.send(ctx, x, prov, req, key)
	if err != nil {
		if x.UpstreamStatus == http.StatusNotFound {
			return nil
		}
		return apierr.Scrub(err, key)
	}
	resp.Body.Close()
	return nil
}

// listInputItems is GET /v1/responses/{id}/input_items: limit (1–100,
// default 20), order (desc by default), after (an item id).
func (p *Proxy) listInputItems(ctx context.Context, x *pipeline.Exchange) (*pipeline.Response, error) {
	q := x.Inbound.URL.Query()
	limit, err := jsonbody.QueryInt(q, "limit", 20, 1, 100)
	if err != nil {
		return nil, err
	}
	rec, err := p.ownResponse(ctx, x)
	if err != nil {
		return nil, err
	}
	items, err := responses.ListItems(rec, q.Get("order"))
	if err != nil {
		return nil, err
	}
	if after := q.Get("after"); after != "" {
		i := 0
		for i < len(items) && items[i].ID != after {
			i++
		}
		if i == len(items) {
			return nil, apierr.BadParam("after", "no input item with id %q", after)
		}
		items = items[i+1:]
	}
	page := struct {
		Object  string           `json:"object"`
		Data    []responses.Item `json:"data"`
		FirstID *string          `json:"first_id"`
		LastID  *string          `json:"last_id"`
		HasMore bool             `json:"has_more"`
	}{Object: "list", Data: items, HasMore: len(items) > limit}
	if page.HasMore {
		page.Data = items[:limit]
	}
	if n := len(page.Data); n > 0 {
		page.FirstID, page.LastID = &page.Data[0].ID, &page.Data[n-1].ID
	}
	return jsonAnswer(page)
}

// jsonAnswer is a 200 with v as its JSON body.
func jsonAnswer(v any) (*pipeline.Response, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "encode_failed", "could not encode the answer", err)
	}
	return &pipeline.Response{Status: http.StatusOK, Body: b, Header: jsonHeader.Clone()}, nil
}

// isNotFound reports whether err is a store's not-found.
func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }
