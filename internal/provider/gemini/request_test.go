package gemini_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/gemini"
)

func chatCall(t *testing.T, stream bool) provider.ChatCall {
	t.Helper()
	raw := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":` + map[bool]string{true: "true", false: "false"}[stream] + `}`)
	req, err := llm.DecodeChatRequest(raw)
	if err != nil {
		t.Fatal(err)
	}
	return provider.ChatCall{Req: req, Raw: raw}
}

func TestURLs(t *testing.T) {
	vt := provider.Deployment{Model: "gemini-2.5-pro", Project: "my-proj", Location: "us-central1"}
	for _, tc := range []struct {
		name    string
		a       *gemini.Adapter
		t       provider.Deployment
		stream  bool
		want    string
		wantErr apierr.Kind
	}{
		{"gemini default base", gemini.New(), provider.Deployment{Model: "gemini-2.5-flash"}, false,
			"https://generativelanguage.googleapis.com/v1beta/models/gemini-2.5-flash:generateContent", 0},
		{"gemini base with slash, models/ prefix", gemini.New(), provider.Deployment{Model: "models/gemini-2.5-flash", BaseURL: "http://127.0.0.1:9/"}, true,
			"http://127.0.0.1:9/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", 0},
		{"vertex regional", gemini.NewVertex(), vt, false,
			"https://us-central1-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-pro:generateContent", 0},
		{"vertex regional stream", gemini.NewVertex(), vt, true,
			"https://us-central1-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse", 0},
		{"vertex global", gemini.NewVertex(), provider.Deployment{Model: "gemini-2.5-pro", Project: "p", Location: "global"}, false,
			"https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google/models/gemini-2.5-pro:generateContent", 0},
		{"vertex base URL", gemini.NewVertex(), provider.Deployment{Model: "gemini-2.5-pro", Project: "p", Location: "us-east5", BaseURL: "http://127.0.0.1:9"}, false,
			"http://127.0.0.1:9/v1/projects/p/locations/us-east5/publishers/google/models/gemini-2.5-pro:generateContent", 0},
		{"vertex no project", gemini.NewVertex(), provider.Deployment{Model: "m", Location: "us-central1"}, false, "", apierr.Unavailable},
		{"vertex no project nor location", gemini.NewVertex(), provider.Deployment{Model: "m"}, false, "", apierr.Unavailable},
		{"vertex bad location", gemini.NewVertex(), provider.Deployment{Model: "m", Project: "p", Location: "evil.com/x"}, false, "", apierr.Unavailable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, err := tc.a.NewChatRequest(context.Background(), tc.t, chatCall(t, tc.stream))
			if tc.wantErr != 0 {
				var e *apierr.Error
				if !errors.As(err, &e) || e.Kind != tc.wantErr {
					t.Fatalf("got error %v, want kind %d", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := req.URL.String(); got != tc.want {
				t.Errorf("URL: got %s, want %s", got, tc.want)
			}
			if req.Method != http.MethodPost {
				t.Errorf("method: got %s, want POST", req.Method)
			}
		})
	}
}

func TestVertexMissingNamesSettings(t *testing.T) {
	_, err := gemini.NewVertex().NewChatRequest(context.Background(), provider.Deployment{Model: "m"}, chatCall(t, false))
	var e *apierr.Error
	if !errors.As(err, &e) || e.Message != "the Vertex AI provider is not configured: set VERTEX_PROJECT and VERTEX_LOCATION" {
		t.Errorf("got %v, want a message naming VERTEX_PROJECT and VERTEX_LOCATION", err)
	}
}

func TestModels(t *testing.T) {
	ctx := context.Background()
	req, err := gemini.New().NewModelsRequest(ctx, provider.Deployment{BaseURL: "https://generativelanguage.googleapis.com"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := req.URL.String(), "https://generativelanguage.googleapis.com/v1beta/models?pageSize=1000"; got != want {
		t.Errorf("Gemini models URL: got %s, want %s", got, want)
	}
	req, err = gemini.NewVertex().NewModelsRequest(ctx, provider.Deployment{Project: "p", Location: "us-central1"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := req.URL.String(), "https://us-central1-aiplatform.googleapis.com/v1beta1/publishers/google/models?pageSize=1000"; got != want {
		t.Errorf("Vertex models URL: got %s, want %s", got, want)
	}
	for _, tc := range []struct {
		name, body string
		want       []string
	}{
		{"gemini", `{"models":[{"name":"models/gemini-2.5-flash","displayName":"Gemini 2.5 Flash"},{"name":"models/text-embedding-004"},{"name":""}],"nextPageToken":"x"}`,
			[]string{"gemini-2.5-flash", "text-embedding-004"}},
		{"vertex", `{"publisherModels":[{"name":"publishers/google/models/gemini-2.5-pro"}]}`, []string{"gemini-2.5-pro"}},
		{"vertex empty", `{}`, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := gemini.New().DecodeModels([]byte(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("models (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := gemini.New().DecodeModels([]byte(`[`)); apierr.KindOf(err) != apierr.UpstreamError {
		t.Errorf("invalid list: got %v, want an UpstreamError", err)
	}
}

func TestReasoningEffort(t *testing.T) {
	raw := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}],"reasoning_effort":"extreme"}`)
	req, err := llm.DecodeChatRequest(raw)
	if err != nil {
		t.Skip("llm rejects the value itself:", err)
	}
	_, err = gemini.BuildRequest(req)
	var e *apierr.Error
	if !errors.As(err, &e) || e.Param != "reasoning_effort" {
		t.Errorf("got %v, want a 400 naming reasoning_effort", err)
	}
}
