// Package openai is the adapter for the OpenAI wire format, used by OpenAI and
// every OpenAI-compatible provider (Groq, Mistral, DeepSeek, xAI, Together,
// Fireworks, OpenRouter, Perplexity, Cerebras, Ollama, vLLM, LM Studio, and
// any <NAME>_API_BASE), and Azure OpenAI, whose URLs differ (NewAzure). Since svc's canonical format is OpenAI's, it forwards
// the caller's bytes, patching only the model name and the stream usage
// option, so unknown fields and content parts pass through untouched.
//
// Imported by wire (to register it) and tests only. It imports llm, apierr and
// llm/sse, as every adapter.
package openai

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider"
)

// Adapter speaks the OpenAI chat completions API.
type Adapter struct {
	// url builds the URL of an operation ("chat/completions", "models") for
	// a deployment; nil is OpenAI's {base}/{op}. Azure's differs (see NewAzure).
	url func(t provider.Deployment, op string) string
	// keepModel leaves the caller's "model" in the body (Azure reads the
	// deployment from the URL and ignores it).
	keepModel bool
}

// New returns the adapter.
func New() *Adapter { return &Adapter{} }

// urlFor is the URL of operation op for t.
func (a *Adapter) urlFor(t provider.Deployment, op string) string {
	if a.url != nil {
		return a.url(t, op)
	}
	return t.BaseURL + "/" + op
}

// NewChatRequest builds POST {base}/chat/completions with the caller's body,
// the model replaced by the deployment's and, for streams, usage requested.
func (a *Adapter) NewChatRequest(ctx context.Context, t provider.Deployment, c provider.ChatCall) (*http.Request, error) {
	body, err := PatchBody(c.Raw, !a.keepModel && c.Req.Model != t.Model, t.Model, c.Req.Stream && (c.Req.StreamOptions == nil || !c.Req.StreamOptions.IncludeUsage))
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.urlFor(t, "chat/completions"), bytes.NewReader(body))
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	req.Header.Set("Content-Type", "application/json")
	if c.Req.Stream {
		req.Header.Set("Accept", "text/event-stream")
	} else {
		req.Header.Set("Accept", "application/json")
	}
	return req, nil
}

var includeUsage = []byte(`"stream_options":{"include_usage":true},`)

// PatchBody returns raw with "model" set to model (when setModel) and
// stream_options.include_usage set (when wantUsage). Other fields keep their
// bytes. When nothing changes raw is returned as is.
func PatchBody(raw []byte, setModel bool, model string, wantUsage bool) ([]byte, error) {
	if !setModel && !wantUsage {
		return raw, nil
	}
	if !setModel && !bytes.Contains(raw, []byte(`"stream_options"`)) && !mayEscapeStreamOptions(raw) {
		// Fast path: insert the option after the opening brace.
		i := bytes.IndexByte(raw, '{')
		if i < 0 {
			return nil, apierr.New(apierr.InvalidRequest, "invalid_json", "request body must be a JSON object")
		}
		out := make([]byte, 0, len(raw)+len(includeUsage))
		out = append(out, raw[:i+1]...)
		rest := bytes.TrimSpace(raw[i+1:])
		if len(rest) > 0 && rest[0] == '}' {
			out = append(out, includeUsage[:len(includeUsage)-1]...)
		} else {
			out = append(out, includeUsage...)
		}
		return append(out, raw[i+1:]...), nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, apierr.Wrap(apierr.InvalidRequest, "invalid_json", "request body is not valid JSON", err)
	}
	if fields == nil { // the body was null
		return nil, apierr.New(apierr.InvalidRequest, "invalid_json", "request body must be a JSON object")
	}
	if setModel {
		m, _ := json.Marshal(model)
		fields["model"] = m
	}
	if wantUsage {
		opts := map[string]json.RawMessage{}
		if prev, ok := fields["stream_options"]; ok && !bytes.Equal(bytes.TrimSpace(prev), []byte("null")) {
			if err := json.Unmarshal(prev, &opts); err != nil {
				return nil, apierr.BadParam("stream_options", "stream_options must be an object")
			}
		}
		opts["include_usage"] = json.RawMessage("true")
		b, _ := json.Marshal(opts)
		fields["stream_options"] = b
	}
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, apierr.Wrap(apierr.InvalidRequest, "invalid_json", "request body is not valid JSON", err)
	}
	return out, nil
}

// mayEscapeStreamOptions reports whether raw has a \u00XX escape of a letter
// of "stream_options". A key spelled with one is stream_options to the
// provider, which the fast path would not see: it would send the option twice
// and the provider, keeping the last, would read the caller's.
func mayEscapeStreamOptions(raw []byte) bool {
	for {
		i := bytes.Index(raw, []byte(`\u00`))
		if i < 0 || i+6 > len(raw) {
			return false
		}
		var c [1]byte
		if _, err := hex.Decode(c[:], raw[i+4:i+6]); err == nil && strings.IndexByte("stream_options", c[0]) >= 0 {
			return true
		}
		raw = raw[i+4:]
	}
}

var (
	_ provider.ChatAdapter = (*Adapter)(nil)
	_ provider.ModelLister = (*Adapter)(nil)
)
