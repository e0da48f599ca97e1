package openai

import (
	"bytes"
	"context"
	"mime"
	"net/http"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider"
)

// NewPassthroughRequest forwards an OpenAI-compatible endpoint: POST
// {base}/{op} (Azure: the deployment's URL) with the caller's body, the model
// replaced by the deployment's in JSON bodies and, when asked, stream usage
// requested.
func (a *Adapter) NewPassthroughRequest(ctx context.Context, t provider.Deployment, c provider.PassthroughCall) (*http.Request, error) {
	body := c.Body
	if isJSON(c.ContentType) {
		var err error
		body, err = PatchBody(c.Body, !a.keepModel && c.Model != t.Model, t.Model, c.WantUsage)
		if err != nil {
			return nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a.urlFor(t, c.Op), bytes.NewReader(body))
	if err != nil {
		return nil, apierr.Wrap(apierr.Internal, "bad_base_url", "the provider's base URL is invalid", err)
	}
	req.Header.Set("Content-Type", c.ContentType)
	return req, nil
}

func isJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || mt == "text/json")
}

var _ provider.Passthrough = (*Adapter)(nil)
