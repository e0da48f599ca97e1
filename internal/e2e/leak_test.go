package e2e

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/providertest"
)

// echoing puts a reverse proxy in front of fake that asks it, on every
// request, to answer a 422 quoting the key it received in its message,
// param and code (providertest.HeaderEchoKey), as providers do; it returns
// the proxy's /v1 base URL.
func echoing(t *testing.T, fake *providertest.OpenAI) string {
	u, err := url.Parse(strings.TrimSuffix(fake.URL(), "/v1"))
	if err != nil {
		t.Fatal(err)
	}
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(u)
		r.Out.Header.Set(providertest.HeaderEchoKey, "422")
	}}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL + "/v1"
}

// TestProviderKeyNeverReachesTheCaller: a provider that echoes svc's key in
// an error's message, param and code gets it back to nobody — not the
// client's error body on any endpoint, streamed or not, nor the audit
// log, nor svc's own log. The key has no known shape (no sk-, gsk_ …
// prefix): only the exact scrubbing of the key svc sent catches it.
func TestProviderKeyNeverReachesTheCaller(t *testing.T) {
	const shapeless = "plainprovidersecret20"
	fake := providertest.NewOpenAI(t, providertest.WithAPIKey(shapeless))
	g := start(t, nil, with(nil, "OPENAI_API_BASE", echoing(t, fake), "OPENAI_API_KEY", shapeless))
	key, _ := g.newKey(nil)

	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	mw.WriteField("model", "whisper-1")
	fw, _ := mw.CreateFormFile("file", "a.wav")
	fw.Write([]byte("RIFF....WAVE"))
	mw.Close()

	cases := []struct {
		name, path, body, contentType string
	}{
		{"chat", "/v1/chat/completions", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`, ""},
		{"chat stream", "/v1/chat/completions", `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`, ""},
		{"embeddings", "/v1/embeddings", `{"model":"text-embedding-3-small","input":"hi"}`, ""},
		{"completions", "/v1/completions", `{"model":"gpt-3.5-turbo-instruct","prompt":"hi"}`, ""},
		{"completions stream", "/v1/completions", `{"model":"gpt-3.5-turbo-instruct","prompt":"hi","stream":true}`, ""},
		{"rerank", "/v1/rerank", `{"model":"openai/rerank-1","query":"q","documents":["a","b"]}`, ""},
		{"images", "/v1/images/generations", `{"model":"dall-e-2","prompt":"a cat"}`, ""},
		{"speech", "/v1/audio/speech", `{"model":"tts-1","input":"hi","voice":"alloy"}`, ""},
		{"transcriptions", "/v1/audio/transcriptions", form.String(), mw.FormDataContentType()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			hdr := map[string]string{}
			if c.contentType != "" {
				hdr["Content-Type"] = c.contentType
			}
			resp, body := g.post(c.path, key, []byte(c.body), hdr)
			if resp.StatusCode != http.StatusBadRequest {
				t.Errorf("status %d, want the provider's 422 as a 400 (body %s)", resp.StatusCode, body)
			}
			if strings.Contains(strings.ToLower(string(body)), shapeless) {
				t.Errorf("the provider key reached the client: %s", body)
			}
		})
	}
	entries := g.logEntries("limit=100", len(cases))
	if len(entries) < len(cases) {
		t.Fatalf("%d audit entries, want %d", len(entries), len(cases))
	}
	for _, e := range entries {
		if e["error"] == nil || e["error"] == "" {
			t.Errorf("entry without the provider's error: %v", e)
		}
		if b, _ := json.Marshal(e); strings.Contains(strings.ToLower(string(b)), shapeless) {
			t.Errorf("the provider key reached the audit log: %v", e)
		}
	}
	if strings.Contains(strings.ToLower(g.logs.String()), shapeless) {
		t.Errorf("the provider key reached svc's log")
	}
}
