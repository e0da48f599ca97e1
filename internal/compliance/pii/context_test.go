package pii

import (
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

// TestNearMatchesDetectNear checks that the allocation-free near means
// what detect.Near means.
func TestNearMatchesDetectNear(t *testing.T) {
	words := []string{"order", "card", "call back", "ss#", "e-mail", "ip"}
	ws := newWordSet(words...)
	texts := []string{
		"Order no. 4111 1111 1111 1111 shipped",
		"reorder 4111111111111111 now",
		"CARD:4111111111111111",
		"please Call  back 415-555-0132; call back 415-555-0132",
		"SS# 123-45-6789",
		"my e-mail: a@b.co, email c@d.co",
		"zip 94103 ip 10.0.0.1 ipv6",
		"",
	}
	for _, text := range texts {
		for start := 0; start <= len(text); start += 3 {
			for end := start; end <= len(text) && end <= start+20; end += 5 {
				for _, win := range []int{0, 4, 12, 40} {
					want := detect.Near(text, start, end, win, words)
					if got := near(text, start, end, win, ws); got != want {
						t.Errorf("near(%q, %d, %d, %d) = %v, detect.Near = %v", text, start, end, win, got, want)
					}
				}
			}
		}
	}
}

func TestKeyFilter(t *testing.T) {
	var f keyFilter
	f.add("dear")
	f.add("née")
	for k, want := range map[string]bool{"dear": true, "née": true, "the": false, "": false, "dxxr": true} {
		if got := f.may(k); got != want {
			t.Errorf("may(%q) = %v, want %v", k, got, want)
		}
	}
	// Every trigger passes its filter.
	for k := range triggers {
		if triggerOf(k) != triggers[k] {
			t.Errorf("triggerOf(%q) = %v, want %v", k, triggerOf(k), triggers[k])
		}
	}
}
