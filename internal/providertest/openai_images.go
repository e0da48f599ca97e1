package providertest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/svc-gateway/svc/internal/llm"
)

// ---------------------------------------------------------------------------
// POST /v1/images/generations

type imageRequest struct {
	Model          string `json:"model"`
	Prompt         string `json:"prompt"`
	N              *int   `json:"n"`
	Size           string `json:"size"`
	Quality        string `json:"quality"`
	Style          string `json:"style"`
	ResponseFormat string `json:"response_format"`
}

// TinyPNG returns (a copy of) the image every b64_json answer carries: a
// valid 1x1 PNG.
func TinyPNG() []byte { return bytes.Clone(tinyPNG()) }

var tinyPNG = sync.OnceValue(func() []byte {
	img := image.NewNRGBA(image.Rect(0, 0, 1, 1))
	img.Set(0, 0, color.NRGBA{R: 0x20, G: 0x80, B: 0xe0, A: 0xff})
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err)
	}
	return buf.Bytes()
})

var tinyPNGBase64 = sync.OnceValue(func() string { return base64.StdEncoding.EncodeToString(tinyPNG()) })

// ImageURL is the URL of the i-th image of an images answer.
func ImageURL(i int) string { return ImageURLPrefix + strconv.Itoa(i) + ".png" }

// RevisedPrompt is the revised_prompt dall-e-3 images carry.
func RevisedPrompt(prompt string) string { return "providertest revised: " + prompt }

// ImageOutputTokens is what the fake counts as output tokens per gpt-image-*
// image, after OpenAI's price table for gpt-image-1: by quality (low 272,
// medium or auto 1056, high 4160), half as much again for the 1536-pixel
// sizes.
func ImageOutputTokens(size, quality string) int {
	n := 1056
	switch quality {
	case "low":
		n = 272
	case "high":
		n = 4160
	}
	if size == "1536x1024" || size == "1024x1536" {
		n += n / 2
	}
	return n
}

var (
	imageSizes     = []string{"", "auto", "256x256", "512x512", "1024x1024", "1792x1024", "1024x1792", "1536x1024", "1024x1536"}
	imageQualities = []string{"", "auto", "standard", "hd", "low", "medium", "high"}
)

// images serves POST /v1/images/generations.
func (s *OpenAI) images(w http.ResponseWriter, r *http.Request) {
	x, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer x.end()

	var req imageRequest
	err := json.Unmarshal(x.body, &req)
	if req.Model == "" {
		req.Model = "dall-e-2" // the API's default
	}
	if x.ctl.status != 0 {
		writeError(w, forcedError(x.ctl.status, req.Model))
		return
	}
	gptImage := strings.HasPrefix(req.Model, "gpt-image") || strings.HasPrefix(req.Model, "chatgpt-image")
	n := 1
	if req.N != nil {
		n = *req.N
	}
	var bad apiError
	switch {
	case err != nil:
		bad = badJSON(err)
	case req.Prompt == "":
		bad = missingParam("prompt")
	case n < 1:
		bad = invalidRequest("n", "integer_below_min_value", "Invalid 'n': integer below minimum value. Expected a value >= 1, but got "+strconv.Itoa(n)+" instead.")
	case n > MaxImages:
		bad = invalidRequest("n", "integer_above_max_value", "Invalid 'n': integer above maximum value. Expected a value <= "+strconv.Itoa(MaxImages)+", but got "+strconv.Itoa(n)+" instead.")
	case req.Model == "dall-e-3" && n != 1:
		bad = invalidRequest("n", "invalid_value", "Invalid 'n': dall-e-3 only supports n=1.")
	case !slices.Contains(imageSizes, req.Size):
		bad = invalidRequest("size", "invalid_value", "Invalid value: '"+req.Size+"'. Supported values are: '256x256', '512x512', '1024x1024', '1024x1536', '1536x1024', '1024x1792', '1792x1024' and 'auto'.")
	case !slices.Contains(imageQualities, req.Quality):
		bad = invalidRequest("quality", "invalid_value", "Invalid value: '"+req.Quality+"'. Supported values are: 'standard', 'hd', 'low', 'medium', 'high' and 'auto'.")
	case req.Style != "" && req.Style != "vivid" && req.Style != "natural":
		bad = invalidRequest("style", "invalid_value", "Invalid value: '"+req.Style+"'. Supported values are: 'vivid' and 'natural'.")
	case req.ResponseFormat != "" && req.ResponseFormat != "url" && req.ResponseFormat != "b64_json":
		bad = invalidRequest("response_format", "invalid_value", "Invalid value: '"+req.ResponseFormat+"'. Supported values are: 'url' and 'b64_json'.")
	case gptImage && req.ResponseFormat != "":
		bad = invalidRequest("response_format", "unknown_parameter", "Unknown parameter: 'response_format'.")
	}
	if bad.Status != 0 {
		writeError(w, bad)
		return
	}

	s.requestID(w)
	b64 := gptImage || req.ResponseFormat == "b64_json"
	b := x.out[:0]
	b = append(b, `{"created":`...)
	b = strconv.AppendInt(b, time.Now().Unix(), 10)
	b = append(b, `,"data":[`...)
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		if b64 {
			b = append(b, `{"b64_json":"`...)
			b = append(b, tinyPNGBase64()...)
			b = append(b, '"')
		} else {
			b = append(b, `{"url":`...)
			b = llm.AppendJSONString(b, ImageURL(i))
		}
		if req.Model == "dall-e-3" {
			b = append(b, `,"revised_prompt":`...)
			b = llm.AppendJSONString(b, RevisedPrompt(req.Prompt))
		}
		b = append(b, '}')
	}
	b = append(b, ']')
	if gptImage {
		size, quality := req.Size, req.Quality
		if size == "" || size == "auto" {
			size = "1024x1024"
		}
		if quality == "" || quality == "auto" {
			quality = "medium"
		}
		in := tokens(len(req.Prompt))
		out := n * ImageOutputTokens(size, quality)
		b = append(b, `,"background":"opaque","output_format":"png","quality":`...)
		b = llm.AppendJSONString(b, quality)
		b = append(b, `,"size":`...)
		b = llm.AppendJSONString(b, size)
		b = append(b, `,"usage":{"input_tokens":`...)
		b = appendInt(b, in)
		b = append(b, `,"output_tokens":`...)
		b = appendInt(b, out)
		b = append(b, `,"total_tokens":`...)
		b = appendInt(b, in+out)
		b = append(b, `,"input_tokens_details":{"text_tokens":`...)
		b = appendInt(b, in)
		b = append(b, `,"image_tokens":0}}`...)
	}
	b = append(b, "}\n"...)
	writeJSONAnswer(w, x, b)
}
