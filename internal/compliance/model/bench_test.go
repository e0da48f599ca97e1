package model

import (
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// prompt4KB is a 4 KB prompt of varied prose (words drawn by a fixed
// PRNG) with an e-mail address and a phone number found in it.
func prompt4KB() (string, []detect.Finding) {
	words := strings.Fields(`the board quarterly report revenue grew percent million driven by new
		enterprise tier churn fell contact questions ignore noise appendix tables focus outlook customer
		support ticket database migration server latency deploy release notes summary please write
		email meeting schedule budget forecast risk compliance review policy security audit team
		product roadmap feature request bug fix test coverage pipeline invoice payment order shipping
		analysis market growth strategy hiring plan office travel expenses approval manager week month`)
	var b strings.Builder
	x := uint64(42)
	for b.Len() < 4096-80 {
		x = x*6364136223846793005 + 1442695040888963407
		b.WriteString(words[(x>>33)%uint64(len(words))])
		if (x>>20)%9 == 0 {
			b.WriteString(". ")
		} else {
			b.WriteByte(' ')
		}
	}
	var fs []detect.Finding
	b.WriteString("mail jane.doe@example.com or call +1 415 555 0132. ")
	text := b.String()
	i := strings.Index(text, "jane.doe@example.com")
	fs = append(fs, detect.Finding{Type: detect.Email, Start: i, End: i + 20, Score: 0.99})
	j := strings.Index(text, "+1 415")
	fs = append(fs, detect.Finding{Type: detect.Phone, Start: j, End: j + 15, Score: 0.9})
	for b.Len() < 4096 {
		b.WriteByte('.')
	}
	return b.String(), fs
}

func BenchmarkFeaturize4KB(b *testing.B) {
	text, fs := prompt4KB()
	b.ReportAllocs()
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		Featurize(text, fs)
	}
}

func BenchmarkScore(b *testing.B) {
	m, err := New(b.Context(), nil, Options{})
	if err != nil {
		b.Fatal(err)
	}
	text, fs := prompt4KB()
	v := Featurize(text, fs)
	b.ReportAllocs()
	for b.Loop() {
		m.Score(v)
	}
}

func BenchmarkPredict(b *testing.B) {
	m, err := New(b.Context(), nil, Options{})
	if err != nil {
		b.Fatal(err)
	}
	text, fs := prompt4KB()
	v := Featurize(text, fs)
	b.ReportAllocs()
	for b.Loop() {
		m.Predict(v)
	}
}
