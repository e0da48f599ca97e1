package providertest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"slices"
	"strconv"

	"github.com/svc-gateway/svc/internal/llm"
)

// ---------------------------------------------------------------------------
// POST /v1/audio/transcriptions

// RecordedFile is a file part of a recorded multipart/form-data request.
type RecordedFile struct {
	Field       string // the form field, "file" for transcriptions
	Filename    string
	ContentType string
	Data        []byte
}

// RecordedForm is the multipart/form-data body of a recorded request: its
// value fields and its file parts.
type RecordedForm struct {
	Values url.Values
	Files  []RecordedFile
}

// File returns the first file part of field, if there is one.
func (f *RecordedForm) File(field string) (RecordedFile, bool) {
	for _, p := range f.Files {
		if p.Field == field {
			return p, true
		}
	}
	return RecordedFile{}, false
}

// errNotMultipart is returned for a body that is not multipart/form-data.
var errNotMultipart = errors.New("providertest: request is not multipart/form-data")

// parseForm reads a multipart/form-data body whose Content-Type is ct.
func parseForm(ct string, body []byte) (*RecordedForm, error) {
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return nil, errNotMultipart
	}
	f := &RecordedForm{Values: url.Values{}}
	mr := multipart.NewReader(bytes.NewReader(body), params["boundary"])
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			return f, nil
		}
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(p)
		if err != nil {
			return nil, err
		}
		name := p.FormName()
		if p.FileName() != "" {
			f.Files = append(f.Files, RecordedFile{Field: name, Filename: p.FileName(), ContentType: p.Header.Get("Content-Type"), Data: data})
		} else if name != "" {
			f.Values.Add(name, string(data))
		}
	}
}

// Form parses the recorded request's multipart/form-data body (as sent to
// /v1/audio/transcriptions) into its values and files.
func (r Recorded) Form() (*RecordedForm, error) {
	return parseForm(r.Header.Get("Content-Type"), r.Body)
}

// Model is the "model" the recorded request sent: from its JSON body or, for
// a multipart/form-data request, its form; "" if there is none.
func (r Recorded) Model() string {
	if f, err := r.Form(); err == nil {
		return f.Values.Get("model")
	}
	var m struct {
		Model string `json:"model"`
	}
	_ = json.Unmarshal(r.Body, &m)
	return m.Model
}

// TranscriptionText is the text the server answers for an uploaded file of
// size bytes named filename, so tests can check that the file arrived whole.
func TranscriptionText(size int, filename string) string {
	return "transcribed " + strconv.Itoa(size) + " bytes: " + filename
}

// transcriptionDuration is the seconds of audio the fake takes a file of
// size bytes to hold: 16 kHz 16-bit mono, at least 0.1 s.
func transcriptionDuration(size int) float64 { return max(float64(size)/32000, 0.1) }

// timestamp formats seconds as an SRT (comma) or WebVTT (dot) timestamp.
func timestamp(sec float64, sep byte) string {
	ms := int64(sec * 1000)
	b := make([]byte, 0, 12)
	two := func(n int64) { b = append(b, byte('0'+n/10), byte('0'+n%10)) }
	two(ms / 3600000 % 100)
	b = append(b, ':')
	two(ms / 60000 % 60)
	b = append(b, ':')
	two(ms / 1000 % 60)
	b = append(b, sep)
	b = append(b, byte('0'+ms/100%10), byte('0'+ms/10%10), byte('0'+ms%10))
	return string(b)
}

// transcriptions serves POST /v1/audio/transcriptions. whisper-1 answers
// {"text"} (json), verbose_json, text, srt and vtt; the gpt-4o-*transcribe
// models json with token usage, or text.
func (s *OpenAI) transcriptions(w http.ResponseWriter, r *http.Request) {
	x, ok := s.begin(w, r)
	if !ok {
		return
	}
	defer x.end()

	form, err := parseForm(r.Header.Get("Content-Type"), x.body)
	model := ""
	if form != nil {
		model = form.Values.Get("model")
	}
	if x.ctl.status != 0 {
		writeError(w, forcedError(x.ctl.status, model))
		return
	}
	var file RecordedFile
	var bad apiError
	format := ""
	if form != nil {
		format = form.Values.Get("response_format")
	}
	whisper := model == "whisper-1"
	switch {
	case errors.Is(err, errNotMultipart):
		bad = invalidRequest("", "", "Invalid Content-Type header ("+r.Header.Get("Content-Type")+"), expected multipart/form-data. (HINT: If you're using curl, you can pass -H 'Content-Type: multipart/form-data')")
	case err != nil:
		bad = invalidRequest("", "", "Could not parse multipart form: "+err.Error())
	case !hasFile(form, "file", &file):
		bad = missingParam("file")
	case model == "":
		bad = missingParam("model")
	case !slices.Contains([]string{"", "json", "text", "srt", "verbose_json", "vtt"}, format):
		bad = invalidRequest("response_format", "invalid_value", "Invalid value: '"+format+"'. Supported values are: 'json', 'text', 'srt', 'verbose_json', and 'vtt'.")
	case !whisper && format != "" && format != "json" && format != "text":
		bad = invalidRequest("response_format", "unsupported_value", "response_format '"+format+"' is not compatible with model '"+model+"'. Use 'json' or 'text' instead.")
	}
	if bad.Status == 0 {
		if t := form.Values.Get("temperature"); t != "" {
			if v, err := strconv.ParseFloat(t, 64); err != nil || v < 0 || v > 1 {
				bad = invalidRequest("temperature", "invalid_value", "Invalid 'temperature': expected a number between 0 and 1.")
			}
		}
	}
	if bad.Status != 0 {
		writeError(w, bad)
		return
	}

	s.requestID(w)
	text := TranscriptionText(len(file.Data), file.Filename)
	dur := transcriptionDuration(len(file.Data))
	var b []byte
	switch format {
	case "text", "srt", "vtt":
		b = x.out[:0]
		switch format {
		case "srt":
			b = append(b, "1\n00:00:00,000 --> "+timestamp(dur, ',')+"\n"...)
		case "vtt":
			b = append(b, "WEBVTT\n\n00:00:00.000 --> "+timestamp(dur, '.')+"\n"...)
		}
		b = append(b, text...)
		b = append(b, '\n')
		if format != "text" {
			b = append(b, '\n')
		}
		x.out = b
		h := w.Header()
		h.Set("Content-Type", "text/plain; charset=utf-8")
		h.Set("Content-Length", strconv.Itoa(len(b)))
		_, _ = w.Write(b)
		return
	case "verbose_json":
		lang := form.Values.Get("language")
		if lang == "" {
			lang = "english"
		}
		b = append(x.out[:0], `{"task":"transcribe","language":`...)
		b = llm.AppendJSONString(b, lang)
		b = append(b, `,"duration":`...)
		b = strconv.AppendFloat(b, dur, 'f', -1, 64)
		b = append(b, `,"text":`...)
		b = llm.AppendJSONString(b, text)
		b = append(b, `,"segments":[{"id":0,"seek":0,"start":0,"end":`...)
		b = strconv.AppendFloat(b, dur, 'f', -1, 64)
		b = append(b, `,"text":`...)
		b = llm.AppendJSONString(b, text)
		b = append(b, `,"tokens":[],"temperature":0,"avg_logprob":-0.1,"compression_ratio":1,"no_speech_prob":0}],"usage":{"type":"duration","seconds":`...)
		b = appendInt(b, int(dur+0.999))
		b = append(b, "}}\n"...)
	default:
		b = append(x.out[:0], `{"text":`...)
		b = llm.AppendJSONString(b, text)
		if !whisper {
			audio := tokens(len(file.Data))
			prompt := 0
			if p := form.Values.Get("prompt"); p != "" {
				prompt = tokens(len(p))
			}
			out := tokens(len(text))
			b = append(b, `,"usage":{"type":"tokens","input_tokens":`...)
			b = appendInt(b, audio+prompt)
			b = append(b, `,"input_token_details":{"text_tokens":`...)
			b = appendInt(b, prompt)
			b = append(b, `,"audio_tokens":`...)
			b = appendInt(b, audio)
			b = append(b, `},"output_tokens":`...)
			b = appendInt(b, out)
			b = append(b, `,"total_tokens":`...)
			b = appendInt(b, audio+prompt+out)
			b = append(b, '}')
		}
		b = append(b, "}\n"...)
	}
	writeJSONAnswer(w, x, b)
}

func hasFile(f *RecordedForm, field string, dst *RecordedFile) bool {
	var ok bool
	*dst, ok = f.File(field)
	return ok
}
