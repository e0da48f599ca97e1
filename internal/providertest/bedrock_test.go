package providertest_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/llm"
	"github.com/svc-gateway/svc/internal/provider"
	"github.com/svc-gateway/svc/internal/provider/bedrock"
	"github.com/svc-gateway/svc/internal/providertest"
	"github.com/svc-gateway/svc/internal/upstream/cred"
)

var bedrCreds = cred.SigV4Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", SessionToken: "token"}

const bedrModel = "anthropic.claude-3-5-sonnet-20240620-v1:0"

// bedrCall sends body through the bedrock adapter, signed by signer, to the
// fake, with extra request headers.
func bedrCall(t *testing.T, fake *providertest.Bedrock, signer cred.Signer, body string, header map[string]string) (*http.Response, *bedrock.Adapter) {
	t.Helper()
	req, err := llm.DecodeChatRequest([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	a := bedrock.New()
	hreq, err := a.NewChatRequest(context.Background(), provider.Deployment{Provider: "bedrock", Model: bedrModel, BaseURL: fake.URL(), Region: "us-east-1"}, provider.ChatCall{Req: req, Raw: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		hreq.Header.Set(k, v)
	}
	if err := signer.Sign(hreq, "bedrock-api-key-123"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(hreq)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp, a
}

func bedrSigner() *cred.SigV4 { return cred.NewSigV4(bedrCreds, "us-east-1", "bedrock") }

func TestBedrockConverse(t *testing.T) {
	fake := providertest.NewBedrock(t, providertest.BedrockReply("Hi from the fake."))
	resp, a := bedrCall(t, fake, bedrSigner(), `{"model":"m","messages":[{"role":"user","content":"Hello there, fake!"}]}`, nil)
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	body, _ := io.ReadAll(resp.Body)
	out, usage, _, err := a.DecodeChatFor(bedrModel, body)
	if err != nil {
		t.Fatal(err)
	}
	var c llm.ChatResponse
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatal(err)
	}
	if got := c.Choices[0].Message.Content.Text; got != "Hi from the fake." || c.Choices[0].FinishReason != "stop" {
		t.Errorf("got %q finish %q, want the reply and stop", got, c.Choices[0].FinishReason)
	}
	if usage.PromptTokens != int64(len("Hello there, fake!")/4) || usage.CompletionTokens != int64(len("Hi from the fake.")/4) {
		t.Errorf("usage: got %+v", usage)
	}
	rec := fake.LastRequest()
	if !strings.HasSuffix(rec.Path, "/converse") || !strings.HasPrefix(rec.Header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/") || rec.Header.Get("X-Amz-Security-Token") != "token" {
		t.Errorf("recorded %s with headers %v", rec.Path, rec.Header)
	}
	if fake.Count() != 1 || len(fake.Requests()) != 1 {
		t.Errorf("Count %d, Requests %d: want 1 and 1", fake.Count(), len(fake.Requests()))
	}
}

func TestBedrockToolUse(t *testing.T) {
	fake := providertest.NewBedrock(t)
	const body = `{"model":"m","messages":[{"role":"user","content":"Weather?"}],"tools":[{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}]}`
	resp, a := bedrCall(t, fake, bedrSigner(), body, nil)
	b, _ := io.ReadAll(resp.Body)
	out, _, _, err := a.DecodeChat(b)
	if err != nil {
		t.Fatal(err)
	}
	var c llm.ChatResponse
	_ = json.Unmarshal(out, &c)
	if len(c.Choices) != 1 || len(c.Choices[0].Message.ToolCalls) != 1 || c.Choices[0].Message.ToolCalls[0].Function.Name != "get_weather" || c.Choices[0].FinishReason != "tool_calls" {
		t.Fatalf("got %s, want one get_weather call", out)
	}

	// The stream carries the call's arguments in pieces.
	resp, a = bedrCall(t, fake, bedrSigner(), strings.Replace(body, `"model":"m",`, `"model":"m","stream":true,`, 1), map[string]string{providertest.HeaderChunks: "4"})
	text, calls, finish, info, err := bedrDrain(a, resp.Body, false)
	if err != nil || text != "" || calls != `{"query":"providertest"}` || finish != "tool_calls" || info.Usage.TotalTokens == 0 {
		t.Errorf("stream: got text %q calls %q finish %q usage %+v err %v", text, calls, finish, info.Usage, err)
	}
}

// bedrDrain reads a translated stream to its end.
func bedrDrain(a *bedrock.Adapter, body io.ReadCloser, hide bool) (text, args, finish string, info *provider.StreamInfo, err error) {
	info = &provider.StreamInfo{HideUsage: hide}
	st := a.DecodeChatStream(body, info)
	defer st.Close()
	for {
		ev, err := st.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			return text, args, finish, info, err
		}
		var c llm.ChatChunk
		if err := json.Unmarshal(ev.Data, &c); err != nil {
			return text, args, finish, info, err
		}
		for _, ch := range c.Choices {
			if ch.Delta.Content != nil {
				text += *ch.Delta.Content
			}
			for _, tc := range ch.Delta.ToolCalls {
				args += tc.Function.Arguments
			}
			if ch.FinishReason != nil {
				finish = *ch.FinishReason
			}
		}
	}
}

func TestBedrockStream(t *testing.T) {
	fake := providertest.NewBedrock(t, providertest.BedrockChunks(7))
	const body = `{"model":"m","stream":true,"messages":[{"role":"user","content":"Stream please."}]}`
	resp, a := bedrCall(t, fake, bedrSigner(), body, nil)
	if ct := resp.Header.Get("Content-Type"); ct != "application/vnd.amazon.eventstream" {
		t.Errorf("Content-Type: got %q", ct)
	}
	text, _, finish, info, err := bedrDrain(a, resp.Body, true)
	if err != nil || text != providertest.DefaultReply || finish != "stop" || info.Usage.CompletionTokens != int64(len(providertest.DefaultReply)/4) {
		t.Errorf("got %q finish %q usage %+v err %v", text, finish, info.Usage, err)
	}
	if !strings.HasSuffix(fake.LastRequest().Path, "/converse-stream") {
		t.Errorf("path %q", fake.LastRequest().Path)
	}
}

func TestBedrockStreamException(t *testing.T) {
	for _, tc := range []struct {
		typ  string
		kind apierr.Kind
	}{
		{"throttlingException", apierr.RateLimited},
		{"modelStreamErrorException", apierr.UpstreamError},
		{"validationException", apierr.InvalidRequest},
	} {
		t.Run(tc.typ, func(t *testing.T) {
			fake := providertest.NewBedrock(t)
			resp, a := bedrCall(t, fake, bedrSigner(), `{"model":"m","stream":true,"messages":[{"role":"user","content":"Hi"}]}`,
				map[string]string{providertest.HeaderBedrockException: tc.typ, providertest.HeaderBedrockExceptionAfter: "2"})
			text, _, _, _, err := bedrDrain(a, resp.Body, false)
			if apierr.KindOf(err) != tc.kind || text == "" {
				t.Errorf("got text %q and %v, want some text then kind %d", text, err, tc.kind)
			}
		})
	}
}

func TestBedrockErrors(t *testing.T) {
	fake := providertest.NewBedrock(t)
	for status, kind := range map[int]apierr.Kind{400: apierr.InvalidRequest, 403: apierr.UpstreamError, 404: apierr.NotFound, 429: apierr.RateLimited, 500: apierr.UpstreamError, 503: apierr.UpstreamError} {
		resp, a := bedrCall(t, fake, bedrSigner(), `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`, map[string]string{providertest.HeaderStatus: strconv.Itoa(status)})
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != status || resp.Header.Get("X-Amzn-Errortype") == "" {
			t.Errorf("X-Fake-Status %d: got %d %q", status, resp.StatusCode, resp.Header.Get("X-Amzn-Errortype"))
		}
		if e := a.DecodeError("bedrock", resp.StatusCode, resp.Header, b); e.Kind != kind {
			t.Errorf("X-Fake-Status %d: got kind %d, want %d", status, e.Kind, kind)
		}
	}
}

func TestBedrockAuth(t *testing.T) {
	const body = `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`
	t.Run("unsigned", func(t *testing.T) {
		fake := providertest.NewBedrock(t)
		resp, _ := bedrCall(t, fake, cred.Header{Name: "X-Nothing"}, body, nil)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("got %d, want 403", resp.StatusCode)
		}
	})
	t.Run("wrong service", func(t *testing.T) {
		fake := providertest.NewBedrock(t)
		resp, _ := bedrCall(t, fake, cred.NewSigV4(bedrCreds, "us-east-1", "s3"), body, nil)
		if resp.StatusCode != http.StatusForbidden {
			t.Errorf("got %d, want 403", resp.StatusCode)
		}
	})
	t.Run("bearer", func(t *testing.T) {
		fake := providertest.NewBedrock(t, providertest.BedrockBearer("bedrock-api-key-123"))
		if resp, _ := bedrCall(t, fake, cred.Bearer{}, body, nil); resp.StatusCode != http.StatusOK {
			t.Errorf("bearer: got %d, want 200", resp.StatusCode)
		}
		if resp, _ := bedrCall(t, fake, bedrSigner(), body, nil); resp.StatusCode != http.StatusForbidden {
			t.Errorf("SigV4 to a bearer fake: got %d, want 403", resp.StatusCode)
		}
	})
}

func TestBedrockRecordingBounded(t *testing.T) {
	fake := providertest.NewBedrock(t, providertest.BedrockRecording(2))
	for range 3 {
		resp, _ := bedrCall(t, fake, bedrSigner(), `{"model":"m","messages":[{"role":"user","content":"Hi"}]}`, nil)
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	if n := len(fake.Requests()); n != 2 || fake.Count() != 3 {
		t.Errorf("Requests %d, Count %d: want 2 and 3", n, fake.Count())
	}
}
