package anthropic

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
)

// NewNativeRequest forwards a native call to {base}/v1/{op}: the caller's body
// with the model replaced when it differs from the deployment's (a provider
// prefix or the [1m] suffix removed), the caller's anthropic-version (else the
// deployment's, else DefaultVersion) and anthropic-beta headers. No credentials.
func (a *Adapter) NewNativeRequest(ctx context.Context, t provider.Deployment, c provider.NativeCall) (*http.Request, error) {
	var body io.Reader
	if c.Method != http.MethodGet {
		b := c.Body
		if c.Model != "" && c.Model != t.Model {
			var err error
			if b, err = setModel(c.Body, t.Model); err != nil {
				return nil, err
			}
		}
		body = bytes.NewReader(b)
	}
	url := t.BaseURL + "/v1/" + c.Op
	if c.Query != "" {
		url += "?" + c.Query
	}
	req, err := http.NewRequestWithContext(ctx, c.Method, url, body)
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	version := c.Header.Get("anthropic-version")
	if version == "" {
		version = t.APIVersion
	}
	if version == "" {
		version = DefaultVersion
	}
	req.Header.Set("anthropic-version", version)
	if beta := c.Header.Values("anthropic-beta"); len(beta) > 0 {
		req.Header["Anthropic-Beta"] = beta
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if acc := c.Header.Get("Accept"); acc != "" {
		req.Header.Set("Accept", acc)
	}
	return req, nil
}

// setModel returns body with its top-level "model" set to model.
func setModel(body []byte, model string) ([]byte, error) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		return nil, apierr.New(apierr.InvalidRequest, "invalid_json", "request body must be a JSON object")
	}
	m, _ := json.Marshal(model)
	fields["model"] = m
	out, err := json.Marshal(fields)
	if err != nil {
		return nil, apierr.Wrap(apierr.InvalidRequest, "invalid_json", "request body is not valid JSON", err)
	}
	return out, nil
}

// DecodeNative reads usage and model from a non-streamed Messages answer.
func (a *Adapter) DecodeNative(body []byte) (llm.Usage, string, error) { return NativeUsage(body) }

// DecodeNativeStream relays a Messages stream unchanged, recording usage.
func (a *Adapter) DecodeNativeStream(body io.ReadCloser, info *provider.StreamInfo) llm.Stream {
	return NativeStream(body, info)
}

var _ provider.Native = (*Adapter)(nil)
