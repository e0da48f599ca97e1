package pii

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// tcase is one row of a detector's table: the values of typ that New(typ)
// must find in text, in order (nil: none).
type tcase struct {
	name string
	text string
	want []string
}

// values runs the detector of typ alone over text and returns the values
// it found, after checking every finding's offsets, type, score and rule.
func values(t *testing.T, typ detect.Type, text string) []string {
	t.Helper()
	var got []string
	for _, f := range New(typ).Detect(text, nil) {
		if f.Start < 0 || f.End > len(text) || f.Start >= f.End {
			t.Fatalf("finding %+v out of bounds for %d bytes", f, len(text))
		}
		if f.Type != typ {
			t.Errorf("finding of type %s from the %s detector", f.Type, typ)
		}
		if f.Score < MinScore || f.Score > 1 {
			t.Errorf("score %v of %q outside [MinScore, 1]", f.Score, text[f.Start:f.End])
		}
		if f.Rule == "" {
			t.Errorf("finding %q has no rule", text[f.Start:f.End])
		}
		got = append(got, text[f.Start:f.End])
	}
	return got
}

func runTable(t *testing.T, typ detect.Type, tests []tcase) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := values(t, typ, tt.text)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("%s in %q: got %q, want %q (-want +got):\n%s", typ, tt.text, got, tt.want, d)
			}
		})
	}
}

func TestNewSelectsTypes(t *testing.T) {
	text := "mail bob@example.com, card 4242 4242 4242 4242"
	fs := New(detect.Email).Detect(text, nil)
	if len(fs) != 1 || fs[0].Type != detect.Email {
		t.Fatalf("New(Email) found %+v, want one EMAIL", fs)
	}
	if got, want := New(detect.Email).Name(), "pii:EMAIL"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	if got, want := New().Name(), "pii"; got != want {
		t.Errorf("Name() = %q, want %q", got, want)
	}
	all := New().Detect(text, nil)
	if len(all) != 2 {
		t.Errorf("New() found %d findings, want 2: %+v", len(all), all)
	}
	// dst is appended to, not overwritten.
	prev := []detect.Finding{{Type: detect.APIKey, Start: 0, End: 1, Score: 1}}
	if got := New().Detect(text, prev); len(got) != 3 || got[0].Type != detect.APIKey {
		t.Errorf("Detect(text, dst) = %+v, want dst's finding then 2", got)
	}
}
