package compliance_test

import (
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/compliance/detect"
	"github.com/svc-gateway/svc/internal/compliance/quality"
)

// knownShort are the held-out targets the detectors do not meet yet, with
// the figure measured when this was written: a floor the figure may not
// fall under (a ceiling it may not rise over, for the rates of
// lowerIsBetter). A target met since is caught too (the entry must go), so the
// list stays true. See docs/benchmarks.md, "Compliance quality".
var knownShort = map[string]float64{
	// The fresh set (quality/testdata/injection_fresh_heldout.jsonl:
	// CyberSecEval's prompt injections and false-refusal prompts, 379
	// attacks and 496 benign rows, chosen by a rule fixed before any
	// detector ran on them), measured once when it was added, the detector
	// as of main 5efec3c: precision 0.965, recall 0.219 (83 of 379), F1
	// 0.3570, ROC-AUC 0.430; 0.8% of its 400 security-adjacent rows
	// flagged (met). Its rows and its figures by kind are never tuned on.
	// Then once with the learned blend (compliance.DefaultInjection, chosen
	// on a public dev set, by a rule written down before this measurement):
	// precision 0.922, recall 0.251, F1 0.3938, ROC-AUC 0.700, 2.0% of the
	// 400 security-adjacent rows flagged.
	"fresh-injection F1": 0.393,
}

// lowerIsBetter are the figures of knownShort that are rates to keep low:
// their entry is a ceiling the figure may not rise over.
var lowerIsBetter = map[string]bool{
	"fresh-injection security-adjacent-FP": true,
}

// TestQualityHeldOut is the compliance quality command:
//
//	go test -v -run TestQualityHeldOut ./internal/compliance/
//
// prints span-level precision, recall and F1 per type, the false-positive
// rate on hard negatives and the injection detector's precision, recall,
// F1 and ROC-AUC on the held-out split (never tuned on), and holds them to
// the targets.
func TestQualityHeldOut(t *testing.T) {
	e, err := compliance.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	inj := compliance.DefaultInjection
	var report strings.Builder
	s, err := quality.Run(&report, e.Findings, inj.Score)
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + report.String())
	if s.Fresh.Rows == 0 {
		t.Fatal("the fresh held-out set was not measured")
	}
	figures := map[string]float64{
		"CREDIT_CARD recall":                   s.Spans.PerType[detect.CreditCard].Recall(),
		"injection F1":                         s.Injection.F1,
		"public-injection F1":                  s.Public.F1,
		"fresh-injection F1":                   s.Fresh.F1,
		"fresh-injection security-adjacent-FP": s.Fresh.SecurityAdjacentFPRate,
	}
	for _, u := range s.Unmet() {
		name := unmetName(u)
		bound, known := knownShort[name]
		if !known {
			t.Errorf("target not met: %s", u)
			continue
		}
		got := figures[name]
		switch {
		case lowerIsBetter[name] && got > bound+1e-9:
			t.Errorf("%s rose to %.3f, over the %.3f measured before: %s", name, got, bound, u)
		case !lowerIsBetter[name] && got < bound-1e-9:
			t.Errorf("%s fell to %.3f, under the %.3f measured before: %s", name, got, bound, u)
		}
	}
	// Texts that carry personal data or secrets but no instruction (support
	// tickets, config files, pasted keys) must not read as attacks either.
	pii, err := quality.LoadExamples("testdata/pii_heldout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	flagged := 0
	for _, ex := range pii {
		if inj.Score(ex.Text) >= 0.5 {
			flagged++
		}
	}
	if rate := float64(flagged) / float64(len(pii)); rate > quality.TargetHardNegFP {
		t.Errorf("%d of %d held-out PII texts (%.1f%%) read as prompt injection, want <= %.0f%%", flagged, len(pii), 100*rate, 100*quality.TargetHardNegFP)
	} else {
		t.Logf("held-out PII texts read as prompt injection: %d of %d", flagged, len(pii))
	}
	for name := range knownShort {
		met := true
		for _, u := range s.Unmet() {
			if unmetName(u) == name {
				met = false
			}
		}
		if met {
			t.Errorf("%s now meets its target (%.3f): remove it from knownShort and the docs' list of gaps", name, figures[name])
		}
	}
}

// unmetName is the figure an Unmet sentence is about: "CREDIT_CARD recall
// 0.889, want >= 0.98" → "CREDIT_CARD recall".
func unmetName(u string) string {
	f := strings.Fields(u)
	if len(f) < 2 {
		return u
	}
	return f[0] + " " + f[1]
}
