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

func TestMayHaveToolCalls(t *testing.T) {
	cases := map[string]bool{
		`{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{"}}]}}]}`: true,
		`{"choices":[{"index":0,"delta":{"content":"a [b] c"}}]}`:                                     false,
		`{"choices":[{"index":0,"delta":{"content":"say \"tool_calls\": [x]"}}]}`:                     false,
		`{"choices":[{"index":0,"delta":{"content":"x"}}],"usage":null}`:                              false,
		`{"choices":[]}`: false,
	}
	for in, want := range cases {
		if got := mayHaveToolCalls([]byte(in)); got != want {
			t.Errorf("mayHaveToolCalls(%s) = %v, want %v", in, got, want)
		}
	}
}
