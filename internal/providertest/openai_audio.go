package providertest

import (
	"encoding/binary"
	"encoding/json"
	"net/http"
	"strconv"
	"unicode/utf8"
)

// ---------------------------------------------------------------------------
// POST /v1/audio/speech

type speechRequest struct {
	Model          string          `json:"model"`
	Input          *string         `json:"input"`
	Voice          json.RawMessage `json:"voice"`
	ResponseFormat string          `json:"response_format"`
	Speed          *float64        `json:"speed"`
}

// speechContentTypes are the Content-Types of /v1/audio/speech answers.
var speechContentTypes = map[string]string{
	"mp3":  "audio/mpeg",
	"opus": "audio/opus",
	"aac":  "audio/aac",
	"flac": "audio/flac",
	"wav":  "audio/wav",
	"pcm":  "audio/pcm",
}

// SpeechContentType is the Content-Type of a speech answer in format ("" is
// mp3), or "" for a format the API does not know.
func SpeechContentType(format string) string {
	if format == "" {
		format = "mp3"
	}
	return speechContentTypes[format]
}

// Speech audio is 24 kHz 16-bit mono PCM, as OpenAI's pcm format is:
// speechSamplesPerByte samples for every byte of input.
const (
	speechRate           = 24000
	speechSamplesPerByte = 16
)

// SpeechBytes is the audio the server answers for input in format ("" is
// mp3), or nil for a format the API does not know. It is deterministic: a
// sawtooth per input byte, 16-bit little-endian at 24 kHz, raw for pcm, with
// a canonical 44-byte RIFF header for wav; the other formats carry their
// magic bytes before the same samples (enough for a sniffer, not a decoder).
func SpeechBytes(input, format string) []byte {
	if SpeechContentType(format) == "" {
		return nil
	}
	if format == "" {
		format = "mp3"
	}
	data := len(input) * speechSamplesPerByte * 2
	var b []byte
	switch format {
	case "wav":
		b = make([]byte, 0, 44+data)
		b = append(b, "RIFF"...)
		b = binary.LittleEndian.AppendUint32(b, uint32(36+data))
		b = append(b, "WAVEfmt "...)
		b = binary.LittleEndian.AppendUint32(b, 16)
		b = binary.LittleEndian.AppendUint16(b, 1) // PCM
		b = binary.LittleEndian.AppendUint16(b, 1) // mono
		b = binary.LittleEndian.AppendUint32(b, speechRate)
		b = binary.LittleEndian.AppendUint32(b, speechRate*2)
		b = binary.LittleEndian.AppendUint16(b, 2)
		b = binary.LittleEndian.AppendUint16(b, 16)
		b = append(b, "data"...)
		b = binary.LittleEndian.AppendUint32(b, uint32(data))
	case "mp3":
		b = append(make([]byte, 0, 4+data), 0xff, 0xf3, 0x44, 0xc4) // MPEG-2 layer III frame sync
	case "opus":
		b = append(make([]byte, 0, 4+data), "OggS"...)
	case "aac":
		b = append(make([]byte, 0, 4+data), 0xff, 0xf1, 0x50, 0x80) // ADTS sync
	case "flac":
		b = append(make([]byte, 0, 4+data), "fLaC"...)
	case "pcm":
		b = make([]byte, 0, data)
	}
	for i := range len(input) {
		amp := int(input[i])*64 + 1024
		for j := range speechSamplesPerByte {
			v := amp*(2*j-speechSamplesPerByte+1)/speechSamplesPerByte - (amp / speechSamplesPerByte)
			b = binary.LittleEndian.AppendUint16(b, uint16(int16(v)))
		}
	}
	return b
}

// speech serves POST /v1/audio/speech: SpeechBytes, sent in ctl.chunks
// flushed pieces ctl.chunkDelay apart (the first after the delay too) and no
// Content-Length, so a proxy's streaming shows; X-Fake-Cut-After ends the
// connection after that many pieces.
func (s *OpenAI) speech(w http.ResponseWriter, r *http.Request) {
	x, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer x.end()

	var req speechRequest
	err := json.Unmarshal(x.body, &req)
	if x.ctl.status != 0 {
		writeError(w, forcedError(x.ctl.status, req.Model))
		return
	}
	var bad apiError
	switch {
	case err != nil:
		bad = badJSON(err)
	case req.Model == "":
		bad = invalidRequest("", "", "you must provide a model parameter")
	case req.Input == nil:
		bad = missingParam("input")
	case utf8.RuneCountInString(*req.Input) > MaxSpeechInput:
		bad = invalidRequest("input", "string_above_max_length", "Invalid 'input': string too long. Expected a string with maximum length "+strconv.Itoa(MaxSpeechInput)+", but got a string with length "+strconv.Itoa(utf8.RuneCountInString(*req.Input))+" instead.")
	case !voiceGiven(req.Voice):
		bad = missingParam("voice")
	case SpeechContentType(req.ResponseFormat) == "":
		bad = invalidRequest("response_format", "invalid_value", "Invalid value: '"+req.ResponseFormat+"'. Supported values are: 'mp3', 'opus', 'aac', 'flac', 'wav', and 'pcm'.")
	case req.Speed != nil && (*req.Speed < 0.25 || *req.Speed > 4):
		bad = invalidRequest("speed", "invalid_value", "Invalid 'speed': expected a value between 0.25 and 4.0.")
	}
	if bad.Status != 0 {
		writeError(w, bad)
		return
	}

	audio := SpeechBytes(*req.Input, req.ResponseFormat)
	s.requestID(w)
	flusher, _ := w.(http.Flusher)
	h := w.Header()
	h["Content-Type"] = []string{SpeechContentType(req.ResponseFormat)}
	w.WriteHeader(http.StatusOK)
	if flusher != nil {
		flusher.Flush()
	}
	ctl := &x.ctl
	for i := range ctl.chunks {
		if i == ctl.cutAfter {
			abort()
		}
		if !s.wait(r.Context(), ctl.chunkDelay) {
			abort()
		}
		if _, err := w.Write(audio[i*len(audio)/ctl.chunks : (i+1)*len(audio)/ctl.chunks]); err != nil {
			abort()
		}
		if flusher != nil {
			flusher.Flush()
		}
	}
	if ctl.cutAfter >= ctl.chunks {
		abort()
	}
}

// voiceGiven reports whether "voice" is a non-empty string or an object with
// an "id", as custom voices are given.
func voiceGiven(raw json.RawMessage) bool {
	var name string
	if json.Unmarshal(raw, &name) == nil {
		return name != ""
	}
	var obj struct {
		ID string `json:"id"`
	}
	return json.Unmarshal(raw, &obj) == nil && obj.ID != ""
}
