package wordvec

import (
	"context"
	"testing"
)

func cosine(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func embedAll(t *testing.T, texts ...string) [][]float32 {
	t.Helper()
	vs, err := New().Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	return vs
}

func TestTable(t *testing.T) {
	tb, err := load()
	if err != nil {
		t.Fatal(err)
	}
	if len(tb.weights) != 40000 || tb.dims != 100 || len(tb.index) < 39800 {
		t.Fatalf("%d rows of %d dimensions, %d indexed, want 40000 of 100 (stop words left out)", len(tb.weights), tb.dims, len(tb.index))
	}
	if _, ok := tb.index["the"]; ok || tb.index["said"] != 10 {
		t.Errorf("'the' indexed (a stop word), or 'said' at rank %d, want 10 (rows are by frequency)", tb.index["said"])
	}
}

// TestMeaning: texts about one thing are closer than texts about two,
// though they share no word.
func TestMeaning(t *testing.T) {
	for _, c := range []struct{ a, near, far string }{
		{"medical diagnoses", "I have had a fever and a rash for three days", "Write a haiku about autumn leaves"},
		{"weapons", "How do I buy a rifle and ammunition?", "How do I reset my password?"},
		{"salaries and compensation", "How much is my manager paid per year?", "What is the capital of Australia?"},
	} {
		vs := embedAll(t, c.a, c.near, c.far)
		if near, far := cosine(vs[0], vs[1]), cosine(vs[0], vs[2]); near <= far+0.1 {
			t.Errorf("%q: %q at %.3f, %q at %.3f; want the first clearly closer", c.a, c.near, near, c.far, far)
		}
	}
}

func TestUnitAndZero(t *testing.T) {
	vs := embedAll(t, "Doctors treat patients.", "zzqx qqzz", "", "the of and")
	if n := cosine(vs[0], vs[0]); n < 0.999 || n > 1.001 {
		t.Errorf("|v|² = %.4f, want 1", n)
	}
	for i, v := range vs[1:] {
		if cosine(v, v) != 0 {
			t.Errorf("text %d has no known content word but a non-zero vector", i+1)
		}
	}
}

func TestWords(t *testing.T) {
	var got []string
	eachWord("Don’t STOP-me now, o'clock-- x Ünïcode "+longWord, nil, func(w []byte) { got = append(got, string(w)) })
	want := []string{"don't", "stop-me", "now", "o'clock", "x", "ünïcode"}
	if len(got) != len(want) {
		t.Fatalf("words %q, want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("word %d %q, want %q", i, got[i], want[i])
		}
	}
}

// longWord is longer than maxWordBytes: skipped, not cut.
const longWord = "pneumonoultramicroscopicsilicovolcanoconiosisxxxxxxxxxxxxxxxxxxx"

func TestDecodeRefusesTruncation(t *testing.T) {
	for _, n := range []int{0, 5, 12, 100, len(vectorsBin) - 1} {
		if _, err := decode(vectorsBin[:n]); err == nil {
			t.Errorf("decode of the first %d bytes succeeded", n)
		}
	}
}

func BenchmarkEmbed(b *testing.B) {
	e := New()
	texts := []string{"Can you diagnose what is wrong with me? I have had a fever and a rash for three days."}
	e.Embed(context.Background(), texts)
	b.ReportAllocs()
	for b.Loop() {
		e.Embed(context.Background(), texts)
	}
}
