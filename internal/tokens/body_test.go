package tokens

import (
	"strings"
	"testing"
)

func TestBody(t *testing.T) {
	m := "gpt-4o"
	c := func(s string) int64 { return Count(m, s) + 1 }
	img := "data:image/png;base64," + strings.Repeat("QUJD", 500)
	pdf := "data:application/pdf;base64," + strings.Repeat("QUJD", 500)
	raw := strings.Repeat("QUJD", 500)
	tests := []struct {
		name  string
		model string
		body  string
		want  int64
	}{
		{"embeddings, one string", m, `{"model":"text-embedding-3-small","input":"hello world"}`,
			3 + c("hello world")},
		{"embeddings, strings", m, `{"model":"m","input":["hello world","good night"]}`,
			3 + c("hello world") + c("good night")},
		{"embeddings, token arrays", m, `{"model":"m","input":[[1,2,3],[4,5]]}`, 3 + 5},
		{"completions", m, `{"model":"m","prompt":"Once upon a time","max_tokens":100000,"temperature":0.2}`,
			3 + c("Once upon a time")},
		{"completions, token ids", m, `{"model":"m","prompt":[101,102,103]}`, 3 + 3},
		{"anthropic messages", m, `{"model":"m","system":"Be brief.","max_tokens":64,"messages":[{"role":"user","content":[{"type":"text","text":"Hi there"}]}]}`,
			3 + c("Be brief.") + c("user") + c("text") + c("Hi there")},
		{"image data uri", m, `{"input":[{"type":"image_url","image_url":{"url":"` + img + `"}}]}`,
			3 + c("image_url") + ImageTokens},
		{"image data uri, other model", "claude-sonnet-4", `{"x":"` + img + `"}`, 3 + OtherImageTokens},
		{"pdf data uri", m, `{"x":"` + pdf + `"}`, 3 + int64(len(pdf)/4) + 1},
		{"bare base64 data", m, `{"source":{"type":"base64","media_type":"image/png","data":"` + raw + `"}}`,
			3 + c("base64") + c("image/png") + ImageTokens + int64(len(raw)/32) + 1},
		{"audio data", m, `{"input_audio":{"data":"` + raw + `","format":"wav"}}`,
			3 + int64(len(raw)/AudioBytesPerToken) + 1 + c("wav")},
		{"not JSON", m, `{"input": "unterminated`, int64(len(`{"input": "unterminated`)) + 3},
		{"multipart", m, "--boundary\r\nContent-Disposition: form-data", 0},
		{"empty", m, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Body(tt.model, []byte(tt.body)); got != tt.want {
				t.Errorf("Body: got %d, want %d", got, tt.want)
			}
		})
	}
}
