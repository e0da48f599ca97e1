package providertest_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/anthropic"
	"github.com/svc-gateway/svc/internal/provider/bedrock"
	"github.com/svc-gateway/svc/internal/provider/cohere"
	"github.com/svc-gateway/svc/internal/provider/gemini"
	"github.com/svc-gateway/svc/internal/provider/openai"
	"github.com/svc-gateway/svc/internal/providertest"
)

// echoKey has no credential shape: only an exact scrub finds it.
const echoKey = "echo-Test/opaque+Secret"

// echoCase is one endpoint of one fake.
type echoCase struct {
	name         string
	method, path string
	body         string
	header       http.Header
	// fields are the JSON paths of the error body that must quote the key.
	fields  []string
	adapter provider.ChatAdapter
}

func hdr(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return h
}

// TestEchoKey checks X-Fake-Echo-Key on every endpoint of every fake: the
// answer has the status asked for and quotes the key the request carried in
// the fields the provider's errors have; and, decoded by the provider's
// adapter and scrubbed with the key (as the proxy does), it quotes it
// nowhere a caller or a log sees.
func TestEchoKey(t *testing.T) {
	oai := providertest.NewOpenAI(t, providertest.WithAPIKey(echoKey))
	oaiAnyKey := providertest.NewOpenAI(t)
	anth := providertest.NewAnthropic(t, providertest.AnthAPIKey(echoKey))
	gem := providertest.NewGemini(t, providertest.GemAPIKey(echoKey))
	coh := providertest.NewCohere(t, providertest.CohWithAPIKey(echoKey))
	bedr := providertest.NewBedrock(t, providertest.BedrockBearer(echoKey))
	bedrSigV4 := providertest.NewBedrock(t)

	bearer := hdr("Authorization", "Bearer "+echoKey)
	oaiFields := []string{"error.message", "error.param", "error.code"}
	chat := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
	anthHeader := hdr("X-Api-Key", echoKey, "Anthropic-Version", "2023-06-01")
	anthMsg := `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"hi"}]}`
	gemHeader := hdr("X-Goog-Api-Key", echoKey)
	gemBody := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	bedrBody := `{"messages":[{"role":"user","content":[{"text":"hi"}]}]}`
	sigV4 := hdr("Authorization", "AWS4-HMAC-SHA256 Credential=AKIAECHOTEST0000KEY1/20250801/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=00",
		"X-Amz-Date", "20250801T000000Z")

	type fake struct {
		url     string
		header  http.Header // the credential, unless the case sets its own
		adapter provider.ChatAdapter
		fields  []string
		cases   []echoCase
	}
	fakes := []fake{
		{oai.URL(), bearer, openai.New(), oaiFields, []echoCase{
			{name: "openai chat", method: "POST", path: "/chat/completions", body: chat},
			{name: "openai chat stream", method: "POST", path: "/chat/completions", body: `{"model":"gpt-4o-mini","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
			{name: "openai embeddings", method: "POST", path: "/embeddings", body: `{"model":"text-embedding-3-small","input":"hi"}`},
			{name: "openai completions", method: "POST", path: "/completions", body: `{"model":"gpt-3.5-turbo-instruct","prompt":"hi"}`},
			{name: "openai rerank", method: "POST", path: "/rerank", body: `{"model":"rerank-v3.5","query":"q","documents":["a"]}`},
			{name: "openai images", method: "POST", path: "/images/generations", body: `{"model":"gpt-image-1","prompt":"a cat"}`},
			{name: "openai speech", method: "POST", path: "/audio/speech", body: `{"model":"gpt-4o-mini-tts","input":"hi","voice":"alloy"}`},
			{name: "openai transcriptions", method: "POST", path: "/audio/transcriptions", body: "--x--"},
			{name: "openai models", method: "GET", path: "/models"},
		}},
		{oaiAnyKey.URL(), hdr("Api-Key", echoKey), openai.NewAzure(), oaiFields, []echoCase{
			{name: "azure api-key", method: "POST", path: "/chat/completions", body: chat},
		}},
		{anth.URL(), anthHeader, anthropic.New(), nil, []echoCase{
			{name: "anthropic messages", method: "POST", path: "/v1/messages", body: anthMsg},
			{name: "anthropic messages stream", method: "POST", path: "/v1/messages", body: `{"model":"claude-sonnet-4-5","max_tokens":10,"stream":true,"messages":[{"role":"user","content":"hi"}]}`},
			{name: "anthropic count tokens", method: "POST", path: "/v1/messages/count_tokens", body: anthMsg},
			{name: "anthropic models", method: "GET", path: "/v1/models"},
		}},
		{gem.URL(), gemHeader, gemini.New(), nil, []echoCase{
			{name: "gemini generate", method: "POST", path: "/v1beta/models/gemini-2.5-flash:generateContent", body: gemBody},
			{name: "gemini stream", method: "POST", path: "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", body: gemBody},
			{name: "gemini embed", method: "POST", path: "/v1beta/models/gemini-embedding-001:embedContent", body: `{"content":{"parts":[{"text":"hi"}]}}`},
			{name: "gemini key in query", method: "POST", path: "/v1beta/models/gemini-2.5-flash:generateContent?key=" + url.QueryEscape(echoKey), body: gemBody, header: http.Header{}},
			{name: "gemini models", method: "GET", path: "/v1beta/models"},
		}},
		{coh.URL(), bearer, cohere.New(), nil, []echoCase{
			{name: "cohere chat", method: "POST", path: "/v2/chat", body: `{"model":"command-a-03-2025","messages":[{"role":"user","content":"hi"}]}`},
			{name: "cohere chat stream", method: "POST", path: "/v2/chat", body: `{"model":"command-a-03-2025","stream":true,"messages":[{"role":"user","content":"hi"}]}`},
			{name: "cohere rerank", method: "POST", path: "/v2/rerank", body: `{"model":"rerank-v3.5","query":"q","documents":["a"]}`},
			{name: "cohere embed", method: "POST", path: "/v2/embed", body: `{"model":"embed-v4.0","texts":["hi"],"input_type":"search_document"}`},
			{name: "cohere models", method: "GET", path: "/v1/models"},
		}},
		{bedr.URL(), bearer, bedrock.New(), nil, []echoCase{
			{name: "bedrock converse", method: "POST", path: "/model/" + bedrModel + "/converse", body: bedrBody},
			{name: "bedrock converse stream", method: "POST", path: "/model/" + bedrModel + "/converse-stream", body: bedrBody},
			{name: "bedrock invoke", method: "POST", path: "/model/amazon.titan-embed-text-v2:0/invoke", body: `{"inputText":"hi"}`},
		}},
	}
	for _, f := range fakes {
		for _, c := range f.cases {
			if c.header == nil {
				c.header = f.header
			}
			c.adapter, c.fields = f.adapter, f.fields
			t.Run(c.name, func(t *testing.T) { checkEcho(t, f.url, c, echoKey) })
		}
	}
	t.Run("bedrock sigv4", func(t *testing.T) {
		c := echoCase{method: "POST", path: "/model/" + bedrModel + "/converse", body: bedrBody, header: sigV4, adapter: bedrock.New()}
		checkEcho(t, bedrSigV4.URL(), c, "AKIAECHOTEST0000KEY1")
	})
}

// checkEcho sends c with X-Fake-Echo-Key 422 and checks the answer quotes
// key, in c.fields (error.message, or message, by default), and that the
// adapter's error, scrubbed with key, does not.
func checkEcho(t *testing.T, base string, c echoCase, key string) {
	t.Helper()
	req, err := http.NewRequest(c.method, base+c.path, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = c.header.Clone()
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(providertest.HeaderEchoKey, "422")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 422 {
		t.Fatalf("status: got %d, want 422 (body %s)", resp.StatusCode, body)
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("body %q is not JSON: %v", body, err)
	}
	fields := c.fields
	if len(fields) == 0 {
		fields = []string{"message"}
		if m, ok := v.(map[string]any); ok && m["error"] != nil {
			fields = []string{"error.message"}
		}
	}
	for _, path := range fields {
		if got := field(v, path); !strings.Contains(got, key) {
			t.Errorf("%s: got %q, want the key %q quoted", path, got, key)
		}
	}
	e := c.adapter.DecodeError("fake", resp.StatusCode, resp.Header, body)
	scrubbed := apierr.Scrub(e, key)
	for _, out := range [][]byte{apierr.JSON(scrubbed), apierr.AnthropicJSON(scrubbed), []byte(scrubbed.Error())} {
		if bytes.Contains(out, []byte(key)) {
			t.Errorf("after DecodeError and Scrub the key is still in %s", out)
		}
	}
}

// field is the string at a dotted path of a decoded JSON value.
func field(v any, path string) string {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return ""
		}
		v = m[k]
	}
	s, _ := v.(string)
	return s
}

// TestEchoKeyBadHeader checks a value that is not an error status is refused
// with a 400 naming the header, by every fake.
func TestEchoKeyBadHeader(t *testing.T) {
	oai := providertest.NewOpenAI(t)
	anth := providertest.NewAnthropic(t)
	gem := providertest.NewGemini(t)
	coh := providertest.NewCohere(t)
	bedr := providertest.NewBedrock(t, providertest.BedrockBearer("tok"))
	for name, r := range map[string]struct {
		url    string
		header http.Header
		body   string
	}{
		"openai":    {oai.URL() + "/chat/completions", hdr("Authorization", "Bearer k"), `{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		"anthropic": {anth.URL() + "/v1/messages", hdr("Anthropic-Version", "2023-06-01"), `{}`},
		"gemini":    {gem.URL() + "/v1beta/models/gemini-2.5-flash:generateContent", http.Header{}, `{}`},
		"cohere":    {coh.URL() + "/v2/chat", http.Header{}, `{}`},
		"bedrock":   {bedr.URL() + "/model/" + bedrModel + "/converse", hdr("Authorization", "Bearer tok"), `{}`},
	} {
		for _, v := range []string{"200", "soon", "600"} {
			req, _ := http.NewRequest("POST", r.url, strings.NewReader(r.body))
			req.Header = r.header.Clone()
			req.Header.Set(providertest.HeaderEchoKey, v)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 400 || !bytes.Contains(body, []byte(providertest.HeaderEchoKey)) {
				t.Errorf("%s, %s %q: got %d %s, want 400 naming the header", name, providertest.HeaderEchoKey, v, resp.StatusCode, body)
			}
		}
	}
}
