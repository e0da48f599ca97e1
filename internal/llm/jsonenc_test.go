package llm

import (
	"encoding/json"
	"testing"
)

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "<a href=\"x\">&</a>", "tab\tnl\nret\r\x00\x1f", "\b\f", "é ü 日本 🎉", "\u2028\u2029", "bad \xff\xfe utf8", "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := AppendJSONString(nil, s); string(got) != string(want) {
			t.Fatalf("AppendJSONString(%q): got %s, want %s", s, got, want)
		}
	})
}
