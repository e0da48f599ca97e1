package policy

import (
	"context"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzCompile: Compile never panics, stays within its bounds, returns a
// valid action and side, is deterministic, and its checks evaluate
// without panicking on the content itself.
func FuzzCompile(f *testing.F) {
	for _, s := range []string{
		"Block any prompt or answer that contains a US Social Security number.",
		"Redact e-mail addresses and phone numbers from prompts",
		"Flag answers that mention competitor products such as Acme or Globex",
		"Do not discuss medical diagnoses",
		"Detectors: SSN, EMAIL\nAction: block\nKeywords: a, \"b c\"\nTopics: x\nApplies to: both\nMin score: 0.7",
		"Action: \nKeywords: \"unterminated, x\nMin score: NaN",
	} {
		f.Add(s)
	}
	e := NewEvaluator(nil, nil)
	f.Fuzz(func(t *testing.T, content string) {
		c := Compile(content)
		switch c.Action {
		case ActionBlock, ActionRedact, ActionFlag:
		default:
			t.Fatalf("Action = %q", c.Action)
		}
		switch c.AppliesTo {
		case ScopePrompt, ScopeAnswer, ScopeBoth:
		default:
			t.Fatalf("AppliesTo = %q", c.AppliesTo)
		}
		if len(c.Keywords) > MaxKeywords || len(c.Topics) > MaxTopics || len(c.Notes) > MaxNotes+1 {
			t.Fatalf("bounds: %d keywords, %d topics, %d notes", len(c.Keywords), len(c.Topics), len(c.Notes))
		}
		if c.MinScore < 0 || c.MinScore > 1 {
			t.Fatalf("MinScore = %v", c.MinScore)
		}
		for _, k := range append(c.Keywords, c.Topics...) {
			if k == "" || len(k) > MaxKeywordLen || !utf8.ValidString(k) || strings.TrimSpace(k) != k {
				t.Fatalf("bad keyword or topic %q", k)
			}
		}
		if c2 := Compile(content); len(c2.Notes) != len(c.Notes) || len(c2.Keywords) != len(c.Keywords) {
			t.Fatalf("not deterministic")
		}
		e.Evaluate(context.Background(), Input{Text: content, Policies: []Policy{{ID: "f", Content: content}}})
	})
}
