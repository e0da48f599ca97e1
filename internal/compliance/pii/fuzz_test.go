package pii

import (
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// FuzzDetect checks that no input makes a detector panic or report a span
// out of the text, and that resolving and redacting the findings never
// panics. Its seed corpus is testdata/fuzz/FuzzDetect/.
func FuzzDetect(f *testing.F) {
	f.Add(labelled.text)
	d := New()
	f.Fuzz(func(t *testing.T, text string) {
		fs := d.Detect(text, nil)
		for _, x := range fs {
			if x.Start < 0 || x.Start >= x.End || x.End > len(text) {
				t.Fatalf("finding %+v out of bounds for %d bytes", x, len(text))
			}
			if x.Score < MinScore || x.Score > 1 || x.Rule == "" {
				t.Fatalf("finding %+v: score outside [MinScore, 1] or no rule", x)
			}
		}
		res := detect.Resolve(fs, len(text))
		_ = detect.Redact(text, res)
	})
}
