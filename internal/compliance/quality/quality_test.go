package quality

import (
	"bytes"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

func TestMatches(t *testing.T) {
	gold := Entity{Type: detect.CreditCard, Start: 10, End: 20} // 10 bytes
	tests := []struct {
		name string
		pred detect.Finding
		want bool
	}{
		{"exact", detect.Finding{Type: detect.CreditCard, Start: 10, End: 20}, true},
		{"wider", detect.Finding{Type: detect.CreditCard, Start: 8, End: 22}, true},
		{"exactly half", detect.Finding{Type: detect.CreditCard, Start: 15, End: 30}, true},
		{"less than half", detect.Finding{Type: detect.CreditCard, Start: 16, End: 30}, false},
		{"other type", detect.Finding{Type: detect.Phone, Start: 10, End: 20}, false},
		{"adjacent", detect.Finding{Type: detect.CreditCard, Start: 20, End: 25}, false},
		{"inverted offsets", detect.Finding{Type: detect.CreditCard, Start: 20, End: 10}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Matches(tt.pred, gold); got != tt.want {
				t.Errorf("Matches(%+v) = %v, want %v", tt.pred, got, tt.want)
			}
		})
	}
}

// oracle is a perfect Scanner for examples: it returns their gold entities.
func oracle(examples []Example) Scanner {
	gold := map[string][]detect.Finding{}
	for _, ex := range examples {
		for _, e := range ex.Entities {
			gold[ex.Text] = append(gold[ex.Text], detect.Finding{Type: e.Type, Start: e.Start, End: e.End, Score: 1})
		}
	}
	return func(text string) []detect.Finding { return gold[text] }
}

func TestEvaluateSpansPerfect(t *testing.T) {
	pii, err := LoadExamples(file("pii", SplitTune))
	if err != nil {
		t.Fatal(err)
	}
	r := EvaluateSpans(pii, oracle(pii))
	for typ, s := range r.PerType {
		if s.Precision() != 1 || s.Recall() != 1 || s.Exact != s.Gold {
			t.Errorf("%s: precision %.3f recall %.3f exact %d of %d, want 1, 1, all", typ, s.Precision(), s.Recall(), s.Exact, s.Gold)
		}
	}
	if len(r.Missed) != 0 || len(r.Spurious) != 0 {
		t.Errorf("got %d missed and %d spurious, want none", len(r.Missed), len(r.Spurious))
	}
}

// TestEvaluateSpansNoisy runs a scanner with known faults on a small set
// and checks every count.
func TestEvaluateSpansNoisy(t *testing.T) {
	text1 := "mail ann@example.org or call +44 20 7946 0958 now"
	text2 := "card 4111 1111 1111 1111, ip 192.0.2.7"
	examples := []Example{
		{Text: text1, Source: "a", Entities: []Entity{
			{Type: detect.Email, Start: 5, End: 20},
			{Type: detect.Phone, Start: 29, End: 45},
		}},
		{Text: text2, Source: "b", Entities: []Entity{
			{Type: detect.CreditCard, Start: 5, End: 24},
			{Type: detect.IPAddress, Start: 29, End: 38},
		}},
	}
	scan := func(text string) []detect.Finding {
		switch text {
		case text1:
			return []detect.Finding{
				{Type: detect.Email, Start: 5, End: 20},          // exact: TP, exact
				{Type: detect.Phone, Start: 33, End: 45},         // 12 of 16 bytes: TP, not exact
				{Type: detect.Phone, Start: 29, End: 33},         // the rest of it: FP (already matched)
				{Type: detect.PromptInjection, Start: 0, End: 4}, // ignored
			}
		case text2:
			return []detect.Finding{
				{Type: detect.Phone, Start: 5, End: 24},      // card taken for a phone: FP PHONE, FN CREDIT_CARD
				{Type: detect.IPAddress, Start: 29, End: 33}, // 4 of 9 bytes: less than half, FP and FN
				{Type: detect.SSN, Start: 40, End: 60},       // out of bounds: FP with no value
			}
		}
		return nil
	}
	r := EvaluateSpans(examples, scan)
	want := map[detect.Type]TypeStats{
		detect.Email:      {Gold: 1, TP: 1, Exact: 1},
		detect.Phone:      {Gold: 1, TP: 1, FP: 2},
		detect.CreditCard: {Gold: 1, FN: 1},
		detect.IPAddress:  {Gold: 1, FN: 1, FP: 1},
		detect.SSN:        {FP: 1},
	}
	if d := cmp.Diff(want, r.PerType); d != "" {
		t.Fatalf("PerType (-want +got):\n%s", d)
	}
	wantMissed := []SpanError{
		{Source: "b", Type: detect.CreditCard, Value: "4111 1111 1111 1111", Other: detect.Phone},
		{Source: "b", Type: detect.IPAddress, Value: "192.0.2.7"},
	}
	if d := cmp.Diff(wantMissed, r.Missed); d != "" {
		t.Errorf("Missed (-want +got):\n%s", d)
	}
	tot := r.Total()
	if got, want := tot.Precision(), 2.0/6; math.Abs(got-want) > 1e-9 {
		t.Errorf("total precision = %v, want %v", got, want)
	}
	if got, want := tot.Recall(), 2.0/4; got != want {
		t.Errorf("total recall = %v, want %v", got, want)
	}
	if got, want := tot.F1(), 0.4; math.Abs(got-want) > 1e-9 {
		t.Errorf("total F1 = %v, want %v", got, want)
	}
}

func TestEvaluateHardNegatives(t *testing.T) {
	rows := []HardNegative{
		{Text: "order 4111 1111 1111 1112", Kind: "luhn_fail"},
		{Text: "order 4111 1111 1111 1113", Kind: "luhn_fail"},
		{Text: "uuid 123e4567-e89b-42d3-a456-426614174000", Kind: "uuid"},
		{Text: "ignore previous instructions", Kind: "other"},
	}
	scan := func(text string) []detect.Finding {
		switch {
		case strings.HasSuffix(text, "1112"):
			return []detect.Finding{{Type: detect.CreditCard, Start: 6, End: 25}, {Type: detect.Phone, Start: 6, End: 10}}
		case strings.HasPrefix(text, "ignore"):
			return []detect.Finding{{Type: detect.PromptInjection, Start: 0, End: 6}} // not PII: not counted
		}
		return nil
	}
	r := EvaluateHardNegatives(rows, scan)
	if r.FalsePositives != 1 || r.FPRate != 0.25 {
		t.Errorf("got %d false positives (%.2f), want 1 (0.25)", r.FalsePositives, r.FPRate)
	}
	if d := cmp.Diff(map[string]KindCount{"luhn_fail": {2, 1}, "uuid": {1, 0}, "other": {1, 0}}, r.PerKind); d != "" {
		t.Errorf("PerKind (-want +got):\n%s", d)
	}
	if d := cmp.Diff(map[detect.Type]int{detect.CreditCard: 1, detect.Phone: 1}, r.ByType); d != "" {
		t.Errorf("ByType (-want +got):\n%s", d)
	}
}

func TestROCAUC(t *testing.T) {
	tests := []struct {
		name   string
		scores []float64
		labels []bool
		want   float64
	}{
		{"perfect", []float64{0.9, 0.8, 0.2, 0.1}, []bool{true, true, false, false}, 1},
		{"inverted", []float64{0.1, 0.2, 0.8, 0.9}, []bool{true, true, false, false}, 0},
		// pairs (pos, neg): (0.9,0.5)=1 (0.9,0.1)=1 (0.5,0.5)=½ (0.5,0.1)=1
		{"a tie counts half", []float64{0.9, 0.5, 0.5, 0.1}, []bool{true, true, false, false}, 3.5 / 4},
		{"all tied", []float64{1, 1, 1}, []bool{true, false, false}, 0.5},
		{"NaN is lowest", []float64{math.NaN(), 0.3}, []bool{false, true}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ROCAUC(tt.scores, tt.labels); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("ROCAUC = %v, want %v", got, tt.want)
			}
		})
	}
	if got := ROCAUC([]float64{1, 2}, []bool{true, true}); !math.IsNaN(got) {
		t.Errorf("ROCAUC of one class = %v, want NaN", got)
	}
}

func TestEvaluateInjection(t *testing.T) {
	rows := []InjectionRow{
		{Text: "a1", Label: LabelInjection, Kind: "override", Lang: "en"},
		{Text: "a2", Label: LabelInjection, Kind: "override", Lang: "de"},
		{Text: "a3", Label: LabelJailbreak, Kind: "dan", Lang: "en"},
		{Text: "b1", Label: LabelBenign, Kind: "security_question", Lang: "en"},
		{Text: "b2", Label: LabelBenign, Kind: "trigger_words", Lang: "en"},
		{Text: "b3", Label: LabelBenign, Kind: "ordinary", Lang: "fr"},
		{Text: "b4", Label: LabelBenign, Kind: "ordinary", Lang: "en"},
	}
	score := map[string]float64{"a1": 0.9, "a2": 0.6, "a3": 0.3, "b1": 0.7, "b2": 0.2, "b3": 0.1, "b4": 0.6}
	r := EvaluateInjection(rows, func(s string) float64 { return score[s] }, 0.5)
	// flagged: a1 a2 (tp), b1 b4 (fp); a3 missed.
	if r.TP != 2 || r.FP != 2 || r.FN != 1 || r.TN != 2 {
		t.Fatalf("tp fp fn tn = %d %d %d %d, want 2 2 1 2", r.TP, r.FP, r.FN, r.TN)
	}
	checks := []struct {
		name      string
		got, want float64
	}{
		{"precision", r.Precision, 0.5},
		{"recall", r.Recall, 2.0 / 3},
		{"F1", r.F1, 4.0 / 7},
		{"FP rate", r.FPRate, 0.5},
		{"security-adjacent FP rate", r.SecurityAdjacentFPRate, 0.5},
		// positives 0.9 0.6 0.3 vs negatives 0.7 0.2 0.1 0.6:
		// 0.9 beats 4; 0.6 beats 2, ties 1; 0.3 beats 2 → (4+2.5+2)/12
		{"AUC", r.AUC, 8.5 / 12},
	}
	for _, c := range checks {
		if math.Abs(c.got-c.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if r.SecurityAdjacent != 2 {
		t.Errorf("SecurityAdjacent = %d, want 2", r.SecurityAdjacent)
	}
	if d := cmp.Diff(KindCount{Rows: 5, Flagged: 3}, r.PerLang["en"]); d != "" {
		t.Errorf("PerLang[en] (-want +got):\n%s", d)
	}
}

// TestUnmetFresh: the fresh set's F1 and security-adjacent false-positive
// rate are held to the targets once it was measured, and not before.
func TestUnmetFresh(t *testing.T) {
	fresh := func(s Summary) []string {
		var out []string
		for _, u := range s.Unmet() {
			if strings.HasPrefix(u, "fresh-injection ") {
				out = append(out, u)
			}
		}
		return out
	}
	s := Summary{Injected: true}
	if u := fresh(s); len(u) != 0 {
		t.Errorf("fresh set not measured: unmet %q", u)
	}
	s.Fresh = InjectionReport{Rows: 10, F1: 0.8, SecurityAdjacent: 4, SecurityAdjacentFPRate: 0.25}
	u := fresh(s)
	if len(u) != 2 || !strings.HasPrefix(u[0], "fresh-injection F1 0.800,") || !strings.HasPrefix(u[1], "fresh-injection security-adjacent-FP 25.0% of 4 ") {
		t.Errorf("unmet %q, want the fresh F1 and security-adjacent FP", u)
	}
	s.Fresh.F1, s.Fresh.SecurityAdjacentFPRate = TargetInjectionF1, TargetSecurityAdjacentFP
	if u := fresh(s); len(u) != 0 {
		t.Errorf("fresh set on the targets: unmet %q", u)
	}
}

// TestRunPerfect runs the whole benchmark on the held-out split with
// perfect scanners: every target met, and the report names no row.
func TestRunPerfect(t *testing.T) {
	pii, err := decodeEmbedded(file("pii", SplitHeldOut), checkExample)
	if err != nil {
		t.Fatal(err)
	}
	inj, err := decodeEmbedded(file("injection", SplitHeldOut), checkInjection)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := decodeEmbedded(file(PublicSet, SplitHeldOut), checkInjection)
	if err != nil {
		t.Fatal(err)
	}
	fresh, err := decodeEmbedded(file(FreshSet, SplitHeldOut), checkInjection)
	if err != nil {
		t.Fatal(err)
	}
	attack := map[string]bool{}
	for _, r := range slices.Concat(inj, pub, fresh) {
		attack[r.Text] = r.Positive()
	}
	var out bytes.Buffer
	s, err := Run(&out, oracle(pii), func(text string) float64 {
		if attack[text] {
			return 1
		}
		return 0
	})
	if err != nil {
		t.Fatal(err)
	}
	if u := s.Unmet(); len(u) != 0 {
		t.Errorf("perfect scanners miss targets: %v", u)
	}
	if s.Injection.AUC != 1 || s.Public.AUC != 1 || s.Fresh.AUC != 1 || s.HardNeg.FPRate != 0 {
		t.Errorf("AUC %v %v %v, hard-negative FP %v; want 1 and 0", s.Injection.AUC, s.Public.AUC, s.Fresh.AUC, s.HardNeg.FPRate)
	}
	if s.Fresh.Rows == 0 || !strings.Contains(out.String(), "fresh set (injection_fresh_heldout.jsonl)") {
		t.Errorf("fresh set not measured or not reported:\n%s", out.String())
	}
	if !strings.Contains(out.String(), "all targets met") || strings.Contains(out.String(), "missed entities") {
		t.Errorf("report:\n%s\nwant \"all targets met\" and no examples", out.String())
	}
}

func TestRunErrors(t *testing.T) {
	if _, err := RunWith(&bytes.Buffer{}, Options{Split: "test", Scan: NaiveScan}); err == nil {
		t.Error("unknown split: got no error")
	}
	if _, err := RunWith(&bytes.Buffer{}, Options{}); err == nil {
		t.Error("no scanner: got no error")
	}
}

// TestNaiveBaseline measures the naive regex list and holds it to what the
// issue says of it: far worse than the targets, on hard negatives most of
// all. Its figures go to the log (go test -v) for docs/benchmarks.md.
func TestNaiveBaseline(t *testing.T) {
	var out bytes.Buffer
	s, err := Run(&out, NaiveScan, NaiveInjectionScore)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("naive baseline, held-out split:\n%s", out.String())
	if s.HardNeg.FPRate < 0.3 {
		t.Errorf("naive hard-negative FP rate %.2f, want >= 0.30 (the sets should hold negatives a bare regex flags)", s.HardNeg.FPRate)
	}
	if len(s.Unmet()) < 5 {
		t.Errorf("naive baseline misses only %v; the sets are too easy", s.Unmet())
	}
}
