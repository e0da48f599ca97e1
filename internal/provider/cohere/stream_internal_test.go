package cohere

import (
	"encoding/json"
	"testing"
)

// FuzzAppendString checks the hand-written JSON string encoder against
// encoding/json, byte for byte.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain", `q"b\s`, "<a href=\"x\">&</a>", "tab\tnl\nret\r\x00\x1f", "é ü 日本 🎉", "\u2028\u2029", "bad \xff\xfe utf8", "\x7f"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, _ := json.Marshal(s)
		if got := appendString(nil, s); string(got) != string(want) {
			t.Fatalf("appendString(%q): got %s, want %s", s, got, want)
		}
	})
}
