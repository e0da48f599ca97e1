package docs

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/svc-gateway/svc/internal/compliance/detect"
	"github.com/svc-gateway/svc/internal/policy"
)

func TestSuggestPolicyDocument(t *testing.T) {
	doc, err := Extract(t.Context(), []byte(policyText))
	if err != nil {
		t.Fatal(err)
	}
	got := Suggest(doc)
	type brief struct {
		Name, Type, Framework, Section string
		Lines                          []string
		Priority                       int
		Confidence                     float64
	}
	var briefs []brief
	for _, s := range got {
		if !strings.HasPrefix(s.ID, "sug_") || len(s.ID) != 20 {
			t.Errorf("ID %q, want sug_ and 16 hex digits", s.ID)
		}
		_, lines, _ := strings.Cut(s.Content, "\n\n")
		briefs = append(briefs, brief{s.Name, s.Type, s.RegulatoryFramework, s.Section,
			strings.Split(lines, "\n"), s.Priority, s.Confidence})
	}
	want := []brief{
		{"Customer Data: block ssn, credit card", "compliance", "GDPR", "2. Customer Data",
			[]string{"Detectors: SSN, CREDIT_CARD", "Action: block", "Applies to: prompt"}, 90, 0.9},
		{"Customer Data: redact email", "compliance", "GDPR", "2. Customer Data",
			[]string{"Detectors: EMAIL", "Action: redact", "Applies to: prompt"}, 80, 0.9},
		{"Credentials: block api key, jwt, secret", "security", "GDPR", "3. Credentials",
			[]string{"Detectors: API_KEY, JWT, SECRET", "Action: block", "Applies to: prompt"}, 90, 0.9},
		{"Incidents: flag email, phone, person, …", "compliance", "GDPR", "4. Incidents",
			[]string{"Detectors: EMAIL, PHONE, PERSON, DATE_OF_BIRTH", "Action: flag", "Applies to: answer"}, 50, 0.55},
		{"Good Practice: flag this rule", "compliance", "GDPR", "5. Good Practice",
			[]string{"Action: flag", "Applies to: prompt"}, 20, 0.25},
	}
	if diff := cmp.Diff(want, briefs); diff != "" {
		t.Errorf("Suggest(policy) mismatch (-want +got):\n%s", diff)
	}
	if again := Suggest(doc); !cmp.Equal(got, again) {
		t.Errorf("Suggest is not deterministic:\n%v\n%v", got, again)
	}
	if !strings.HasPrefix(got[0].Content, "Employees must not enter social security numbers") {
		t.Errorf("Content = %q, want the rule in the document's words first", got[0].Content)
	}
}

func TestSuggestGroupsBySection(t *testing.T) {
	doc := Document{Type: FormatTXT, Sections: []Section{
		{Heading: "3.4 Cardholder Data", Paragraphs: []string{
			"Card numbers must never be entered into chat tools. PANs shall not be disclosed in prompts. " +
				"Under PCI DSS Requirement 3.4, stored card numbers must be truncated.",
			"This section has background only.",
		}},
		{Heading: "Patients", Paragraphs: []string{
			"Protected health information may only be shared with covered entities.",
		}},
	}}
	got := Suggest(doc)
	if len(got) != 3 {
		t.Fatalf("Suggest = %d suggestions, want 3: %+v", len(got), got)
	}
	block := got[0]
	if !strings.Contains(block.Content, "Card numbers must never be entered into chat tools. PANs shall not be disclosed in prompts.") {
		t.Errorf("the section's two block rules are not merged: %q", block.Content)
	}
	checks := []struct{ name, got, want string }{
		{"block name", block.Name, "Cardholder Data: block credit card"},
		{"block framework", block.RegulatoryFramework, "PCI DSS"},
		{"redact name", got[1].Name, "Cardholder Data: redact credit card"},
		{"HIPAA framework", got[2].RegulatoryFramework, "HIPAA"},
		{"may only with data is a block", lineOf(got[2].Content, "Action:"), "Action: block"},
		{"health data detectors", lineOf(got[2].Content, "Detectors:"), "Detectors: SSN, PERSON, DATE_OF_BIRTH"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}

func lineOf(content, prefix string) string {
	for line := range strings.Lines(content) {
		if strings.HasPrefix(line, prefix) {
			return strings.TrimSpace(line)
		}
	}
	return ""
}

func TestAnalyse(t *testing.T) {
	tests := []struct {
		sentence  string
		ok        bool
		action    policy.Action
		scope     policy.Scope
		detectors []detect.Type
		minConf   float64
		maxConf   float64
	}{
		{"The sky is blue.", false, "", "", nil, 0, 0},
		{"Social security numbers must not be sent to any model.", true, policy.ActionBlock, policy.ScopePrompt, []detect.Type{detect.SSN}, 0.85, 0.95},
		{"Phone numbers in generated answers must be redacted.", true, policy.ActionRedact, policy.ScopeAnswer, []detect.Type{detect.Phone}, 0.85, 0.95},
		{"Sharing customer data is prohibited.", true, policy.ActionBlock, policy.ScopePrompt, nil, 0.55, 0.65},
		{"Users should report suspicious answers.", true, policy.ActionFlag, policy.ScopeAnswer, nil, 0.35, 0.45},
		{"Teams should consider the guidance.", true, policy.ActionFlag, policy.ScopeBoth, nil, 0.2, 0.3},
		{"Private keys are not permitted in prompts.", true, policy.ActionBlock, policy.ScopePrompt, []detect.Type{detect.PrivateKey}, 0.85, 0.95},
		{"Never include an IBAN.", true, policy.ActionBlock, policy.ScopeBoth, []detect.Type{detect.IBAN}, 0.85, 0.95},
	}
	for _, tt := range tests {
		t.Run(tt.sentence, func(t *testing.T) {
			o, ok := analyse(tt.sentence, "")
			if ok != tt.ok {
				t.Fatalf("analyse ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if o.action != tt.action || o.scope != tt.scope {
				t.Errorf("action, scope = %s, %s; want %s, %s", o.action, o.scope, tt.action, tt.scope)
			}
			if diff := cmp.Diff(tt.detectors, o.detectors); diff != "" {
				t.Errorf("detectors (-want +got):\n%s", diff)
			}
			if o.conf < tt.minConf || o.conf > tt.maxConf {
				t.Errorf("confidence %v, want in [%v, %v]", o.conf, tt.minConf, tt.maxConf)
			}
		})
	}
}

func TestSentences(t *testing.T) {
	got := sentences("Data must be kept, e.g. in the EU. See Art. 5 GDPR. Done! Next? yes; Final")
	want := []string{"Data must be kept, e.g. in the EU.", "See Art. 5 GDPR.", "Done!", "Next? yes;", "Final"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("sentences (-want +got):\n%s", diff)
	}
}

func TestSuggestBounds(t *testing.T) {
	para := strings.Repeat("Staff must not share passwords. ", 50)
	var secs []Section
	for i := range 400 {
		secs = append(secs, Section{Heading: strings.Repeat("x", i%3+1) + string(rune('a'+i%26)), Paragraphs: []string{para}})
	}
	got := Suggest(Document{Sections: secs})
	if len(got) != maxSuggestions {
		t.Errorf("Suggest = %d suggestions, want the cap %d", len(got), maxSuggestions)
	}
	if n := strings.Count(got[0].Content, "must not"); n != maxSentencesPerRule {
		t.Errorf("a suggestion merges %d sentences, want the cap %d", n, maxSentencesPerRule)
	}
	if s := Suggest(Document{}); s == nil || len(s) != 0 {
		t.Errorf("Suggest(empty) = %#v, want an empty non-nil slice", s)
	}
}
