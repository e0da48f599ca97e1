package secrets

import (
	"testing"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// FuzzDetect checks that Detect never panics and returns valid findings:
// offsets inside the text, Start < End, a secret type, a score in (0, 1], a
// rule name, no two findings overlapping; and that redacting them leaves
// valid UTF-8 when the input was. Seeds: testdata/fuzz/FuzzDetect and the
// table tests' texts.
func FuzzDetect(f *testing.F) {
	for _, p := range positives() {
		f.Add(p.text)
	}
	f.Add("")
	f.Add("\xff\xfe-----BEGIN PRIVATE KEY-----\x00")
	f.Add("key=key=key=key=key=key=key=key=key=key=key=key=")
	d := MustNew()
	f.Fuzz(func(t *testing.T, text string) {
		fs := d.Detect(text, nil)
		for i, x := range fs {
			if x.Start < 0 || x.End > len(text) || x.Start >= x.End {
				t.Fatalf("finding %d: offsets [%d,%d) out of [0,%d]", i, x.Start, x.End, len(text))
			}
			if x.Type.Category() != detect.CategorySecret || x.Score <= 0 || x.Score > 1 || x.Rule == "" {
				t.Fatalf("finding %d: %+v", i, x)
			}
			if i > 0 && x.Start < fs[i-1].End {
				t.Fatalf("findings %d and %d overlap: %+v %+v", i-1, i, fs[i-1], x)
			}
		}
		red := detect.Redact(text, detect.Resolve(fs, len(text)))
		if utf8.ValidString(text) && !utf8.ValidString(red) {
			t.Fatalf("redaction broke UTF-8: %q", red)
		}
	})
}
