package e2e

// Developer tools (docs/developer-tools.md): every base address the page
// documents, driven with the official SDKs configured as the tools configure
// them (options, or the environment variables a command-line tool reads).
// A documented shape that stops working fails here; so does a documented
// mistake (a doubled /v1) that stops answering as the troubleshooting
// section says.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	aoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/providertest"
)

const (
	devOpenAIReply = "one two three four"
	devAnthReply   = "five six seven eight"
	devChatBody    = `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}`
)

// sdkEnv are the variables the two SDKs read by themselves. Every test
// here clears them first, so a developer's shell cannot change what runs.
var sdkEnv = []string{
	"OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_ADMIN_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID",
	"OPENAI_WEBHOOK_SECRET", "OPENAI_CUSTOM_HEADERS",
	"ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_PROFILE",
	"ANTHROPIC_CUSTOM_HEADERS", "ANTHROPIC_WEBHOOK_SIGNING_KEY", "ANTHROPIC_FEDERATION_RULE_ID",
	"ANTHROPIC_ORGANIZATION_ID", "ANTHROPIC_IDENTITY_TOKEN_FILE",
}

func clearSDKEnv(t *testing.T) {
	t.Helper()
	for _, k := range sdkEnv {
		t.Setenv(k, "") // restored when the test ends
		os.Unsetenv(k)
	}
}

// devGateway is svc with a fake OpenAI and a fake Anthropic upstream, and
// one developer's virtual key.
func devGateway(t *testing.T) (g *gateway, oa *providertest.OpenAI, an *providertest.Anthropic, key, keyID string) {
	t.Helper()
	clearSDKEnv(t)
	oa = providertest.NewOpenAI(t, providertest.WithAPIKey(upstreamKey), providertest.WithReply(devOpenAIReply), providertest.WithChunks(4))
	an = providertest.NewAnthropic(t, providertest.AnthAPIKey(anthKey), providertest.AnthReply(devAnthReply), providertest.AnthChunks(4))
	g = start(t, oa, config.Map{"ANTHROPIC_API_BASE": an.URL(), "ANTHROPIC_API_KEY": anthKey})
	key, keyID = g.newKey(map[string]any{"alias": "dev-alice"})
	return g, oa, an, key, keyID
}

// devMessage is a small native messages request.
func devMessage() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     "claude-sonnet-4-5",
		MaxTokens: 64,
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Say hello."))},
	}
}

// checkOpenAIChat sends a chat and a streamed chat with c and checks both
// answers; it returns the path the SDK called.
func checkOpenAIChat(t *testing.T, c openai.Client) string {
	t.Helper()
	ctx := context.Background()
	var httpResp *http.Response
	res, err := c.Chat.Completions.New(ctx, chatParams("gpt-4o-mini", "hi"), option.WithResponseInto(&httpResp))
	if err != nil {
		t.Fatalf("chat: %v", err)
	}
	if got := res.Choices[0].Message.Content; got != devOpenAIReply {
		t.Errorf("chat content = %q, want %q", got, devOpenAIReply)
	}
	s := c.Chat.Completions.NewStreaming(ctx, chatParams("gpt-4o-mini", "count"))
	acc := openai.ChatCompletionAccumulator{}
	chunks := 0
	for s.Next() {
		acc.AddChunk(s.Current())
		chunks++
	}
	if err := s.Err(); err != nil {
		t.Fatalf("streamed chat: %v", err)
	}
	if got := acc.Choices[0].Message.Content; got != devOpenAIReply || chunks < 4 {
		t.Errorf("streamed chat: %q in %d chunks, want %q in at least 4", got, chunks, devOpenAIReply)
	}
	return httpResp.Request.URL.Path
}

// modelIDs lists the models c sees.
func modelIDs(t *testing.T, c openai.Client) (map[string]bool, error) {
	t.Helper()
	page, err := c.Models.List(context.Background())
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, m := range page.Data {
		ids[m.ID] = true
	}
	return ids, nil
}

// TestDevToolsOpenAIBaseAddresses: the OpenAI SDK, which editors, extensions
// and command-line tools embed, at each base address a developer may set.
// The SDK adds a slash to a base path that lacks one and joins its paths
// ("chat/completions", "models") to it, so a trailing slash changes
// nothing; a base without /v1 sends /chat/completions and /models, which
// svc serves as aliases of the /v1 routes.
func TestDevToolsOpenAIBaseAddresses(t *testing.T) {
	g, _, _, key, _ := devGateway(t)
	for _, tc := range []struct {
		name, base, wantChat string
		noV1                 bool
	}{
		{"base /v1", "/v1", "/v1/chat/completions", false},
		{"base /v1 with trailing slash", "/v1/", "/v1/chat/completions", false},
		{"base host root", "", "/chat/completions", true},
		{"base host root with trailing slash", "/", "/chat/completions", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := openai.NewClient(option.WithBaseURL(g.proxy+tc.base), option.WithAPIKey(key), option.WithMaxRetries(0))
			t.Run("chat", func(t *testing.T) {
				if got := checkOpenAIChat(t, c); got != tc.wantChat {
					t.Errorf("the SDK called %s, want %s", got, tc.wantChat)
				}
			})
			t.Run("models", func(t *testing.T) {
				ids, err := modelIDs(t, c)
				if err != nil {
					t.Fatalf("models: %v", err)
				}
				if !ids["gpt-4o-mini"] {
					t.Errorf("models %v lack gpt-4o-mini", ids)
				}
			})
		})
	}
}

// TestDevToolsEditorAppendsV1: an editor that takes a base and appends
// /v1/… itself, simulated with plain HTTP as such an editor builds its URLs.
func TestDevToolsEditorAppendsV1(t *testing.T) {
	g, _, _, key, _ := devGateway(t)
	// Redirects are reported, not followed: many editors do not follow them.
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	send := func(t *testing.T, method, u, body string) (*http.Response, []byte) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, u, rd)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	base := g.proxy // as documented: no path, no trailing slash

	t.Run("base without trailing slash", func(t *testing.T) {
		resp, b := send(t, "POST", base+"/v1/chat/completions", devChatBody)
		var res struct {
			Choices []struct{ Message struct{ Content string } }
		}
		if resp.StatusCode != 200 || json.Unmarshal(b, &res) != nil || len(res.Choices) == 0 || res.Choices[0].Message.Content != devOpenAIReply {
			t.Errorf("chat: %d %s", resp.StatusCode, b)
		}
		resp, b = send(t, "POST", base+"/v1/chat/completions", strings.Replace(devChatBody, `{`, `{"stream":true,`, 1))
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" ||
			!bytes.HasSuffix(bytes.TrimSpace(b), []byte("data: [DONE]")) {
			t.Errorf("streamed chat: %d %q, body %.300s; want an SSE stream ending with [DONE]", resp.StatusCode, resp.Header.Get("Content-Type"), b)
		}
		resp, b = send(t, "GET", base+"/v1/models", "")
		var list struct{ Data []struct{ ID string } }
		if resp.StatusCode != 200 || json.Unmarshal(b, &list) != nil || len(list.Data) == 0 {
			t.Errorf("models: %d %.300s", resp.StatusCode, b)
		}
	})

	t.Run("base with trailing slash joined as a URL", func(t *testing.T) {
		// What the SDKs and most editors do: resolve a relative path against the base.
		b, err := url.Parse(base + "/")
		if err != nil {
			t.Fatal(err)
		}
		u, err := b.Parse("v1/chat/completions")
		if err != nil {
			t.Fatal(err)
		}
		if resp, body := send(t, "POST", u.String(), devChatBody); resp.StatusCode != 200 {
			t.Errorf("POST %s: %d %s", u, resp.StatusCode, body)
		}
	})

	t.Run("base with trailing slash concatenated", func(t *testing.T) {
		// A tool that glues strings sends //v1/…: svc answers with a
		// redirect to the clean path (the troubleshooting section says so).
		resp, body := send(t, "POST", base+"/"+"/v1/chat/completions", devChatBody)
		if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != "/v1/chat/completions" {
			t.Errorf("POST //v1/chat/completions: %d Location %q %s; want 307 to /v1/chat/completions",
				resp.StatusCode, resp.Header.Get("Location"), body)
		}
	})

	t.Run("base with /v1 doubled", func(t *testing.T) {
		// The base set to …/v1 in an editor that appends /v1 itself.
		resp, body := send(t, "POST", base+"/v1"+"/v1/chat/completions", devChatBody)
		var e struct {
			Error struct{ Message, Code string }
		}
		json.Unmarshal(body, &e)
		if resp.StatusCode != http.StatusNotFound || e.Error.Code != "route_not_found" ||
			!strings.Contains(e.Error.Message, "/v1/v1/chat/completions") {
			t.Errorf("doubled /v1: %d %s; want 404 route_not_found naming the path", resp.StatusCode, body)
		}
	})
}

// TestDevToolsNativeBaseAddresses: the Anthropic SDK (what native
// provider-style clients embed) at /native and /ide, with the virtual key
// as x-api-key and as a bearer token.
func TestDevToolsNativeBaseAddresses(t *testing.T) {
	g, _, an, key, _ := devGateway(t)
	ctx := context.Background()
	for _, prefix := range []string{"/native", "/ide"} {
		for _, cred := range []struct {
			name, header, want string
			opt                aoption.RequestOption
		}{
			{"x-api-key", "X-Api-Key", key, aoption.WithAPIKey(key)},
			{"bearer", "Authorization", "Bearer " + key, aoption.WithAuthToken(key)},
		} {
			t.Run(prefix[1:]+" "+cred.name, func(t *testing.T) {
				c := anthropic.NewClient(aoption.WithBaseURL(g.proxy+prefix), cred.opt, aoption.WithMaxRetries(0))
				var httpResp *http.Response
				// Coding CLIs send beta flags; svc forwards them.
				m, err := c.Messages.New(ctx, devMessage(), aoption.WithResponseInto(&httpResp),
					aoption.WithHeader("anthropic-beta", "devtools-beta-2025"))
				if err != nil {
					t.Fatalf("messages: %v", err)
				}
				if got := m.Content[0].AsText().Text; got != devAnthReply {
					t.Errorf("message text %q, want %q", got, devAnthReply)
				}
				if got := httpResp.Request.URL.Path; got != prefix+"/v1/messages" {
					t.Errorf("the SDK called %s, want %s/v1/messages", got, prefix)
				}
				if got := httpResp.Request.Header.Get(cred.header); got != cred.want {
					t.Errorf("the SDK sent %s %q, want the virtual key there", cred.header, got)
				}
				up := lastPost(t, an.Requests())
				if up.Header.Get("x-api-key") != anthKey {
					t.Errorf("upstream x-api-key %q, want svc's provider key", up.Header.Get("x-api-key"))
				}
				if up.Header.Get("anthropic-beta") != "devtools-beta-2025" || up.Header.Get("anthropic-version") == "" {
					t.Errorf("upstream anthropic-beta %q, anthropic-version %q; want both forwarded",
						up.Header.Get("anthropic-beta"), up.Header.Get("anthropic-version"))
				}
				for name, vals := range up.Header {
					if strings.Contains(strings.Join(vals, " "), key) {
						t.Errorf("the virtual key reached the provider in %s", name)
					}
				}

				st := c.Messages.NewStreaming(ctx, devMessage())
				var acc anthropic.Message
				events := 0
				for st.Next() {
					if err := acc.Accumulate(st.Current()); err != nil {
						t.Fatal(err)
					}
					events++
				}
				if err := st.Err(); err != nil {
					t.Fatalf("streamed messages: %v", err)
				}
				if len(acc.Content) == 0 || acc.Content[0].AsText().Text != devAnthReply || acc.Usage.OutputTokens == 0 {
					t.Errorf("streamed message %+v, want %q with usage", acc, devAnthReply)
				}
				if events < 6 { // start, block start, 4 deltas, …
					t.Errorf("%d stream events, want the provider's events relayed one by one", events)
				}
			})
		}
	}

	t.Run("base /native/v1 doubles the version", func(t *testing.T) {
		c := anthropic.NewClient(aoption.WithBaseURL(g.proxy+"/native/v1"), aoption.WithAPIKey(key), aoption.WithMaxRetries(0))
		_, err := c.Messages.New(ctx, devMessage())
		var aerr *anthropic.Error
		if !errors.As(err, &aerr) || aerr.StatusCode != http.StatusNotFound ||
			!strings.Contains(aerr.RawJSON(), "no route for POST /native/v1/v1/messages") {
			t.Errorf("base /native/v1: %v; want 404 naming /native/v1/v1/messages", err)
		}
	})
}

// TestDevToolsCommandLineEnvironment: command-line tools built on the
// standard SDKs, configured only through the variables the page documents.
func TestDevToolsCommandLineEnvironment(t *testing.T) {
	g, _, _, key, _ := devGateway(t)
	ctx := context.Background()

	t.Run("OPENAI_BASE_URL and OPENAI_API_KEY", func(t *testing.T) {
		t.Setenv("OPENAI_BASE_URL", g.proxy+"/v1")
		t.Setenv("OPENAI_API_KEY", key)
		c := openai.NewClient(option.WithMaxRetries(0))
		if got := checkOpenAIChat(t, c); got != "/v1/chat/completions" {
			t.Errorf("the SDK called %s, want /v1/chat/completions", got)
		}
		if ids, err := modelIDs(t, c); err != nil || !ids["gpt-4o-mini"] {
			t.Errorf("models: %v %v", ids, err)
		}
	})

	t.Run("Responses API at OPENAI_BASE_URL", func(t *testing.T) {
		t.Setenv("OPENAI_BASE_URL", g.proxy+"/v1")
		t.Setenv("OPENAI_API_KEY", key)
		c := openai.NewClient(option.WithMaxRetries(0))
		r, err := c.Responses.New(ctx, responses.ResponseNewParams{
			Model: "gpt-4o-mini",
			Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("hi")},
		})
		if err != nil {
			t.Fatalf("responses: %v", err)
		}
		if r.OutputText() == "" {
			t.Errorf("response %+v has no output text", r)
		}
	})

	for _, tc := range []struct{ variable, header, want string }{
		{"ANTHROPIC_API_KEY", "X-Api-Key", key},
		{"ANTHROPIC_AUTH_TOKEN", "Authorization", "Bearer " + key},
	} {
		t.Run("ANTHROPIC_BASE_URL and "+tc.variable, func(t *testing.T) {
			t.Setenv("ANTHROPIC_BASE_URL", g.proxy+"/native")
			t.Setenv(tc.variable, key)
			c := anthropic.NewClient(aoption.WithMaxRetries(0))
			var httpResp *http.Response
			m, err := c.Messages.New(ctx, devMessage(), aoption.WithResponseInto(&httpResp))
			if err != nil {
				t.Fatalf("messages: %v", err)
			}
			if m.Content[0].AsText().Text != devAnthReply {
				t.Errorf("message %+v", m)
			}
			if got := httpResp.Request.Header.Get(tc.header); got != tc.want {
				t.Errorf("the SDK sent %s %q, want the virtual key there", tc.header, got)
			}
		})
	}
}

// TestDevToolsKeyMistakes: the 401s of the troubleshooting section.
func TestDevToolsKeyMistakes(t *testing.T) {
	g, _, _, key, _ := devGateway(t)
	msg := `{"model":"claude-sonnet-4-5","max_tokens":16,"messages":[{"role":"user","content":"hi"}]}`
	for _, tc := range []struct {
		name, path, body string
		hdr              map[string]string
		want             int
		code             string
	}{
		{"no key", "/v1/chat/completions", devChatBody, nil, 401, "missing_api_key"},
		{"a provider key instead of the virtual key", "/v1/chat/completions", devChatBody,
			map[string]string{"Authorization": "Bearer " + upstreamKey}, 401, "invalid_api_key"},
		{"x-api-key on an OpenAI route", "/v1/chat/completions", devChatBody,
			map[string]string{"x-api-key": key}, 401, "missing_api_key"},
		{"x-api-key on the native route", "/native/v1/messages", msg,
			map[string]string{"x-api-key": key, "anthropic-version": "2023-06-01"}, 200, ""},
		{"a provider key as x-api-key on the native route", "/native/v1/messages", msg,
			map[string]string{"x-api-key": anthKey, "anthropic-version": "2023-06-01"}, 401, "authentication_error"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp, b := g.post(tc.path, "", []byte(tc.body), tc.hdr)
			if resp.StatusCode != tc.want || !strings.Contains(string(b), tc.code) {
				t.Errorf("%s: %d %s; want %d %s", tc.path, resp.StatusCode, b, tc.want, tc.code)
			}
		})
	}
}

// TestDevToolsModelsDropdown: an editor fills its model dropdown from
// GET /v1/models; an alias the admin configured is there, picking it works,
// and the audit log tells the developers apart by their keys.
func TestDevToolsModelsDropdown(t *testing.T) {
	g, oa, _, alice, aliceID := devGateway(t)
	bob, bobID := g.newKey(map[string]any{"alias": "dev-bob"})
	if code := g.admin("POST", "/api/routing/model-mapping",
		map[string]any{"alias": "team-coder", "provider": "openai", "model": "gpt-4o-mini"}, nil); code != http.StatusCreated {
		t.Fatalf("model mapping: status %d", code)
	}
	c := g.client(alice)
	var ids map[string]bool
	listed := eventuallyFor(2*time.Second, func() bool {
		var err error
		ids, err = modelIDs(t, c)
		return err == nil && ids["team-coder"]
	})
	if !listed || !ids["gpt-4o-mini"] || !ids["claude-sonnet-4-5"] {
		t.Fatalf("dropdown %v: want the alias team-coder and both enabled providers' models", ids)
	}
	res, err := c.Chat.Completions.New(context.Background(), chatParams("team-coder", "hi"))
	if err != nil || res.Choices[0].Message.Content != devOpenAIReply {
		t.Fatalf("chat with the alias: %v %v", res, err)
	}
	var up map[string]any
	json.Unmarshal(lastChat(t, oa).Body, &up)
	if up["model"] != "gpt-4o-mini" {
		t.Errorf("upstream model %v, want the alias's target gpt-4o-mini", up["model"])
	}
	nb := anthropic.NewClient(aoption.WithBaseURL(g.proxy+"/native"), aoption.WithAPIKey(bob), aoption.WithMaxRetries(0))
	if _, err := nb.Messages.New(context.Background(), devMessage()); err != nil {
		t.Fatalf("bob's message: %v", err)
	}

	byKey := map[string]string{}
	for _, e := range g.logEntries("", 2) {
		id, _ := e["key_id"].(string)
		byKey[id], _ = e["endpoint"].(string)
	}
	if len(byKey) != 2 || byKey[aliceID] == "" || byKey[bobID] != "native_messages" {
		t.Errorf("audit entries by key %v, want alice's chat (%s) and bob's native message (%s)", byKey, aliceID, bobID)
	}
}
