package embed

import (
	"context"
	"testing"
)

func TestFold(t *testing.T) {
	tests := []struct {
		word, key string
		pos       byte
	}{
		{"movie", "film", 'n'},         // a first-sense synonym
		{"film", "film", 'n'},          //
		{"questions", "question", 'n'}, // a stop word: stemmed only
		{"answer", "answer", 'v'},      // its first sense is a verb
		{"pasword", "password", 'n'},   // a typo
		{"repo", "repositori", 'n'},    // an abbreviation
		{"whether", "whether", 0},      // a stop word is no typo
		{"sdk", "sdk", 0},              // unknown to WordNet
	}
	for _, tt := range tests {
		if key, pos := Fold(tt.word); key != tt.key || pos != tt.pos {
			t.Errorf("Fold(%q): got %q, %q; want %q, %q", tt.word, key, pos, tt.key, tt.pos)
		}
	}
	// Words with one key are one word to Local.
	l := NewLocal()
	v, _ := l.Embed(context.Background(), []string{"a good movie", "a good film"})
	if s := Cosine(v[0], v[1]); s < 0.999 {
		t.Errorf("movie and film fold to one key, but Local's similarity is %.4f, want 1", s)
	}
	if !IsStopWord("whether") || IsStopWord("comment") || IsStopWord("password") {
		t.Errorf("IsStopWord: whether %v, comment %v, password %v; want true, false, false",
			IsStopWord("whether"), IsStopWord("comment"), IsStopWord("password"))
	}
}
