package providertest_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/svc-gateway/svc/internal/providertest"
)

func sdkClient(s *providertest.OpenAI, key string) openai.Client {
	return openai.NewClient(option.WithBaseURL(s.URL()), option.WithAPIKey(key), option.WithMaxRetries(0))
}

func decodeJSON(t *testing.T, resp *http.Response, v any) {
	t.Helper()
	if resp.StatusCode != http.StatusOK {
		raw, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, raw)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type: got %q", ct)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func tok(n int) int { return max(n/4, 1) }

// ---------------------------------------------------------------------------
// /v1/completions

type textCompletionJSON struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Text         string           `json:"text"`
		Index        int              `json:"index"`
		Logprobs     *json.RawMessage `json:"logprobs"`
		FinishReason *string          `json:"finish_reason"`
	} `json:"choices"`
	Usage *usageJSON `json:"usage"`
}

func TestLegacyCompletions(t *testing.T) {
	s := providertest.NewOpenAI(t)
	url := s.URL() + "/completions"

	t.Run("string prompt", func(t *testing.T) {
		var c textCompletionJSON
		decodeJSON(t, post(t, url, `{"model":"gpt-3.5-turbo-instruct","prompt":"Say this is a test, please"}`, map[string]string{providertest.HeaderReply: "This is a test."}), &c)
		if !strings.HasPrefix(c.ID, "cmpl-") || c.Object != "text_completion" || c.Created == 0 || c.Model != "gpt-3.5-turbo-instruct" {
			t.Errorf("envelope: %+v", c)
		}
		if len(c.Choices) != 1 || c.Choices[0].Text != "This is a test." || c.Choices[0].Index != 0 || c.Choices[0].Logprobs != nil || c.Choices[0].FinishReason == nil || *c.Choices[0].FinishReason != "stop" {
			t.Fatalf("choices: %+v", c.Choices)
		}
		if c.Usage == nil || c.Usage.PromptTokens != tok(len("Say this is a test, please")) || c.Usage.CompletionTokens != tok(len("This is a test.")) || c.Usage.TotalTokens != c.Usage.PromptTokens+c.Usage.CompletionTokens {
			t.Errorf("usage: %+v", c.Usage)
		}
	})

	t.Run("array prompt and max_tokens", func(t *testing.T) {
		var c textCompletionJSON
		decodeJSON(t, post(t, url, `{"model":"m","prompt":["abcdefgh","abcdefgh"],"max_tokens":2}`, nil), &c)
		want := providertest.DefaultReply[:8]
		if c.Choices[0].Text != want || *c.Choices[0].FinishReason != "length" {
			t.Errorf("got %q %q, want %q length", c.Choices[0].Text, *c.Choices[0].FinishReason, want)
		}
		if c.Usage.PromptTokens != 4 || c.Usage.CompletionTokens != 2 {
			t.Errorf("usage: %+v", c.Usage)
		}
	})

	t.Run("stream with usage", func(t *testing.T) {
		resp := post(t, url, `{"model":"m","prompt":"hi there","stream":true,"stream_options":{"include_usage":true}}`, map[string]string{providertest.HeaderChunks: "4"})
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			t.Errorf("Content-Type %q", ct)
		}
		events, err := readEvents(t, resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		if len(events) != 4+1+1+1 || events[len(events)-1] != "[DONE]" {
			t.Fatalf("events: %q", events)
		}
		var text strings.Builder
		for i, e := range events[:len(events)-1] {
			var c textCompletionJSON
			if err := json.Unmarshal([]byte(e), &c); err != nil {
				t.Fatal(err)
			}
			if c.Object != "text_completion" || c.Model != "m" {
				t.Errorf("chunk %d: %s", i, e)
			}
			switch {
			case i < 4:
				if len(c.Choices) != 1 || c.Choices[0].FinishReason != nil || c.Usage != nil {
					t.Errorf("content chunk %d: %s", i, e)
				}
				text.WriteString(c.Choices[0].Text)
			case i == 4:
				if len(c.Choices) != 1 || c.Choices[0].FinishReason == nil || *c.Choices[0].FinishReason != "stop" {
					t.Errorf("finish chunk: %s", e)
				}
			default:
				if c.Choices == nil || len(c.Choices) != 0 || c.Usage == nil || c.Usage.PromptTokens != 2 {
					t.Errorf("usage chunk: %s", e)
				}
			}
		}
		if text.String() != providertest.DefaultReply {
			t.Errorf("text: got %q", text.String())
		}
	})

	t.Run("stream arrives in pieces", func(t *testing.T) {
		resp := post(t, url, `{"model":"m","prompt":"hi","stream":true}`, map[string]string{providertest.HeaderChunks: "4", providertest.HeaderChunkDelay: "40ms"})
		times := eventTimes(t, resp.Body)
		if len(times) != 4+1+1 {
			t.Fatalf("got %d events", len(times))
		}
		if gap := times[3].Sub(times[0]); gap < 100*time.Millisecond {
			t.Errorf("content chunks came %v apart in all, want them paced by the chunk delay", gap)
		}
	})

	t.Run("stream cut", func(t *testing.T) {
		resp := post(t, url, `{"model":"m","prompt":"hi","stream":true}`, map[string]string{providertest.HeaderCutAfter: "2"})
		raw, err := io.ReadAll(resp.Body)
		if err == nil || bytes.Contains(raw, []byte("[DONE]")) || bytes.Count(raw, []byte("data: ")) != 2 {
			t.Errorf("got err %v after %q, want a cut after 2 chunks", err, raw)
		}
	})

	t.Run("errors", func(t *testing.T) {
		str := func(s string) *string { return &s }
		checkError(t, post(t, url, `{"model":"m"}`, nil), 400, "invalid_request_error", str("missing_required_parameter"))
		checkError(t, post(t, url, `{"prompt":"x"}`, nil), 400, "invalid_request_error", nil)
		checkError(t, post(t, url, `{"model":"m","prompt":{}}`, nil), 400, "invalid_request_error", str("invalid_type"))
		checkError(t, post(t, url, `{"model":"m","prompt":"x","max_tokens":-1}`, nil), 400, "invalid_request_error", str("integer_below_min_value"))
		checkError(t, post(t, url, `{`, nil), 400, "invalid_request_error", nil)
	})
}

// eventTimes reads server-sent events from r and returns when each arrived.
func eventTimes(t *testing.T, r io.Reader) []time.Time {
	t.Helper()
	var times []time.Time
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			times = append(times, time.Now())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return times
}

func TestLegacyCompletionsSDK(t *testing.T) {
	s := providertest.NewOpenAI(t, providertest.WithAPIKey("sk-test"))
	client := sdkClient(s, "sk-test")
	ctx := context.Background()
	params := openai.CompletionNewParams{
		Model:  openai.CompletionNewParamsModelGPT3_5TurboInstruct,
		Prompt: openai.CompletionNewParamsPromptUnion{OfString: openai.String("Say this is a test")},
	}

	c, err := client.Completions.New(ctx, params)
	if err != nil {
		t.Fatal(err)
	}
	if c.Object != "text_completion" || c.Choices[0].Text != providertest.DefaultReply || c.Choices[0].FinishReason != openai.CompletionChoiceFinishReasonStop || c.Usage.TotalTokens == 0 {
		t.Errorf("got %+v", c)
	}

	p := params
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	stream := client.Completions.NewStreaming(ctx, p)
	var text strings.Builder
	var finish string
	var total int64
	n := 0
	for stream.Next() {
		c := stream.Current()
		n++
		for _, ch := range c.Choices {
			text.WriteString(ch.Text)
			if ch.FinishReason != "" {
				finish = string(ch.FinishReason)
			}
		}
		total += c.Usage.TotalTokens
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	if n != providertest.DefaultChunks+2 || text.String() != providertest.DefaultReply || finish != "stop" || total == 0 {
		t.Errorf("stream: %d chunks, text %q, finish %q, total tokens %d", n, text.String(), finish, total)
	}

	_, err = client.Completions.New(ctx, openai.CompletionNewParams{Model: "m", Prompt: params.Prompt}, option.WithHeader(providertest.HeaderStatus, "429"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.Code != "rate_limit_exceeded" {
		t.Errorf("forced 429: got %v", err)
	}
}

// ---------------------------------------------------------------------------
// /v1/images/generations

func TestImagesSDK(t *testing.T) {
	s := providertest.NewOpenAI(t, providertest.WithAPIKey("sk-test"))
	client := sdkClient(s, "sk-test")
	ctx := context.Background()

	t.Run("dall-e-2 urls", func(t *testing.T) {
		res, err := client.Images.Generate(ctx, openai.ImageGenerateParams{Prompt: "a cat", Model: "dall-e-2", N: openai.Int(3), Size: "256x256"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Created == 0 || len(res.Data) != 3 || res.JSON.Usage.Valid() {
			t.Fatalf("got %s", res.RawJSON())
		}
		for i, img := range res.Data {
			if img.URL != providertest.ImageURL(i) || img.URL != "https://fake.example/img/"+strconv.Itoa(i)+".png" || img.B64JSON != "" || img.RevisedPrompt != "" {
				t.Errorf("image %d: %s", i, img.RawJSON())
			}
		}
	})

	t.Run("dall-e-3 b64", func(t *testing.T) {
		res, err := client.Images.Generate(ctx, openai.ImageGenerateParams{Prompt: "a dog", Model: "dall-e-3", ResponseFormat: openai.ImageGenerateParamsResponseFormatB64JSON, Quality: "hd", Style: "natural"})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Data) != 1 || res.Data[0].URL != "" || res.Data[0].RevisedPrompt != providertest.RevisedPrompt("a dog") {
			t.Fatalf("got %s", res.RawJSON())
		}
		raw, err := base64.StdEncoding.DecodeString(res.Data[0].B64JSON)
		if err != nil || !bytes.Equal(raw, providertest.TinyPNG()) {
			t.Fatalf("b64_json: %v", err)
		}
		img, err := png.Decode(bytes.NewReader(raw))
		if err != nil || img.Bounds().Dx() != 1 || img.Bounds().Dy() != 1 {
			t.Errorf("PNG: %v", err)
		}
	})

	for _, model := range []openai.ImageModel{"gpt-image-1", openai.ImageModelGPTImage2_5Flare, openai.ImageModelChatgptImageLatest} {
		t.Run(model+" usage", func(t *testing.T) {
			prompt := "a lighthouse at dusk, oil painting"
			res, err := client.Images.Generate(ctx, openai.ImageGenerateParams{Prompt: prompt, Model: model, N: openai.Int(2), Quality: "high", Size: "1536x1024"})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Data) != 2 || res.Data[1].B64JSON == "" || res.Data[1].URL != "" {
				t.Fatalf("got %s", res.RawJSON())
			}
			u := res.Usage
			in, out := int64(tok(len(prompt))), int64(2*providertest.ImageOutputTokens("1536x1024", "high"))
			if u.InputTokens != in || u.OutputTokens != out || u.TotalTokens != in+out || u.InputTokensDetails.TextTokens != in || u.InputTokensDetails.ImageTokens != 0 || !u.InputTokensDetails.JSON.ImageTokens.Valid() {
				t.Errorf("usage: %s", u.RawJSON())
			}
			if out != 2*6240 || res.Size != "1536x1024" || res.Quality != "high" || res.OutputFormat != "png" {
				t.Errorf("got %s", res.RawJSON())
			}
		})
	}

	t.Run("errors", func(t *testing.T) {
		url := s.URL() + "/images/generations"
		h := map[string]string{"Authorization": "Bearer sk-test"}
		str := func(s string) *string { return &s }
		for _, c := range []struct {
			body string
			code *string
		}{
			{`{"model":"dall-e-2"}`, str("missing_required_parameter")},
			{`{"prompt":"x","n":0}`, str("integer_below_min_value")},
			{`{"prompt":"x","n":11}`, str("integer_above_max_value")},
			{`{"prompt":"x","model":"dall-e-3","n":2}`, str("invalid_value")},
			{`{"prompt":"x","size":"7x7"}`, str("invalid_value")},
			{`{"prompt":"x","response_format":"gif"}`, str("invalid_value")},
			{`{"prompt":"x","style":"baroque"}`, str("invalid_value")},
			{`{"prompt":"x","model":"gpt-image-1","response_format":"url"}`, str("unknown_parameter")},
			{`nope`, nil},
		} {
			checkError(t, post(t, url, c.body, h), 400, "invalid_request_error", c.code)
		}
		var res struct {
			Data []map[string]string `json:"data"`
		}
		decodeJSON(t, post(t, url, `{"prompt":"x","n":10}`, h), &res)
		if len(res.Data) != 10 {
			t.Errorf("n=10: got %d images", len(res.Data))
		}
	})
}

// ---------------------------------------------------------------------------
// /v1/audio/speech

func TestSpeechBytes(t *testing.T) {
	input := "Hello, gateway."
	wav := providertest.SpeechBytes(input, "wav")
	pcm := providertest.SpeechBytes(input, "pcm")
	if len(pcm) != len(input)*32 || len(wav) != 44+len(pcm) || !bytes.Equal(wav[44:], pcm) {
		t.Fatalf("lengths: wav %d pcm %d", len(wav), len(pcm))
	}
	if string(wav[0:4]) != "RIFF" || string(wav[8:16]) != "WAVEfmt " || string(wav[36:40]) != "data" ||
		binary.LittleEndian.Uint32(wav[4:]) != uint32(len(wav)-8) || binary.LittleEndian.Uint32(wav[40:]) != uint32(len(pcm)) ||
		binary.LittleEndian.Uint32(wav[24:]) != 24000 || binary.LittleEndian.Uint16(wav[34:]) != 16 {
		t.Errorf("WAV header % x", wav[:44])
	}
	if !bytes.Equal(providertest.SpeechBytes(input, ""), providertest.SpeechBytes(input, "mp3")) ||
		bytes.Equal(providertest.SpeechBytes(input, "mp3"), providertest.SpeechBytes(input+"!", "mp3")) {
		t.Error("mp3 is the default and the audio depends on the input")
	}
	for format, magic := range map[string]string{"mp3": "\xff\xf3", "opus": "OggS", "aac": "\xff\xf1", "flac": "fLaC"} {
		if b := providertest.SpeechBytes(input, format); !bytes.HasPrefix(b, []byte(magic)) || len(b) != 4+len(pcm) {
			t.Errorf("%s: % x", format, b[:4])
		}
	}
	if providertest.SpeechBytes(input, "ogg") != nil || providertest.SpeechContentType("ogg") != "" || providertest.SpeechContentType("") != "audio/mpeg" {
		t.Error("unknown formats")
	}
}

func TestSpeech(t *testing.T) {
	s := providertest.NewOpenAI(t, providertest.WithAPIKey("sk-test"))
	client := sdkClient(s, "sk-test")
	ctx := context.Background()
	input := "The quick brown fox jumped over the lazy dog."

	for _, format := range []string{"", "mp3", "opus", "aac", "flac", "wav", "pcm"} {
		t.Run("sdk "+format, func(t *testing.T) {
			resp, err := client.Audio.Speech.New(ctx, openai.AudioSpeechNewParams{
				Model:          "gpt-4o-mini-tts",
				Input:          input,
				Voice:          openai.AudioSpeechNewParamsVoiceUnion{OfString: openai.String("alloy")},
				ResponseFormat: openai.AudioSpeechNewParamsResponseFormat(format),
				Speed:          openai.Float(1.25),
			})
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(body, providertest.SpeechBytes(input, format)) {
				t.Errorf("got %d bytes, want SpeechBytes' %d", len(body), len(providertest.SpeechBytes(input, format)))
			}
			if ct := resp.Header.Get("Content-Type"); ct != providertest.SpeechContentType(format) {
				t.Errorf("Content-Type %q", ct)
			}
			if resp.ContentLength != -1 || resp.Header.Get("Content-Length") != "" {
				t.Errorf("Content-Length %d, want none", resp.ContentLength)
			}
		})
	}
	for f, ct := range map[string]string{"mp3": "audio/mpeg", "wav": "audio/wav", "pcm": "audio/pcm", "flac": "audio/flac", "aac": "audio/aac", "opus": "audio/opus"} {
		if got := providertest.SpeechContentType(f); got != ct {
			t.Errorf("SpeechContentType(%q): got %q, want %q", f, got, ct)
		}
	}

	url := s.URL() + "/audio/speech"
	auth := map[string]string{"Authorization": "Bearer sk-test"}
	with := func(kv ...string) map[string]string {
		h := map[string]string{"Authorization": "Bearer sk-test"}
		for i := 0; i < len(kv); i += 2 {
			h[kv[i]] = kv[i+1]
		}
		return h
	}

	t.Run("arrives in pieces", func(t *testing.T) {
		resp := post(t, url, `{"model":"tts-1","input":"`+input+`","voice":"alloy","response_format":"wav"}`, with(providertest.HeaderChunks, "4", providertest.HeaderChunkDelay, "40ms"))
		if resp.StatusCode != 200 || len(resp.TransferEncoding) == 0 || resp.TransferEncoding[0] != "chunked" {
			t.Fatalf("status %d, transfer encoding %v", resp.StatusCode, resp.TransferEncoding)
		}
		var got []byte
		var times []time.Time
		buf := make([]byte, 64<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				got = append(got, buf[:n]...)
				times = append(times, time.Now())
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		if !bytes.Equal(got, providertest.SpeechBytes(input, "wav")) {
			t.Errorf("got %d bytes", len(got))
		}
		if len(times) < 4 || times[len(times)-1].Sub(times[0]) < 100*time.Millisecond {
			t.Errorf("%d reads over %v: want 4 pieces paced by the chunk delay", len(times), times[len(times)-1].Sub(times[0]))
		}
	})

	t.Run("cut", func(t *testing.T) {
		resp := post(t, url, `{"model":"tts-1","input":"`+input+`","voice":"alloy"}`, with(providertest.HeaderChunks, "4", providertest.HeaderCutAfter, "2"))
		got, err := io.ReadAll(resp.Body)
		if err == nil || len(got) != len(providertest.SpeechBytes(input, "mp3"))/2 {
			t.Errorf("got %d bytes, err %v: want half the audio and an error", len(got), err)
		}
	})

	t.Run("errors", func(t *testing.T) {
		str := func(s string) *string { return &s }
		long := strings.Repeat("é", providertest.MaxSpeechInput+1)
		for _, c := range []struct {
			body string
			code *string
		}{
			{`{"model":"tts-1","voice":"alloy"}`, str("missing_required_parameter")},
			{`{"model":"tts-1","input":"hi"}`, str("missing_required_parameter")},
			{`{"model":"tts-1","input":"hi","voice":""}`, str("missing_required_parameter")},
			{`{"input":"hi","voice":"alloy"}`, nil},
			{`{"model":"tts-1","input":"` + long + `","voice":"alloy"}`, str("string_above_max_length")},
			{`{"model":"tts-1","input":"hi","voice":"alloy","response_format":"ogg"}`, str("invalid_value")},
			{`{"model":"tts-1","input":"hi","voice":"alloy","speed":5}`, str("invalid_value")},
		} {
			checkError(t, post(t, url, c.body, auth), 400, "invalid_request_error", c.code)
		}
		// Exactly the limit, in characters not bytes, and a custom voice object.
		resp := post(t, url, `{"model":"tts-1","input":"`+long[2:]+`","voice":{"id":"voice_123"}}`, auth)
		body, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 || len(body) != len(providertest.SpeechBytes(long[2:], "mp3")) {
			t.Errorf("status %d, %d bytes", resp.StatusCode, len(body))
		}
	})
}

// ---------------------------------------------------------------------------
// /v1/audio/transcriptions

// multipartBody builds a multipart/form-data body with fields and, unless
// filename is "", a "file" part.
func multipartBody(t *testing.T, filename string, data []byte, fields ...string) (string, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	for i := 0; i < len(fields); i += 2 {
		if err := mw.WriteField(fields[i], fields[i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if filename != "" {
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`)
		h.Set("Content-Type", "audio/wav")
		part, err := mw.CreatePart(h)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = part.Write(data)
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return mw.FormDataContentType(), &buf
}

func postForm(t *testing.T, url, contentType string, body io.Reader, header map[string]string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

func TestTranscriptions(t *testing.T) {
	s := providertest.NewOpenAI(t)
	url := s.URL() + "/audio/transcriptions"
	audio := providertest.SpeechBytes("some speech to transcribe", "wav")
	want := providertest.TranscriptionText(len(audio), "speech.wav")
	if want != "transcribed "+strconv.Itoa(len(audio))+" bytes: speech.wav" {
		t.Fatalf("TranscriptionText: %q", want)
	}

	t.Run("gpt-4o-transcribe json", func(t *testing.T) {
		ct, body := multipartBody(t, "speech.wav", audio, "model", "gpt-4o-transcribe", "language", "en", "prompt", "names: Ada, Grace", "temperature", "0.2")
		var res struct {
			Text  string `json:"text"`
			Usage struct {
				Type              string `json:"type"`
				InputTokens       int    `json:"input_tokens"`
				OutputTokens      int    `json:"output_tokens"`
				TotalTokens       int    `json:"total_tokens"`
				InputTokenDetails struct {
					TextTokens  int `json:"text_tokens"`
					AudioTokens int `json:"audio_tokens"`
				} `json:"input_token_details"`
			} `json:"usage"`
		}
		decodeJSON(t, postForm(t, url, ct, body, nil), &res)
		u := res.Usage
		if res.Text != want || u.Type != "tokens" || u.InputTokenDetails.AudioTokens != tok(len(audio)) || u.InputTokenDetails.TextTokens != tok(len("names: Ada, Grace")) ||
			u.InputTokens != u.InputTokenDetails.AudioTokens+u.InputTokenDetails.TextTokens || u.OutputTokens != tok(len(want)) || u.TotalTokens != u.InputTokens+u.OutputTokens {
			t.Errorf("got %+v", res)
		}

		rec := s.LastRequest()
		form, err := rec.Form()
		if err != nil {
			t.Fatal(err)
		}
		f, ok := form.File("file")
		if rec.Model() != "gpt-4o-transcribe" || form.Values.Get("language") != "en" || form.Values.Get("temperature") != "0.2" || !ok || f.Filename != "speech.wav" || f.ContentType != "audio/wav" || !bytes.Equal(f.Data, audio) {
			t.Errorf("recorded: model %q values %v file %q %q %d bytes", rec.Model(), form.Values, f.Filename, f.ContentType, len(f.Data))
		}
	})

	t.Run("whisper-1 json", func(t *testing.T) {
		ct, body := multipartBody(t, "a.mp3", []byte("x"), "model", "whisper-1")
		var res map[string]any
		decodeJSON(t, postForm(t, url, ct, body, nil), &res)
		if len(res) != 1 || res["text"] != providertest.TranscriptionText(1, "a.mp3") {
			t.Errorf("got %v", res)
		}
	})

	t.Run("whisper-1 verbose_json", func(t *testing.T) {
		ct, body := multipartBody(t, "a.wav", make([]byte, 64000), "model", "whisper-1", "response_format", "verbose_json", "language", "german")
		var res struct {
			Task     string           `json:"task"`
			Language string           `json:"language"`
			Duration float64          `json:"duration"`
			Text     string           `json:"text"`
			Segments []map[string]any `json:"segments"`
			Usage    struct {
				Type    string  `json:"type"`
				Seconds float64 `json:"seconds"`
			} `json:"usage"`
		}
		decodeJSON(t, postForm(t, url, ct, body, nil), &res)
		if res.Task != "transcribe" || res.Language != "german" || res.Duration != 2 || res.Text != providertest.TranscriptionText(64000, "a.wav") || len(res.Segments) != 1 || res.Usage.Type != "duration" || res.Usage.Seconds != 2 {
			t.Errorf("got %+v", res)
		}
	})

	for format, wantBody := range map[string]string{
		"text": want + "\n",
		"srt":  "1\n00:00:00,000 --> 00:00:00,100\n" + want + "\n\n",
		"vtt":  "WEBVTT\n\n00:00:00.000 --> 00:00:00.100\n" + want + "\n\n",
	} {
		t.Run("whisper-1 "+format, func(t *testing.T) {
			ct, body := multipartBody(t, "speech.wav", audio, "model", "whisper-1", "response_format", format)
			resp := postForm(t, url, ct, body, nil)
			got, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || string(got) != wantBody {
				t.Errorf("status %d, Content-Type %q, body %q; want %q", resp.StatusCode, resp.Header.Get("Content-Type"), got, wantBody)
			}
		})
	}

	t.Run("gpt-4o-transcribe text", func(t *testing.T) {
		ct, body := multipartBody(t, "speech.wav", audio, "model", "gpt-4o-mini-transcribe", "response_format", "text")
		resp := postForm(t, url, ct, body, nil)
		got, _ := io.ReadAll(resp.Body)
		if resp.Header.Get("Content-Type") != "text/plain; charset=utf-8" || string(got) != want+"\n" {
			t.Errorf("got %q %q", resp.Header.Get("Content-Type"), got)
		}
	})

	t.Run("errors", func(t *testing.T) {
		str := func(s string) *string { return &s }
		ct, body := multipartBody(t, "", nil, "model", "whisper-1")
		checkErrorParam(t, postForm(t, url, ct, body, nil), "file", str("missing_required_parameter"))
		ct, body = multipartBody(t, "a.wav", audio)
		checkErrorParam(t, postForm(t, url, ct, body, nil), "model", str("missing_required_parameter"))
		ct, body = multipartBody(t, "a.wav", audio, "model", "gpt-4o-transcribe", "response_format", "srt")
		checkErrorParam(t, postForm(t, url, ct, body, nil), "response_format", str("unsupported_value"))
		ct, body = multipartBody(t, "a.wav", audio, "model", "whisper-1", "response_format", "xml")
		checkErrorParam(t, postForm(t, url, ct, body, nil), "response_format", str("invalid_value"))
		ct, body = multipartBody(t, "a.wav", audio, "model", "whisper-1", "temperature", "2")
		checkErrorParam(t, postForm(t, url, ct, body, nil), "temperature", str("invalid_value"))
		checkErrorParam(t, post(t, url, `{"model":"whisper-1"}`, nil), "", nil)
		checkErrorParam(t, postForm(t, url, "multipart/form-data; boundary=xyz", strings.NewReader("garbage"), nil), "", nil)
	})
}

// checkErrorParam checks a 400 invalid_request_error naming param.
func checkErrorParam(t *testing.T, resp *http.Response, param string, code *string) {
	t.Helper()
	raw, _ := io.ReadAll(resp.Body)
	resp.Body = io.NopCloser(bytes.NewReader(raw))
	checkError(t, resp, 400, "invalid_request_error", code)
	var e errorJSON
	_ = json.Unmarshal(raw, &e)
	got := ""
	if e.Error.Param != nil {
		got = *e.Error.Param
	}
	if got != param {
		t.Errorf("param: got %s, want %q", raw, param)
	}
}

func TestTranscriptionsSDK(t *testing.T) {
	s := providertest.NewOpenAI(t, providertest.WithAPIKey("sk-test"))
	client := sdkClient(s, "sk-test")
	ctx := context.Background()
	audio := providertest.SpeechBytes("hello from the sdk", "wav")

	res, err := client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
		File:     openai.File(bytes.NewReader(audio), "hello.wav", "audio/wav"),
		Model:    "gpt-4o-transcribe",
		Language: openai.String("en"),
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != providertest.TranscriptionText(len(audio), "hello.wav") || res.Usage.Type != "tokens" || res.Usage.InputTokens == 0 || res.Usage.TotalTokens != res.Usage.InputTokens+res.Usage.OutputTokens {
		t.Errorf("got %s", res.RawJSON())
	}
	tr := res.AsTranscription()
	if tr.Usage.Type != "tokens" || tr.Usage.InputTokenDetails.AudioTokens != int64(tok(len(audio))) {
		t.Errorf("as transcription: %s", tr.RawJSON())
	}
	form, err := s.LastRequest().Form()
	if err != nil {
		t.Fatal(err)
	}
	if f, _ := form.File("file"); !bytes.Equal(f.Data, audio) || form.Values.Get("model") != "gpt-4o-transcribe" || form.Values.Get("language") != "en" {
		t.Errorf("recorded form: %v, file %q", form.Values, f.Filename)
	}

	res, err = client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
		File:           openai.File(bytes.NewReader(audio), "hello.wav", "audio/wav"),
		Model:          "whisper-1",
		ResponseFormat: openai.AudioResponseFormatVerboseJSON,
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Text != providertest.TranscriptionText(len(audio), "hello.wav") || res.Duration == 0 || len(res.Segments) != 1 || res.Usage.Type != "duration" {
		t.Errorf("verbose: %s", res.RawJSON())
	}

	_, err = client.Audio.Transcriptions.New(ctx, openai.AudioTranscriptionNewParams{
		File:  openai.File(bytes.NewReader(audio), "hello.wav", "audio/wav"),
		Model: "whisper-1",
	}, option.WithAPIKey("sk-wrong"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 401 || apiErr.Code != "invalid_api_key" {
		t.Errorf("wrong key: got %v", err)
	}
}

// ---------------------------------------------------------------------------
// /v1/rerank

type rerankJSON struct {
	ID      string `json:"id"`
	Model   string `json:"model"`
	Results []struct {
		Index          int     `json:"index"`
		RelevanceScore float64 `json:"relevance_score"`
		Document       *struct {
			Text string `json:"text"`
		} `json:"document"`
	} `json:"results"`
	Usage struct {
		TotalTokens int `json:"total_tokens"`
	} `json:"usage"`
}

func TestRerank(t *testing.T) {
	s := providertest.NewOpenAI(t)
	url := s.URL() + "/rerank"
	docs := []string{
		"The weather in Paris is mild.",
		"Paris is the capital of France.",
		"Bananas are yellow.",
		"France: the capital city and its culture",
	}
	const query = "What is the capital of France?"
	if got := providertest.RerankScore(query, docs[1]); got != 5.0/6 {
		t.Errorf("RerankScore: got %v, want 5/6 (all query words but \"what\")", got)
	}
	if got := providertest.RerankScore("Capital, FRANCE!", docs[3]); got != 1 {
		t.Errorf("RerankScore: got %v, want 1 (case and punctuation do not count)", got)
	}

	t.Run("all", func(t *testing.T) {
		body := `{"model":"BAAI/bge-reranker-base","query":"` + query + `","documents":["` + docs[0] + `",{"text":"` + docs[1] + `"},"` + docs[2] + `",{"text":"` + docs[3] + `"}]}`
		var res rerankJSON
		decodeJSON(t, post(t, url, body, nil), &res)
		if !strings.HasPrefix(res.ID, "rerank-") || res.Model != "BAAI/bge-reranker-base" || len(res.Results) != 4 {
			t.Fatalf("got %+v", res)
		}
		var order []int
		for i, r := range res.Results {
			order = append(order, r.Index)
			if r.RelevanceScore != providertest.RerankScore(query, docs[r.Index]) || r.Document == nil || r.Document.Text != docs[r.Index] {
				t.Errorf("result %d: %+v", i, r)
			}
			if i > 0 && r.RelevanceScore > res.Results[i-1].RelevanceScore {
				t.Errorf("not sorted at %d", i)
			}
		}
		if !slices.Equal(order, []int{1, 3, 0, 2}) {
			t.Errorf("order: got %v", order)
		}
		total := len(query)
		for _, d := range docs {
			total += len(d)
		}
		if res.Usage.TotalTokens != tok(total) {
			t.Errorf("usage: got %d, want %d", res.Usage.TotalTokens, tok(total))
		}
	})

	t.Run("top_n without documents", func(t *testing.T) {
		var res rerankJSON
		decodeJSON(t, post(t, url, `{"model":"m","query":"capital France","documents":["`+strings.Join(docs, `","`)+`"],"top_n":2,"return_documents":false}`, nil), &res)
		if len(res.Results) != 2 || res.Results[0].Index != 1 || res.Results[1].Index != 3 || res.Results[0].Document != nil {
			t.Errorf("got %+v", res)
		}
		if s.LastRequest().Model() != "m" {
			t.Errorf("recorded model %q", s.LastRequest().Model())
		}
	})

	t.Run("errors", func(t *testing.T) {
		str := func(s string) *string { return &s }
		checkErrorParam(t, post(t, url, `{"model":"m","documents":["a"]}`, nil), "query", str("missing_required_parameter"))
		checkErrorParam(t, post(t, url, `{"model":"m","query":"q"}`, nil), "documents", str("missing_required_parameter"))
		checkErrorParam(t, post(t, url, `{"model":"m","query":"q","documents":[]}`, nil), "documents", str("empty_array"))
		checkErrorParam(t, post(t, url, `{"model":"m","query":"q","documents":[7]}`, nil), "documents", str("invalid_type"))
		checkErrorParam(t, post(t, url, `{"model":"m","query":"q","documents":["a"],"top_n":-1}`, nil), "top_n", str("integer_below_min_value"))
		checkErrorParam(t, post(t, url, `{"query":"q","documents":["a"]}`, nil), "", nil)
	})
}

// ---------------------------------------------------------------------------
// Shared behaviour: API key, forced errors, delays, cut bodies, recording.

var extraEndpoints = []struct {
	path, contentType, body string
}{
	{"/completions", "application/json", `{"model":"m","prompt":"hi"}`},
	{"/images/generations", "application/json", `{"model":"dall-e-2","prompt":"hi"}`},
	{"/audio/speech", "application/json", `{"model":"tts-1","input":"hi","voice":"alloy"}`},
	{"/audio/transcriptions", "", ""}, // multipart, built per request
	{"/rerank", "application/json", `{"model":"m","query":"q","documents":["a"]}`},
}

func extraRequest(t *testing.T, s *providertest.OpenAI, i int, header map[string]string) *http.Response {
	t.Helper()
	e := extraEndpoints[i]
	ct, body := e.contentType, io.Reader(strings.NewReader(e.body))
	if ct == "" {
		var buf *bytes.Buffer
		ct, buf = multipartBody(t, "a.wav", []byte("RIFF"), "model", "whisper-1")
		body = buf
	}
	return postForm(t, s.URL()+e.path, ct, body, header)
}

func TestExtraEndpointsShared(t *testing.T) {
	s := providertest.NewOpenAI(t, providertest.WithAPIKey("sk-test"))
	ok := map[string]string{"Authorization": "Bearer sk-test"}
	with := func(k, v string) map[string]string { return map[string]string{"Authorization": "Bearer sk-test", k: v} }
	str := func(s string) *string { return &s }
	for i, e := range extraEndpoints {
		t.Run(strings.TrimPrefix(e.path, "/"), func(t *testing.T) {
			if resp := extraRequest(t, s, i, ok); resp.StatusCode != 200 {
				b, _ := io.ReadAll(resp.Body)
				t.Fatalf("status %d: %s", resp.StatusCode, b)
			}
			rec := s.LastRequest()
			if rec.Method != http.MethodPost || rec.Path != "/v1"+e.path || rec.Model() == "" {
				t.Errorf("recorded %s %s model %q", rec.Method, rec.Path, rec.Model())
			}

			checkError(t, extraRequest(t, s, i, nil), 401, "invalid_request_error", nil)
			checkError(t, extraRequest(t, s, i, map[string]string{"Authorization": "Bearer sk-nope"}), 401, "invalid_request_error", str("invalid_api_key"))

			resp := extraRequest(t, s, i, with(providertest.HeaderStatus, "429"))
			if resp.Header.Get("Retry-After") != "1" {
				t.Error("429 without Retry-After")
			}
			checkError(t, resp, 429, "requests", str("rate_limit_exceeded"))
			checkError(t, extraRequest(t, s, i, with(providertest.HeaderStatus, "503")), 503, "server_error", nil)

			start := time.Now()
			if resp := extraRequest(t, s, i, with(providertest.HeaderDelay, "60ms")); resp.StatusCode != 200 || time.Since(start) < 60*time.Millisecond {
				t.Errorf("delay: status %d after %v", resp.StatusCode, time.Since(start))
			}

			resp = extraRequest(t, s, i, with(providertest.HeaderCutAfter, "0"))
			if _, err := io.ReadAll(resp.Body); err == nil {
				t.Error("X-Fake-Cut-After 0: body read without error")
			}
		})
	}

	s.Set(providertest.WithStatus(500))
	for i := range extraEndpoints {
		checkError(t, extraRequest(t, s, i, ok), 500, "server_error", nil)
	}
}
