package openai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/openai"
)

// TestAzureChatRequest checks the upstream request Azure OpenAI gets: the
// deployment and api-version in the URL, the caller's body with only the
// stream usage option added, and no credentials.
func TestAzureChatRequest(t *testing.T) {
	const base = "https://contoso.openai.azure.com"
	tests := []struct {
		name     string
		target   provider.Deployment
		raw      string
		wantURL  string
		wantBody string // exact bytes
	}{
		{
			name:     "default api-version",
			target:   provider.Deployment{Provider: "azure", Model: "gpt-4o-prod", BaseURL: base},
			raw:      `{"model":"azure/gpt-4o-prod","messages":[{"role":"user","content":"Hi"}]}`,
			wantURL:  base + "/openai/deployments/gpt-4o-prod/chat/completions?api-version=" + openai.AzureAPIVersion,
			wantBody: `{"model":"azure/gpt-4o-prod","messages":[{"role":"user","content":"Hi"}]}`,
		},
		{
			name:     "configured api-version, trailing slash in base",
			target:   provider.Deployment{Provider: "azure", Model: "gpt-4o-mini", BaseURL: base + "/", APIVersion: "2025-04-01-preview"},
			raw:      `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`,
			wantURL:  base + "/openai/deployments/gpt-4o-mini/chat/completions?api-version=2025-04-01-preview",
			wantBody: `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hi"}]}`,
		},
		{
			name:     "stream asks for usage",
			target:   provider.Deployment{Provider: "azure", Model: "chat", BaseURL: base},
			raw:      `{"model":"chat","stream":true,"messages":[{"role":"user","content":"Hi"}]}`,
			wantURL:  base + "/openai/deployments/chat/chat/completions?api-version=" + openai.AzureAPIVersion,
			wantBody: `{"stream_options":{"include_usage":true},"model":"chat","stream":true,"messages":[{"role":"user","content":"Hi"}]}`,
		},
		{
			name:     "deployment name escaped",
			target:   provider.Deployment{Provider: "azure", Model: "my deploy/1", BaseURL: base, APIVersion: "a&b"},
			raw:      `{"model":"x","messages":[{"role":"user","content":"Hi"}]}`,
			wantURL:  base + "/openai/deployments/my%20deploy%2F1/chat/completions?api-version=a%26b",
			wantBody: `{"model":"x","messages":[{"role":"user","content":"Hi"}]}`,
		},
	}
	a := openai.NewAzure()
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := llm.DecodeChatRequest([]byte(tc.raw))
			if err != nil {
				t.Fatal(err)
			}
			hreq, err := a.NewChatRequest(context.Background(), tc.target, provider.ChatCall{Req: req, Raw: []byte(tc.raw)})
			if err != nil {
				t.Fatalf("NewChatRequest: %v", err)
			}
			if hreq.Method != http.MethodPost {
				t.Errorf("method: got %s, want POST", hreq.Method)
			}
			if got := hreq.URL.String(); got != tc.wantURL {
				t.Errorf("URL: got %s, want %s", got, tc.wantURL)
			}
			for _, h := range []string{"Authorization", "Api-Key"} {
				if v := hreq.Header.Get(h); v != "" {
					t.Errorf("header %s: got %q, want none (upstream/cred signs)", h, v)
				}
			}
			if got := hreq.Header.Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type: got %q, want application/json", got)
			}
			body := azureBody(t, hreq)
			if body != tc.wantBody {
				t.Errorf("body:\ngot  %s\nwant %s", body, tc.wantBody)
			}
			if int64(len(body)) != hreq.ContentLength {
				t.Errorf("ContentLength: got %d, want %d", hreq.ContentLength, len(body))
			}
		})
	}
}

func azureBody(t *testing.T, r *http.Request) string {
	t.Helper()
	if r.GetBody == nil {
		t.Fatal("no GetBody: the request cannot be retried")
	}
	rc, err := r.GetBody()
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestAzureModels checks the model list's URL and decoding.
func TestAzureModels(t *testing.T) {
	a := openai.NewAzure()
	req, err := a.NewModelsRequest(context.Background(), provider.Deployment{Provider: "azure", BaseURL: "https://contoso.openai.azure.com", APIVersion: "2024-10-21"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := req.URL.String(), "https://contoso.openai.azure.com/openai/models?api-version=2024-10-21"; got != want {
		t.Errorf("URL: got %s, want %s", got, want)
	}
	ids, err := a.DecodeModels([]byte(`{"data":[{"id":"gpt-4o-2024-08-06","status":"succeeded","capabilities":{"chat_completion":true},"object":"model"},{"id":"text-embedding-3-small","object":"model"}],"object":"list"}`))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"gpt-4o-2024-08-06", "text-embedding-3-small"}, ids); diff != "" {
		t.Errorf("models (-want +got):\n%s", diff)
	}
}

// TestAzureErrors checks that Azure's errors (OpenAI's shape) map as OpenAI's.
func TestAzureErrors(t *testing.T) {
	tests := []struct {
		status   int
		body     string
		wantKind apierr.Kind
		wantCode string
		wantMsg  string
	}{
		{404, `{"error":{"code":"DeploymentNotFound","message":"The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."}}`,
			apierr.NotFound, "DeploymentNotFound", "The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again."},
		{401, `{"error":{"code":"401","message":"Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."}}`,
			apierr.UpstreamError, "upstream_auth_failed", "azure rejected svc's credentials for this provider (HTTP 401); an administrator must fix the provider's credentials"},
		{429, `{"error":{"code":"429","message":"Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 6 seconds."}}`,
			apierr.RateLimited, "429", "azure rate limit: Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 6 seconds."},
		{400, `{"error":{"message":"The response was filtered due to the prompt triggering Azure OpenAI's content management policy.","type":null,"param":"prompt","code":"content_filter","status":400}}`,
			apierr.InvalidRequest, "content_filter", "The response was filtered due to the prompt triggering Azure OpenAI's content management policy."},
	}
	a := openai.NewAzure()
	for _, tc := range tests {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			h := http.Header{"Retry-After": {"6"}}
			e := a.DecodeError("azure", tc.status, h, []byte(tc.body))
			if e.Kind != tc.wantKind || e.Code != tc.wantCode || e.Message != tc.wantMsg {
				got, _ := json.Marshal(map[string]any{"kind": e.Kind, "code": e.Code, "message": e.Message})
				t.Errorf("got %s, want kind %d code %q message %q", got, tc.wantKind, tc.wantCode, tc.wantMsg)
			}
		})
	}
}
