package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/svc-gateway/svc/internal/providertest"
)

func TestEmbeddingsWithSDK(t *testing.T) {
	fake := providertest.NewOpenAI(t)
	g := start(t, fake, nil)
	key, _ := g.newKey(nil)
	c := g.client(key)
	var resp *http.Response
	res, err := c.Embeddings.New(context.Background(), openai.EmbeddingNewParams{
		Model:      "openai/text-embedding-3-small",
		Input:      openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: []string{"first text", "second"}},
		Dimensions: openai.Int(8),
	}, option.WithResponseInto(&resp))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Data) != 2 || len(res.Data[0].Embedding) != 8 || res.Usage.PromptTokens == 0 {
		t.Fatalf("embeddings = %d vectors of %d, usage %+v", len(res.Data), len(res.Data[0].Embedding), res.Usage)
	}
	want := providertest.Embedding("first text", 8)
	for i, v := range res.Data[0].Embedding {
		if float32(v) != want[i] {
			t.Fatalf("vector[%d] = %v, want %v (the provider's answer, unchanged)", i, v, want[i])
		}
	}
	if resp.Header.Get("x-svc-provider") != "openai" || resp.Header.Get("x-svc-request-id") == "" {
		t.Errorf("headers %v", resp.Header)
	}
	if cost, _ := strconv.ParseFloat(resp.Header.Get("x-svc-cost-usd"), 64); cost <= 0 {
		t.Errorf("x-svc-cost-usd = %q, want the embedding priced", resp.Header.Get("x-svc-cost-usd"))
	}
	var up map[string]any
	reqs := fake.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Path == "/v1/embeddings" {
			json.Unmarshal(reqs[i].Body, &up)
			if reqs[i].Header.Get("Authorization") != "Bearer "+upstreamKey {
				t.Error("the provider did not get svc's key")
			}
			break
		}
	}
	if up["model"] != "text-embedding-3-small" || up["dimensions"] != 8.0 {
		t.Errorf("upstream body %v, want the prefix stripped and dimensions passed", up)
	}
	entries := g.logEntries("", 1)
	if len(entries) != 1 || entries[0]["endpoint"] != "embeddings" || entries[0]["tokens_used"].(float64) == 0 {
		t.Errorf("entry = %v", entries)
	}
	for _, bad := range []string{`{"model":"text-embedding-3-small"}`, `{"input":"x"}`, `{"model":"m","input":""}`, `{"model":"m","input":5}`, `{"model":"m","input":"x","encoding_format":"hex"}`} {
		if r, b := g.post("/v1/embeddings", key, []byte(bad), nil); r.StatusCode != 400 {
			t.Errorf("%s: %d %s, want 400", bad, r.StatusCode, b)
		}
	}
	if r, _ := g.post("/v1/embeddings", "", []byte(`{"model":"m","input":"x"}`), nil); r.StatusCode != 401 {
		t.Errorf("no key: %d, want 401", r.StatusCode)
	}
}

// lastTo is the last request the fake received on path.
func lastTo(t *testing.T, fake *providertest.OpenAI, path string) providertest.Recorded {
	t.Helper()
	reqs := fake.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		if reqs[i].Path == path {
			return reqs[i]
		}
	}
	t.Fatalf("the provider received no request on %s", path)
	return providertest.Recorded{}
}

func TestOtherEndpointsWithSDK(t *testing.T) {
	fake := providertest.NewOpenAI(t, providertest.WithChunks(4))
	g := start(t, fake, nil)
	key, _ := g.newKey(nil)
	c := g.client(key)
	ctx := context.Background()

	t.Run("completions", func(t *testing.T) {
		p := openai.CompletionNewParams{Model: "openai/gpt-3.5-turbo-instruct", Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say this is a test")}}
		res, err := c.Completions.New(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if res.Choices[0].Text != providertest.DefaultReply || res.Usage.TotalTokens == 0 {
			t.Errorf("completion %+v", res)
		}
		if m := lastTo(t, fake, "/v1/completions").Model(); m != "gpt-3.5-turbo-instruct" {
			t.Errorf("upstream model %q, want the prefix stripped", m)
		}
		s := c.Completions.NewStreaming(ctx, p)
		var text strings.Builder
		n := 0
		for s.Next() {
			if ch := s.Current(); len(ch.Choices) > 0 {
				text.WriteString(ch.Choices[0].Text)
				n++
			}
		}
		if err := s.Err(); err != nil || text.String() != providertest.DefaultReply || n < 4 {
			t.Errorf("streamed %q in %d chunks (%v)", text.String(), n, err)
		}
	})

	t.Run("images", func(t *testing.T) {
		res, err := c.Images.Generate(ctx, openai.ImageGenerateParams{Prompt: "a cat", Model: "dall-e-2", N: openai.Int(2), Size: "256x256"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Data) != 2 || res.Data[0].URL != providertest.ImageURL(0) {
			t.Errorf("images %+v", res.Data)
		}
		r, b := g.post("/v1/images/generations", key, []byte(`{"model":"dall-e-2"}`), nil)
		if r.StatusCode != 400 {
			t.Errorf("no prompt: %d %s", r.StatusCode, b)
		}
	})

	t.Run("speech", func(t *testing.T) {
		resp, err := c.Audio.Speech.New(ctx, openai.AudioSpeechNewParams{
			Model: "tts-1", Input: "hello there", Voice: openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String("alloy")},
			ResponseFormat: "wav",
		})
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, _ := io.ReadAll(resp.Body)
		if !bytes.Equal(got, providertest.SpeechBytes("hello there", "wav")) || resp.Header.Get("Content-Type") != "audio/wav" {
			t.Errorf("speech: %d bytes of %s, want the provider's audio unchanged", len(got), resp.Header.Get("Content-Type"))
		}
		if resp.Header.Get("x-svc-provider") != "openai" {
			t.Errorf("headers %v", resp.Header)
		}
	})

	t.Run("transcriptions", func(t *testing.T) {
		audio := providertest.SpeechBytes("transcribe me", "wav")
		res, err := c.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
			File: openai.File(bytes.NewReader(audio), "hello.wav", "audio/wav"), Model: "openai/gpt-4o-transcribe", Language: openai.String("en"),
		})
		if err != nil {
			t.Fatal(err)
		}
		if res.Text != providertest.TranscriptionText(len(audio), "hello.wav") {
			t.Errorf("text %q", res.Text)
		}
		form, err := lastTo(t, fake, "/v1/audio/transcriptions").Form()
		if err != nil {
			t.Fatal(err)
		}
		if f, _ := form.File("file"); !bytes.Equal(f.Data, audio) || form.Values.Get("model") != "gpt-4o-transcribe" || form.Values.Get("language") != "en" {
			t.Errorf("upstream form %v: want the file intact, the model without prefix, the other fields kept", form.Values)
		}
		r, b := g.post("/v1/audio/transcriptions", key, []byte(`{"model":"whisper-1"}`), nil)
		if r.StatusCode != 400 {
			t.Errorf("JSON body: %d %s, want 400", r.StatusCode, b)
		}
	})

	t.Run("rerank passthrough", func(t *testing.T) {
		r, b := g.post("/v1/rerank", key, []byte(`{"model":"openai/bge-reranker","query":"red apple","documents":["a red apple","blue sky"],"top_n":1}`), nil)
		if r.StatusCode != 200 || !strings.Contains(string(b), `"index":0`) {
			t.Errorf("rerank %d %s", r.StatusCode, b)
		}
		if m := lastTo(t, fake, "/v1/rerank").Model(); m != "bge-reranker" {
			t.Errorf("upstream model %q", m)
		}
	})

	entries := g.logEntries("", 6)
	kinds := map[string]bool{}
	for _, e := range entries {
		kinds[e["endpoint"].(string)] = true
	}
	for _, k := range []string{"completions", "images", "audio_speech", "audio_transcription", "rerank"} {
		if !kinds[k] {
			t.Errorf("no audit entry for %s (have %v)", k, kinds)
		}
	}
}
