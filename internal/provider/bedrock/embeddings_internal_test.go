package bedrock

import "testing"

func TestEmbedFamily(t *testing.T) {
	for model, want := range map[string]string{
		"amazon.titan-embed-text-v2:0": "titan",
		"us.cohere.embed-english-v3":   "cohere",
		"arn:aws:bedrock:us-east-1:123:inference-profile/eu.cohere.embed-multilingual-v3": "cohere",
		"anthropic.claude-3-5-sonnet": "",
	} {
		if got := embedFamily(model); got != want {
			t.Errorf("embedFamily(%q) = %q, want %q", model, got, want)
		}
	}
}
