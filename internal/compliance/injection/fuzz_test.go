package injection

import (
	"math"
	"testing"
)

// FuzzDetect checks that no input panics, that spans lie within the text on
// rune boundaries of it, and that scores are within [0, 1]. Seeds are in
// testdata/fuzz/FuzzDetect and below.
func FuzzDetect(f *testing.F) {
	for _, tc := range attackCases {
		f.Add(tc.text)
	}
	for _, s := range negativeCases {
		f.Add(s)
	}
	var d Detector
	learnedDetector := Detector{Learned: true}
	f.Fuzz(func(t *testing.T, text string) {
		fs, score := d.Scan(text, nil)
		if math.IsNaN(score) || score < 0 || score > 1 {
			t.Fatalf("score %v, want within [0, 1]", score)
		}
		for _, f := range fs {
			if f.Start < 0 || f.End > len(text) || f.Start >= f.End {
				t.Fatalf("finding %+v out of [0, %d)", f, len(text))
			}
			if f.Score < 0 || f.Score > 1 || math.IsNaN(f.Score) {
				t.Fatalf("finding score %v, want within [0, 1]", f.Score)
			}
			if f.Rule == "" || f.Type.Category() != 3 {
				t.Fatalf("finding %+v: want a rule and an injection type", f)
			}
		}
		if s := d.Score(text); s != score {
			t.Fatalf("Score %v, Scan's score %v: want equal", s, score)
		}
		lfs, ls := learnedDetector.Scan(text, nil)
		if math.IsNaN(ls) || ls < 0 || ls > 1 || (len(lfs) > 0) != (ls >= DefaultThreshold) {
			t.Fatalf("learned: score %v with %d findings: want within [0, 1], findings exactly at or above the threshold", ls, len(lfs))
		}
		for _, f := range lfs {
			if f.Start < 0 || f.End > len(text) || f.Start >= f.End || f.Rule == "" {
				t.Fatalf("learned: finding %+v out of [0, %d)", f, len(text))
			}
		}
	})
}
