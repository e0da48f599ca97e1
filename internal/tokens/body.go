package tokens

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// Body returns the prompt tokens of a JSON request body other than a decoded
// chat request (embeddings, completions, rerank, Anthropic Messages, Gemini,
// the Responses API, …) for model, from above: every string value counts
// (in model's encoding) plus one token, except the "model" field; arrays of
// numbers under "input" or "prompt" are token ids and count one each; base64
// media count as media: a "data:image/…" or "data:audio/…" URI as ChatPrompt
// counts an image or audio, any other data URI one token per 4 bytes, and a
// bare base64 "data" field (Anthropic's and Gemini's images and documents)
// an image plus one token per 32 bytes. Reply priming is added once. A body
// that is not JSON counts one token per byte; a body that is not a JSON
// object or array (a multipart upload, audio) counts 0.
func Body(model string, body []byte) int64 {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) == 0 || (trimmed[0] != '{' && trimmed[0] != '[') {
		return 0
	}
	w := walker{enc: EncodingFor(model), model: model, b: budget{left: ExactBytes}}
	n, err := w.walk(json.NewDecoder(bytes.NewReader(trimmed)))
	if err != nil {
		return add(int64(len(body)), replyPriming)
	}
	return add(n, replyPriming)
}

// walker counts a JSON document's tokens.
type walker struct {
	enc   Encoding
	model string
	b     budget
}

// frame is an open object or array, with the key it is the value of.
type frame struct {
	object    bool
	key       string // the key this container is the value of
	wantKey   bool   // object: the next string is a key
	lastKey   string // object: the key of the value being read
	audio     bool   // under a key naming audio
	tokenList bool   // array under "input" or "prompt": numbers are token ids
}

func (w *walker) walk(dec *json.Decoder) (int64, error) {
	dec.UseNumber()
	var (
		n     int64
		stack []frame
	)
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			if len(stack) != 0 {
				return 0, io.ErrUnexpectedEOF
			}
			return n, nil
		}
		if err != nil {
			return 0, err
		}
		var top *frame
		if len(stack) > 0 {
			top = &stack[len(stack)-1]
		}
		key := ""
		if top != nil && top.object {
			if s, ok := tok.(string); ok && top.wantKey {
				top.lastKey, top.wantKey = s, false
				continue
			}
			key = top.lastKey
			top.wantKey = true
		} else if top != nil {
			key = top.key
		}
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				f := frame{object: v == '{', key: key, wantKey: v == '{'}
				f.audio = (top != nil && top.audio) || strings.Contains(key, "audio")
				f.tokenList = v == '[' && (key == "input" || key == "prompt" || (top != nil && top.tokenList))
				stack = append(stack, f)
			default:
				stack = stack[:len(stack)-1]
				if len(stack) > 0 && stack[len(stack)-1].object {
					stack[len(stack)-1].wantKey = true
				}
			}
		case string:
			if key != "model" {
				n = add(n, w.value(key, v, top != nil && top.audio))
			}
		case json.Number:
			if top != nil && top.tokenList {
				n = add(n, 1)
			}
		}
	}
}

// value counts one string value under key.
func (w *walker) value(key, s string, audio bool) int64 {
	if rest, ok := strings.CutPrefix(s, "data:"); ok && strings.Contains(rest[:min(len(rest), 100)], ";base64,") {
		switch {
		case strings.HasPrefix(rest, "image/"):
			return imageTokens(w.enc, w.model, "")
		case strings.HasPrefix(rest, "audio/"):
			return audioTokens(len(s))
		}
		return int64(len(s)/4) + 1
	}
	switch {
	case key == "data" && audio:
		return audioTokens(len(s))
	case key == "data" && len(s) > 256:
		return add(imageTokens(w.enc, w.model, ""), int64(len(s)/32)+1)
	}
	return add(w.b.count(w.enc, s), 1)
}
