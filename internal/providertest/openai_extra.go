package providertest

// The OpenAI fake's endpoints beyond chat, models and embeddings: legacy text
// completions, image generation, text to speech, transcription and the
// Cohere/Jina-style rerank that OpenAI-compatible servers (vLLM and others)
// expose under /v1/rerank. They share begin/end, the X-Fake-* controls,
// forced errors, the API key check, delays and recording with the rest of
// the server:
//
//	POST /v1/completions            text_completion (stream: text_completion chunks, [DONE]);
//	                                X-Fake-Reply, -Chunks, -Chunk-Delay and -Cut-After as chat
//	POST /v1/images/generations     image URLs or a tiny PNG in base64 (TinyPNG); GPT image
//	                                models (gpt-image-*, chatgpt-image-*) always b64_json, with usage
//	POST /v1/audio/speech           SpeechBytes(input, format), written in X-Fake-Chunks pieces
//	                                X-Fake-Chunk-Delay apart, flushed, without Content-Length
//	POST /v1/audio/transcriptions   multipart/form-data; the text is TranscriptionText
//	POST /v1/rerank                 scores by word overlap (RerankScore)
//
// A non-stream JSON answer is cut halfway through its body with
// X-Fake-Cut-After, as chat's is. Recorded.Model and Recorded.Form read back
// what a recorded request sent.

import (
	"net/http"
	"strconv"
)

// Limits of the extra endpoints, as the OpenAI API reference gives them.
const (
	MaxSpeechInput = 4096 // characters of /v1/audio/speech "input"
	MaxImages      = 10   // "n" of /v1/images/generations
)

// ImageURLPrefix starts every image URL the fake answers: the i-th image of a
// response is ImageURLPrefix + i + ".png".
const ImageURLPrefix = "https://fake.example/img/"

// writeJSONAnswer sends b (built in x.out) as a 200 JSON answer, cut halfway
// through when X-Fake-Cut-After is set, as chat completions does.
func writeJSONAnswer(w http.ResponseWriter, x *exchange, b []byte) {
	x.out = b
	h := w.Header()
	h["Content-Type"] = contentTypeJSON
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	if x.ctl.cutAfter >= 0 {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b[:len(b)/2])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		abort()
	}
	_, _ = w.Write(b)
}

// requestID sets the per-request headers OpenAI sends and returns the id.
func (s *OpenAI) requestID(w http.ResponseWriter) uint64 {
	id := s.ids.Add(1)
	h := w.Header()
	h["X-Request-Id"] = []string{"req_providertest_" + strconv.FormatUint(id, 10)}
	h["Openai-Processing-Ms"] = oneMS
	return id
}

func badJSON(err error) apiError {
	return invalidRequest("", "", "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON.) providertest: "+err.Error())
}

func missingParam(name string) apiError {
	return invalidRequest(name, "missing_required_parameter", "Missing required parameter: '"+name+"'.")
}
