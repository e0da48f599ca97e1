package verify

import (
	"testing"
	"unicode/utf8"
)

// FuzzExtract checks that Extract never panics and that a valid text always
// agrees with itself.
func FuzzExtract(f *testing.F) {
	for _, s := range []string{
		"", "?", "'", "```", "``` unclosed", `"a"`, "-", "--", "v", "$", "1,", "1,00", ".5", "-.5%", "v1.2.3",
		"twenty-five hundred and", "a dozen", "one hundred percent", "minus", "n't", "n'est pas",
		"Why can't I log in?", "¿Cómo estás?", "如何重置我的密码？", "Wi-Fi", "e.g.", "U.S.", "10am", "$10k",
		"get_user() --force ~/x /etc/hosts a@b.c https://x.y/z", "from A to B to C", "Hi Claude", "“quote”", "‘x’",
		prompt,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := Extract(s) // must not panic, even on invalid UTF-8
		if !utf8.ValidString(s) {
			return
		}
		if ok, reason := Agree(a, Extract(s)); !ok {
			t.Errorf("Extract(%q) does not agree with itself: %q", s, reason)
		}
	})
}
