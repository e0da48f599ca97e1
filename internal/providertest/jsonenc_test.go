package providertest

import (
	"encoding/json"
	"testing"

	"github.com/svc-gateway/svc/internal/llm"
)

func TestAppendString(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " and \ backslash`, "ctl \x00\x01\x1f\t\r\n", "ünïcödé ✓ 😀",
		"bad utf8 \xff\xfe end", "sep \u2028 \u2029", "<html>&amp;",
	} {
		checkAppendString(t, s)
	}
}

func FuzzAppendString(f *testing.F) {
	f.Add("hello \"world\"\n")
	f.Add("\xff\u2028")
	f.Fuzz(checkAppendString)
}

// checkAppendString: the output is one valid JSON string that decodes to what
// encoding/json decodes its own encoding of s to.
func checkAppendString(t *testing.T, s string) {
	got := llm.AppendJSONString(nil, s)
	if !json.Valid(got) {
		t.Fatalf("llm.AppendJSONString(%q) = %s: not valid JSON", s, got)
	}
	var back, want string
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	std, _ := json.Marshal(s)
	_ = json.Unmarshal(std, &want)
	if back != want {
		t.Errorf("llm.AppendJSONString(%q) decodes to %q, want %q", s, back, want)
	}
}

func TestPiece(t *testing.T) {
	for _, text := range []string{"", "a", "hello world", "héllo ✓✓✓ 😀"} {
		for n := 1; n <= 20; n++ {
			var joined string
			for i := range n {
				joined += piece(text, i, n)
			}
			if joined != text {
				t.Errorf("pieces of %q in %d: joined %q", text, n, joined)
			}
		}
	}
}
