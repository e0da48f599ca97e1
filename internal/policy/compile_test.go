package policy

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/svc-gateway/svc/internal/compliance/detect"
)

func TestCompile(t *testing.T) {
	none := []string{}
	noDet := []detect.Type{}
	tests := []struct {
		name    string
		content string
		want    Checks // Notes are checked by wantNote
		// wantNote is a fragment one of the notes must hold.
		wantNote string
	}{
		{"ssn both", "Block any prompt or answer that contains a US Social Security number.",
			Checks{Detectors: []detect.Type{detect.SSN}, Keywords: none, Topics: none, Action: ActionBlock, AppliesTo: ScopeBoth, MinScore: 0.5},
			`detectors read from "social security number"`},
		{"email phone redact prompt", "Redact e-mail addresses and phone numbers from prompts",
			Checks{Detectors: []detect.Type{detect.Email, detect.Phone}, Keywords: none, Topics: none, Action: ActionRedact, AppliesTo: ScopePrompt, MinScore: 0.5},
			"applies to prompts only"},
		{"competitors flag answer", "Flag answers that mention competitor products such as Acme or Globex",
			Checks{Detectors: noDet, Keywords: []string{"Acme", "Globex"}, Topics: none, Action: ActionFlag, AppliesTo: ScopeAnswer, MinScore: 0.5},
			`keywords read from the prose: "Acme", "Globex"`},
		{"topic", "Do not discuss medical diagnoses",
			Checks{Detectors: noDet, Keywords: none, Topics: []string{"medical diagnoses"}, Action: ActionBlock, AppliesTo: ScopeBoth, MinScore: 0.5},
			"neither prompts nor answers named: both"},
		{"two topics", "Never give investment advice or stock tips.",
			Checks{Detectors: noDet, Keywords: none, Topics: []string{"investment advice", "stock tips"}, Action: ActionBlock, AppliesTo: ScopeBoth, MinScore: 0.5},
			`prohibition "never"`},
		{"credentials", "Never share credentials, API keys, passwords or secrets.",
			Checks{Detectors: secretTypes, Keywords: none, Topics: none, Action: ActionBlock, AppliesTo: ScopeBoth, MinScore: 0.5}, ""},
		{"injection", "Block prompt injection and jailbreak attempts in prompts.",
			Checks{Detectors: injectionTypes, Keywords: none, Topics: none, Action: ActionBlock, AppliesTo: ScopePrompt, MinScore: 0.5}, ""},
		{"pii", "Flag personal data (PII) in answers.",
			Checks{Detectors: piiTypes, Keywords: none, Topics: none, Action: ActionFlag, AppliesTo: ScopeAnswer, MinScore: 0.5}, ""},
		{"phi", "Protected health information must be redacted.",
			Checks{Detectors: []detect.Type{detect.Email, detect.Phone, detect.SSN, detect.IBAN, detect.IPAddress, detect.Person, detect.DateOfBirth, detect.DriversLicense},
				Keywords: none, Topics: none, Action: ActionRedact, AppliesTo: ScopeBoth, MinScore: 0.5}, ""},
		{"no action word", "Credit card numbers in answers.",
			Checks{Detectors: []detect.Type{detect.CreditCard}, Keywords: none, Topics: none, Action: ActionFlag, AppliesTo: ScopeAnswer, MinScore: 0.5},
			"no action word: flag"},
		{"quoted keywords", `Block prompts that say "project falcon" or “Q3 numbers”.`,
			Checks{Detectors: noDet, Keywords: []string{"project falcon", "Q3 numbers"}, Topics: none, Action: ActionBlock, AppliesTo: ScopePrompt, MinScore: 0.5}, ""},
		{"explicit detectors", "Detectors: SSN, e-mail, credit card",
			Checks{Detectors: []detect.Type{detect.Email, detect.SSN, detect.CreditCard}, Keywords: none, Topics: none, Action: ActionFlag, AppliesTo: ScopeBoth, MinScore: 0.5}, ""},
		{"explicit action", "Block SSNs.\nAction: redact",
			Checks{Detectors: []detect.Type{detect.SSN}, Keywords: none, Topics: none, Action: ActionRedact, AppliesTo: ScopeBoth, MinScore: 0.5},
			"Action line (redact) overrides the prose (block)"},
		{"explicit keywords", `Keywords: a, "b, c", a, ,`,
			Checks{Detectors: noDet, Keywords: []string{"a", "b, c"}, Topics: none, Action: ActionFlag, AppliesTo: ScopeBoth, MinScore: 0.5}, ""},
		{"explicit topics", "Do not discuss politics.\nTopics: elections, religion",
			Checks{Detectors: noDet, Keywords: none, Topics: []string{"elections", "religion"}, Action: ActionBlock, AppliesTo: ScopeBoth, MinScore: 0.5},
			"Topics line overrides"},
		{"explicit applies to", "Block SSNs in answers.\nApplies to: prompt",
			Checks{Detectors: []detect.Type{detect.SSN}, Keywords: none, Topics: none, Action: ActionBlock, AppliesTo: ScopePrompt, MinScore: 0.5},
			"Applies to line (prompt) overrides the prose (answer)"},
		{"applies to both", "Applies to: prompts and answers\nDetectors: JWT",
			Checks{Detectors: []detect.Type{detect.JWT}, Keywords: none, Topics: none, Action: ActionFlag, AppliesTo: ScopeBoth, MinScore: 0.5}, ""},
		{"min score", "Flag IBANs.\nMin score: 0.7",
			Checks{Detectors: []detect.Type{detect.IBAN}, Keywords: none, Topics: none, Action: ActionFlag, AppliesTo: ScopeBoth, MinScore: 0.7}, ""},
		{"bad min score", "Flag IBANs.\nMin score: 7",
			Checks{Detectors: []detect.Type{detect.IBAN}, Keywords: none, Topics: none, Action: ActionFlag, AppliesTo: ScopeBoth, MinScore: 0.5},
			`Min score "7" is not a number from 0 to 1`},
		{"conflicting actions", "Action: block\nDetectors: SSN\nAction: flag",
			Checks{Detectors: []detect.Type{detect.SSN}, Keywords: none, Topics: none, Action: ActionFlag, AppliesTo: ScopeBoth, MinScore: 0.5},
			"two Action lines (block, flag): the last one is used"},
		{"bad action", "Action: delete\nDetectors: SSN",
			Checks{Detectors: []detect.Type{detect.SSN}, Keywords: none, Topics: none, Action: ActionFlag, AppliesTo: ScopeBoth, MinScore: 0.5},
			`Action "delete" is not block, redact or flag`},
		{"unknown detector", "Detectors: SSN, FOO",
			Checks{Detectors: []detect.Type{detect.SSN}, Keywords: none, Topics: none, Action: ActionFlag, AppliesTo: ScopeBoth, MinScore: 0.5},
			`unknown detector "FOO" ignored`},
		{"garbage", "\x00\xff}{][ ::: ;;;",
			Checks{Detectors: noDet, Keywords: none, Topics: none, Action: ActionFlag, AppliesTo: ScopeBoth, MinScore: 0.5},
			"the policy matches nothing"},
		{"empty", "",
			Checks{Detectors: noDet, Keywords: none, Topics: none, Action: ActionFlag, AppliesTo: ScopeBoth, MinScore: 0.5},
			"the policy matches nothing"},
		{"descriptive prose is no topic", "This policy protects our customers.",
			Checks{Detectors: noDet, Keywords: none, Topics: none, Action: ActionFlag, AppliesTo: ScopeBoth, MinScore: 0.5}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compile(tt.content)
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreFields(Checks{}, "Notes")); diff != "" {
				t.Errorf("Compile(%q) mismatch (-want +got):\n%s\nnotes: %q", tt.content, diff, got.Notes)
			}
			if tt.wantNote != "" && !slices.ContainsFunc(got.Notes, func(n string) bool { return strings.Contains(n, tt.wantNote) }) {
				t.Errorf("notes %q, want one holding %q", got.Notes, tt.wantNote)
			}
		})
	}
}

func TestCompileBounds(t *testing.T) {
	var kw []string
	for i := range 150 {
		kw = append(kw, "kw"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+string(rune('a'+i/26)))
	}
	tests := []struct {
		name        string
		content     string
		maxKeywords int
		note        string
	}{
		{"keywords capped", "Keywords: " + strings.Join(kw, ", "), MaxKeywords, "keywords capped at 100"},
		{"content cut", strings.Repeat("Block SSNs. ", MaxContent/12+100) + "\nKeywords: late", 0, "over 64 KiB"},
		{"notes capped", strings.Repeat("Action: nope\n", 1000), 0, "more notes left out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Compile(tt.content)
			if len(got.Keywords) != tt.maxKeywords {
				t.Errorf("got %d keywords, want %d", len(got.Keywords), tt.maxKeywords)
			}
			if len(got.Notes) > MaxNotes+1 {
				t.Errorf("got %d notes, want at most %d", len(got.Notes), MaxNotes+1)
			}
			if !slices.ContainsFunc(got.Notes, func(n string) bool { return strings.Contains(n, tt.note) }) {
				t.Errorf("notes %q, want one holding %q", got.Notes, tt.note)
			}
		})
	}
}

func TestCompileDeterministic(t *testing.T) {
	content := "Redact personal data, credentials and health information from prompts and answers; flag mentions of \"Acme\" such as Globex, Initech or Umbrella.\nDo not discuss salaries or layoffs."
	first := Compile(content)
	for range 20 {
		if diff := cmp.Diff(first, Compile(content)); diff != "" {
			t.Fatalf("Compile is not deterministic (-first +now):\n%s", diff)
		}
	}
}
