package injection

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
)

// devPublic is the public dev set (testdata/README.md): prompts and benign
// look-alikes from repositories nothing else here is trained or tuned on.
const devPublic = "testdata/dev_public.jsonl"

// devReport formats a scorer's figures on rows: overall, then per kind and
// per source repository.
func devReport(score func(string) float64, rows []labelled) (metrics, string) {
	var b strings.Builder
	all := evaluateScores(score, rows)
	fmt.Fprintf(&b, "  all: %s\n", devLine(all))
	for _, by := range []struct {
		name string
		key  func(labelled) string
	}{
		{"kind", func(r labelled) string { return r.Label + "/" + r.Kind }},
		{"source", func(r labelled) string { repo, _, _ := strings.Cut(r.Source, ":"); return repo }},
		{"lang", func(r labelled) string { return r.Lang }},
	} {
		groups := map[string][]labelled{}
		for _, r := range rows {
			groups[by.key(r)] = append(groups[by.key(r)], r)
		}
		keys := make([]string, 0, len(groups))
		for k := range groups {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			m := evaluateScores(score, groups[k])
			fmt.Fprintf(&b, "  %s %s (%d): %s\n", by.name, k, len(groups[k]), devLine(m))
		}
	}
	return all, b.String()
}

// devLine is one line of figures: for a group with both labels precision,
// recall, F1 and ROC-AUC; for attacks only the recall; for benign rows only
// the false alarms.
func devLine(m metrics) string {
	pos, neg := m.tp+m.fn, m.fp+m.tn
	switch {
	case pos > 0 && neg > 0:
		return fmt.Sprintf("P %.3f R %.3f F1 %.3f AUC %.3f (tp %d fp %d fn %d tn %d); security-adjacent FP %d/%d",
			m.precision(), m.recall(), m.f1(), m.auc, m.tp, m.fp, m.fn, m.tn, m.adjFP, m.adj)
	case pos > 0:
		return fmt.Sprintf("recall %.3f (%d of %d)", m.recall(), m.tp, pos)
	default:
		return fmt.Sprintf("false alarms %d of %d", m.fp, neg)
	}
}

// TestDevPublic reports the rules and the learned blend on the public dev
// set, overall, per kind, per source and per language. It logs no rows. It
// fails when a figure falls under the floor recorded when the configuration
// was chosen (testdata/README.md), a regression floor rather than the
// issue's target (F1 >= 0.90, <= 5 % security-adjacent false alarms).
func TestDevPublic(t *testing.T) {
	rows := loadLabelled(t, devPublic)
	if len(rows) == 0 {
		t.Fatal("empty dev set")
	}
	for _, c := range []struct {
		name  string
		d     Detector
		floor float64
	}{
		{"rules", Detector{}, devFloorRules},
		{"learned", Detector{Learned: true}, devFloorLearned},
	} {
		m, report := devReport(c.d.Score, rows)
		t.Logf("%s on %s (%d rows):\n%s", c.name, devPublic, len(rows), report)
		if m.f1() < c.floor {
			t.Errorf("%s: dev F1 %.3f, want >= %.2f", c.name, m.f1(), c.floor)
		}
	}
}

// Dev F1 floors: the figures measured after the rows near a held-out row
// were dropped from the dev set (1) and the training rows (22) and the
// learned component retrained (rules 0.369, learned 0.538; before the drop
// 0.375 and 0.551), and for the learned component after the later rounds
// of public training rows were tried and not committed (the eighth round's
// choice, 0.551 on dev, lowered two held-out targets), rounded down; see
// testdata/README.md.
const (
	devFloorRules   = 0.365
	devFloorLearned = 0.535
)

// TestDiagBenign holds the learned blend's false alarms on the benign
// diagnostic set (testdata/diag_benign.jsonl: the odd halves of four benign
// public sets, never trained on) to the count the committed learned.bin
// has (40 of 380; the eighth round's choice, not committed, had 18), and keeps the
// benchmark's long ordinary texts under the threshold (the fifth round's
// learned.bin scored 8 KB of meeting notes 0.93). It logs no rows.
func TestDiagBenign(t *testing.T) {
	d := Detector{Learned: true}
	rows := loadLabelled(t, diagBenign)
	if len(rows) == 0 {
		t.Fatal("empty diagnostic set")
	}
	m := evaluateWith(d, rows)
	t.Logf("learned: %d false alarms of %d", m.fp, len(rows))
	if m.fp > diagCeiling {
		t.Errorf("learned: %d false alarms on the benign diagnostic set, want <= %d", m.fp, diagCeiling)
	}
	for _, c := range longTexts() {
		if s := d.Score(c.text); s >= DefaultThreshold {
			t.Errorf("learned: %s of ordinary text scores %.3f, want < %.2f", c.name, s, DefaultThreshold)
		}
	}
}

// diagBenign is the benign diagnostic set: the odd halves of four benign
// public sets, never trained on.
const diagBenign = "testdata/diag_benign.jsonl"

// diagCeiling is the committed learned blend's false alarms on
// diag_benign.jsonl.
const diagCeiling = 40

// namedText is a text to score and its name in reports.
type namedText struct{ name, text string }

// longTexts are the benchmark's long ordinary texts (bench_test.go), which
// the learned blend must score under the threshold.
func longTexts() []namedText {
	return []namedText{
		{"notes 4 KB", fill(prose, 4096)},
		{"notes 8 KB", fill(prose, 8192)},
		{"code/URLs 4 KB", fill(mixed, 4096)},
		{"code/URLs 8 KB", fill(mixed, 8192)},
	}
}

// scorerOf is the learned blend's Score with the weights file w.
func scorerOf(t *testing.T, w []byte) func(string) float64 {
	t.Helper()
	m, err := decodeLearned(w)
	if err != nil {
		t.Fatal(err)
	}
	return func(text string) float64 {
		sc := getScanner()
		defer putScanner(sc)
		sc.scan(text, 0)
		return sc.blended(m)
	}
}

// publicSubset is train_public.jsonl's rows whose source repository is not
// in drop, as a training set.
func publicSubset(t *testing.T, drop ...string) TrainSet {
	t.Helper()
	return publicKeep(t, notFrom(drop))
}

// publicKeep is train_public.jsonl's rows that keep accepts, as a
// training set.
func publicKeep(t *testing.T, keep rowFilter) TrainSet {
	t.Helper()
	raw, err := os.ReadFile("testdata/" + publicTrainSet)
	if err != nil {
		t.Fatal(err)
	}
	return TrainSet{Name: publicTrainSet, Data: keepRows(t, raw, keep)}
}

// A rowFilter accepts a training row given its source repository (its
// source up to the colon), its source and whether it is benign.
type rowFilter func(repo, source string, benign bool) bool

// notFrom accepts the rows whose source repository is not in drop.
func notFrom(drop []string) rowFilter {
	return func(repo, _ string, _ bool) bool { return !slices.Contains(drop, repo) }
}

// keepRows is the JSONL rows of data that keep accepts.
func keepRows(t *testing.T, data []byte, keep rowFilter) []byte {
	t.Helper()
	var out []byte
	for _, line := range strings.SplitAfter(string(data), "\n") {
		if line == "" {
			continue
		}
		var r struct{ Label, Source string }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		repo, _, _ := strings.Cut(r.Source, ":")
		if keep(repo, r.Source, r.Label == "benign") {
			out = append(out, line...)
		}
	}
	return out
}

// without is sets with the rows of the repositories in drop taken out of
// train_public.jsonl's set.
func without(t *testing.T, sets []TrainSet, drop ...string) []TrainSet {
	t.Helper()
	out := slices.Clone(sets)
	for i, s := range out {
		if s.Name == publicTrainSet {
			out[i] = TrainSet{Name: s.Name, Data: keepRows(t, s.Data, notFrom(drop))}
		}
	}
	return out
}

// evenSource reports whether the first byte of the SHA-256 of a row's
// source is even: the seventh round's training half of the benign sets
// (build_public.py); the odd half is testdata/diag_benign.jsonl.
func evenSource(source string) bool {
	return sha256.Sum256([]byte(source))[0]%2 == 0
}

// diagReport is a scorer's false alarms on the benign diagnostic set
// (diagBenign), per source, and its scores of the long ordinary texts.
func diagReport(t *testing.T, score func(string) float64) string {
	t.Helper()
	rows := loadLabelled(t, diagBenign)
	fp := 0
	by := map[string][2]int{}
	for _, r := range rows {
		repo, _, _ := strings.Cut(r.Source, ":")
		v := by[repo]
		v[1]++
		if score(r.Text) >= DefaultThreshold {
			v[0]++
			fp++
		}
		by[repo] = v
	}
	repos := make([]string, 0, len(by))
	for k := range by {
		repos = append(repos, k)
	}
	sort.Strings(repos)
	var parts, long []string
	for _, k := range repos {
		parts = append(parts, fmt.Sprintf("%s %d/%d", k, by[k][0], by[k][1]))
	}
	for _, c := range longTexts() {
		long = append(long, fmt.Sprintf("%s %.3f", c.name, score(c.text)))
	}
	return fmt.Sprintf("diag_benign false alarms %d/%d (%s); long texts: %s",
		fp, len(rows), strings.Join(parts, ", "), strings.Join(long, ", "))
}

// bestF1 is the highest F1 over all thresholds: how well the scores rank,
// had the threshold been tuned on the dev set (a diagnostic, not a figure
// to choose by).
func bestF1(score func(string) float64, rows []labelled) (float64, float64) {
	type sp struct {
		s   float64
		pos bool
	}
	var all []sp
	npos := 0
	for _, r := range rows {
		p := r.Label != "benign"
		all = append(all, sp{score(r.Text), p})
		if p {
			npos++
		}
	}
	sort.Slice(all, func(i, j int) bool { return all[i].s > all[j].s })
	best, at, tp := 0.0, 1.0, 0
	for i, x := range all {
		if x.pos {
			tp++
		}
		if i+1 < len(all) && all[i+1].s == x.s {
			continue
		}
		if f := 2 * float64(tp) / float64(i+1+npos); f > best {
			best, at = f, x.s
		}
	}
	return best, at
}

// TestDevVariants trains the learned component in variants (training sets,
// hyper-parameters) and reports each on the public dev set; with
// INJ_DEV_VARIANTS=1 only, as it trains a dozen models. It is how the
// configuration in testdata/README.md was chosen.
func TestDevVariants(t *testing.T) {
	if os.Getenv("INJ_DEV_VARIANTS") == "" {
		t.Skip("set INJ_DEV_VARIANTS=1 to train and compare the variants")
	}
	rows := loadLabelled(t, devPublic)
	quality, sets := os.DirFS("../quality/testdata"), os.DirFS("testdata")
	base, err := TrainingSets(quality, sets)
	if err != nil {
		t.Fatal(err)
	}
	// base without train_public.jsonl, which TrainingSets reads.
	base = slices.DeleteFunc(base, func(s TrainSet) bool { return s.Name == publicTrainSet })
	plus := func(drop ...string) []TrainSet { return append(slices.Clone(base), publicSubset(t, drop...)) }
	d := defaultTrainConfig // 12 epochs, at which the variants were compared
	with := func(f func(*trainConfig)) trainConfig { c := d; f(&c); return c }
	onAll := with(func(c *trainConfig) { c.blendOn = "" })
	gen8 := with(func(c *trainConfig) { c.blendOn = "generalise8.jsonl" })
	// The later rounds' sources (testdata/README.md), by repository. The
	// tables there were measured on train_public.jsonl as `build_public.py
	// --all` writes it; the committed file holds the chosen sources' rows,
	// with which a variant that leaves out a source not chosen is another
	// variant again.
	awesome, selfInstruct, inception := "f/awesome-chatgpt-prompts", "yizhongw/self-instruct", "tmlr-group/DeepInception"
	smooth, greshake, persuade := "arobey1/smooth-llm", "greshake/llm-security", "CHATS-lab/persuasive_jailbreaker"
	decodingTrust, redInstruct, chainguard := "AI-secure/DecodingTrust", "declare-lab/red-instruct", "lakeraai/chainguard"
	trustLLM, pallms, deepTeam := "HowieHwong/TrustLLM", "mik0w/pallms", "confident-ai/deepteam"
	cheatSheets := "OWASP/CheatSheetSeries"
	third := []string{decodingTrust, redInstruct, chainguard, trustLLM, pallms, deepTeam, cheatSheets}
	// upTo2 is the sets with the second round's rows but those of the
	// sources in drop, and no row of a later round.
	upTo2 := func(drop ...string) []TrainSet { return plus(append(slices.Clone(third), drop...)...) }
	// chosen2 is the second round's choice (its attacks) plus the later
	// rounds' rows but those of the sources in drop.
	chosen2 := func(drop ...string) []TrainSet {
		return plus(append([]string{awesome, selfInstruct, persuade}, drop...)...)
	}
	first := upTo2(awesome, selfInstruct, inception, smooth, greshake, persuade)
	// halves is the fifth round's choice plus the even halves of the
	// benign sets (seventh round), with or without awesome-chatgpt-prompts',
	// with or without the whole cheat sheets (ninth round; their sources
	// have no paragraph number).
	halvesFiles := func(withAwesome, withFiles bool) []TrainSet {
		set := publicKeep(t, func(repo, source string, benign bool) bool {
			switch repo {
			case awesome:
				return withAwesome && benign && evenSource(source)
			case cheatSheets:
				if !strings.Contains(source, "#para") {
					return withFiles
				}
				return benign && evenSource(source)
			case selfInstruct, persuade:
				return benign && evenSource(source)
			}
			return true
		})
		return append(slices.Clone(base), set)
	}
	halves := func(withAwesome bool) []TrainSet { return halvesFiles(withAwesome, false) }
	for _, v := range []struct {
		name string
		sets []TrainSet
		cfg  trainConfig
	}{
		{"first round (the learned.bin before the second round)", first, onAll},
		{"+ second round (every source)", upTo2(), onAll},
		{"+ second round without awesome-chatgpt-prompts", upTo2(awesome), onAll},
		{"+ second round without self-instruct", upTo2(selfInstruct), onAll},
		{"+ second round without DeepInception", upTo2(inception), onAll},
		{"+ second round without smooth-llm", upTo2(smooth), onAll},
		{"+ second round without llm-security", upTo2(greshake), onAll},
		{"+ second round without the persuasion examples", upTo2(persuade), onAll},
		{"+ second round's attacks only (the second round's choice)", upTo2(awesome, selfInstruct, persuade), onAll},
		{"+ second round, benign weight 1", upTo2(), with(func(c *trainConfig) { c.benignWeight = 1 })},
		{"+ second round, origin folds", upTo2(), with(func(c *trainConfig) { c.originFolds = true })},
		{"first round, blend on generalise8 (the earlier default)", first, gen8},
		{"second round's choice + third round (every source)", chosen2(trustLLM, pallms, deepTeam, cheatSheets), onAll},
		{"second round's choice + third round without DecodingTrust", chosen2(trustLLM, pallms, deepTeam, cheatSheets, decodingTrust), onAll},
		{"second round's choice + third round without red-instruct", chosen2(trustLLM, pallms, deepTeam, cheatSheets, redInstruct), onAll},
		{"second round's choice + third round without chainguard", chosen2(trustLLM, pallms, deepTeam, cheatSheets, chainguard), onAll},
		{"third round's choice + TrustLLM (fourth round)", chosen2(pallms, deepTeam, cheatSheets), onAll},
		{"fourth round's choice + fifth round (PALLMs and DeepTeam)", chosen2(cheatSheets), onAll},
		{"fourth round's choice + PALLMs", chosen2(deepTeam, cheatSheets), onAll},
		{"fourth round's choice + DeepTeam", chosen2(pallms, cheatSheets), onAll},
		{"fifth round's choice + OWASP cheat sheets (sixth round)", append(slices.Clone(base), publicKeep(t, func(repo, source string, _ bool) bool {
			switch repo {
			case awesome, selfInstruct, persuade:
				return false
			case cheatSheets:
				return strings.Contains(source, "#para")
			}
			return true
		})), onAll},
		{"fifth round's choice + the benign sets' even halves (seventh round)", halves(true), onAll},
		{"fifth round's choice + the benign sets' even halves but awesome-chatgpt-prompts", halves(false), onAll},
		{"seventh round's choice, benign weight 1 (eighth round)", halves(true), with(func(c *trainConfig) { c.benignWeight = 1 })},
		{"seventh round's choice, L2 1e-4", halves(true), with(func(c *trainConfig) { c.l2 = 1e-4 })},
		{"seventh round's choice, 24 epochs", halves(true), with(func(c *trainConfig) { c.epochs = 24 })},
		{"seventh round's choice without TrustLLM", without(t, halves(true), trustLLM), onAll},
		{"seventh round's choice without DeepTeam", without(t, halves(true), deepTeam), onAll},
		{"seventh round's choice without DecodingTrust", without(t, halves(true), decodingTrust), onAll},
		{"eighth round's choice + whole cheat sheets (ninth round)", halvesFiles(true, true), with(func(c *trainConfig) { c.epochs = 24 })},
		{"seventh round's choice + whole cheat sheets, 12 epochs", halvesFiles(true, true), onAll},
	} {
		res, err := trainLearned(v.sets, v.cfg)
		if err != nil {
			t.Fatal(err)
		}
		score := scorerOf(t, res.Weights)
		_, report := devReport(score, rows)
		bf, at := bestF1(score, rows)
		blend, _, _ := strings.Cut(res.Report, "\n")
		held := ""
		for _, name := range []string{"heldback9.jsonl", "heldback10.jsonl"} {
			m := evaluateScores(score, loadLabelled(t, "testdata/"+name))
			held += fmt.Sprintf("\n  %s (aggregate only): F1 %.3f P %.3f R %.3f security-adjacent FP %d/%d", name, m.f1(), m.precision(), m.recall(), m.adjFP, m.adj)
		}
		t.Logf("%s: %s; best-threshold F1 %.3f at %.3f\n  %s%s\n  %s\n%s", v.name, blend, bf, at, shiftReport(score, rows), held, diagReport(t, score), report)
	}
}

// shiftChoice is the intercept shift of the learned blend (in logit units,
// from shiftGrid) with the best F1 on rows whose security-adjacent false
// alarms stay at or under 5 %.
func shiftChoice(z []float64, rows []labelled, use func(int) bool) float64 {
	best, bestF := 0.0, -1.0
	for _, d := range shiftGrid {
		var m metrics
		for i, r := range rows {
			if !use(i) {
				continue
			}
			countRow(&m, r, z[i]+d >= 0)
		}
		if m.adjFPRate() <= 0.05 && m.f1() > bestF {
			best, bestF = d, m.f1()
		}
	}
	return best
}

var shiftGrid = []float64{0, -0.5, -1, -1.5, -2, -2.5, -3, -3.5, -4, -5}

// shiftReport is the intercept shift chosen on the whole dev set with its
// (optimistic) figures, and the honest estimate of choosing it so: each
// source's rows judged with the shift chosen on the other sources.
func shiftReport(score func(string) float64, rows []labelled) string {
	z := make([]float64, len(rows))
	src := make([]string, len(rows))
	for i, r := range rows {
		z[i] = ruleLogit(score(r.Text))
		src[i], _, _ = strings.Cut(r.Source, ":")
	}
	all := shiftChoice(z, rows, func(int) bool { return true })
	var in, loso metrics
	var picks []string
	for i, r := range rows {
		countRow(&in, r, z[i]+all >= 0)
	}
	seen := map[string]bool{}
	for _, s := range src {
		if seen[s] {
			continue
		}
		seen[s] = true
		d := shiftChoice(z, rows, func(i int) bool { return src[i] != s })
		picks = append(picks, fmt.Sprintf("%.1f", d))
		for i, r := range rows {
			if src[i] == s {
				countRow(&loso, r, z[i]+d >= 0)
			}
		}
	}
	return fmt.Sprintf("shift %.1f chosen on dev: F1 %.3f P %.3f R %.3f adjFP %d/%d; leave-one-source-out (shifts %s): F1 %.3f P %.3f R %.3f adjFP %d/%d",
		all, in.f1(), in.precision(), in.recall(), in.adjFP, in.adj, strings.Join(picks, " "), loso.f1(), loso.precision(), loso.recall(), loso.adjFP, loso.adj)
}
