package pii

import "github.com/svc-gateway/svc/internal/compliance/detect"

// near reports whether one of words is within window bytes of
// text[start:end], before or after it.
func near(text string, start, end, window int, words []string) bool {
	return detect.Near(text, start, end, window, words)
}

// before reports whether one of words is within window bytes before start.
func before(text string, start, window int, words []string) bool {
	if start < 0 || start > len(text) {
		return false
	}
	return detect.Near(text[:start], start, start, window, words)
}
