package openai

import "testing"

func TestHasUsage(t *testing.T) {
	cases := map[string]bool{
		`{"choices":[],"usage":{"prompt_tokens":1}}`:             true,
		`{"choices":[{"delta":{"content":"x"}}],"usage":null}`:   false,
		`{"usage" : { "total_tokens": 3 }}`:                      true,
		`{"choices":[{"delta":{"content":"\"usage\":{"}}]}`:      false,
		`{"choices":[{"delta":{"content":"usage"}}],"usage":{}}`: true,
		`{"choices":[]}`: false,
	}
	for in, want := range cases {
		if got := hasUsage([]byte(in)); got != want {
			t.Errorf("hasUsage(%s) = %v, want %v", in, got, want)
		}
	}
}
