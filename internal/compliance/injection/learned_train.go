package injection

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"math/rand/v2"
	"sort"
	"strings"

	"github.com/svc-gateway/svc/internal/compliance/portable"
)

// TrainSet is one labelled set the learned component is trained on: JSON
// lines with "text" and, optionally, "label" ("injection", "jailbreak",
// "benign") and "kind". A row without a label is benign (the PII and
// hard-negative sets).
type TrainSet struct {
	Name string
	Data []byte
}

// TrainResult is what TrainLearned produces.
type TrainResult struct {
	// Weights is learned.bin.
	Weights []byte
	// Report gives the cross-validated figures per set (out-of-fold
	// scores) of the rules, the classifier and the blend.
	Report string
}

// Training hyper-parameters; learnedTrainer enters the data hash.
const (
	learnedTrainer = "svc-inj-trainer/2"
	learnedSeed1   = 0x1badb002
	learnedSeed2   = 0x5eed
	learnedFolds   = 5
	learnedEpochs  = 12 // 24 with the eighth round of public rows, not committed (testdata/README.md)
	learnedRate    = 0.5
	learnedDecay   = 1e-3
	learnedL2      = 1e-5
	maxTrainRows   = 1 << 20
	// learnedBenignWeight weighs the injection sets' benign rows (questions
	// about security, trigger words) twice: a false alarm there costs more.
	learnedBenignWeight = 2
	// learnedBlendOn is the set the blend is fitted on (its out-of-fold
	// logits); "" for every row of every set. It was generalise8.jsonl, the
	// hand-written set the rules were least tuned on; on the public dev set
	// (testdata/dev_public.jsonl) a blend fitted on its 111 rows was the
	// steeper (b 10, c -5 with the public rows) and the worse: F1 0.532
	// against 0.551 fitted on all rows.
	learnedBlendOn = ""
)

// Chosen by 5-fold cross-validation on the training sets (pooled and on
// generalise8; heldback9 never read): with the rule features in the
// classifier and the benign rows weighted twice, the blend fitted on
// generalise8 had the fewest out-of-fold false alarms on security-adjacent
// text (4/325) at the pooled F1 of the others (0.983); a text-only
// classifier blended with the rules had 9/325 and a lower F1 on generalise8
// (0.931 against 0.937), the larger of rules and classifier 29/325.
//
// With the public training rows (train_public.jsonl) the variants were
// compared on the public dev set (TestDevVariants; testdata/README.md): the
// rows raise its ROC-AUC from 0.823 to 0.875 whatever the hyper-parameters
// (L2 1e-4 to 1e-6, 12 or 24 epochs, benign weight 1 to 4 all within two
// rows of each other), and the blend fitted on every set beat the one fitted
// on generalise8 (F1 0.551 against 0.532).
//
// Later rounds of public rows (testdata/README.md) were chosen by a rule
// fixed before each round: the dev F1 under conditions on false alarms, on
// the dev set's security documentation, the held-back sets and (from the
// seventh round) a benign diagnostic set and long ordinary texts. The
// eighth round chose 24 epochs over 12 (dev F1 0.556 against 0.551); the
// quality harness's gate refused that model, so the committed one is the
// first round's, at 12.

// example is one training row's features.
type example struct {
	words, chars []uint32
	dense        [numDense]float64
	zr           float64 // the rules' logit
	y            float64
	group        int // 0 attack, 1 benign of a labelled injection set, 2 other benign
	set, fold    int
	origin       string // the set's name and, for a public row, its repository
	adj          bool   // benign security-adjacent (security_question, trigger_words)
}

// TrainLearned trains the learned component on sets, in their order:
// logistic regression by SGD (a fixed-seed shuffle, a decaying rate, a
// little L2; each group — attacks, the injection sets' benign rows, other
// benign rows — weighted alike), then the blend's three parameters by
// Newton's method on out-of-fold logits (5 folds by a hash of the text),
// then the final weights on every row. It is deterministic: the same sets
// give the same bytes on any CPU (products are rounded explicitly, the
// exponential is portable). Sets whose name holds "heldback" or "heldout"
// are refused: they are for evaluation only.
func TrainLearned(sets []TrainSet) (*TrainResult, error) {
	return trainLearned(sets, defaultTrainConfig)
}

// trainConfig is the trainer's hyper-parameters.
type trainConfig struct {
	epochs          int
	rate, decay, l2 float64
	benignWeight    float64
	blendOn         string // the set the blend is fitted on; "" for all
	// originFolds: the out-of-fold logits the blend is fitted on come from
	// folds by origin (a set, or a public repository within a set) rather
	// than by a hash of the text, so that each row is scored by a model
	// that saw nothing of its source: the blend is calibrated for texts
	// unlike the training data.
	originFolds bool
}

// defaultTrainConfig is what TrainLearned uses.
var defaultTrainConfig = trainConfig{
	epochs: learnedEpochs, rate: learnedRate, decay: learnedDecay, l2: learnedL2,
	benignWeight: learnedBenignWeight, blendOn: learnedBlendOn,
}

// trainLearned is TrainLearned with the hyper-parameters cfg.
func trainLearned(sets []TrainSet, cfg trainConfig) (*TrainResult, error) {
	h := sha256.New()
	h.Write([]byte(learnedTrainer + "\x00"))
	var xs []example
	for si, set := range sets {
		if strings.Contains(set.Name, "heldback") || strings.Contains(set.Name, "heldout") {
			return nil, fmt.Errorf("injection: train: %s is an evaluation set", set.Name)
		}
		h.Write(binary.LittleEndian.AppendUint64([]byte(set.Name+"\x00"), uint64(len(set.Data))))
		h.Write(set.Data)
		rows, err := readTrainSet(set.Data, si)
		if err != nil {
			return nil, fmt.Errorf("injection: train: %s: %w", set.Name, err)
		}
		xs = append(xs, rows...)
		if len(xs) > maxTrainRows {
			return nil, errors.New("injection: train: too many rows")
		}
	}
	if len(xs) == 0 {
		return nil, errors.New("injection: train: no rows")
	}
	folds := learnedFolds
	if cfg.originFolds {
		folds = originFolds(xs)
	}
	// Out-of-fold classifier logits, for the blend and the report.
	oof := make([]float64, len(xs))
	for f := range folds {
		var train []int
		for i, x := range xs {
			if x.fold != f {
				train = append(train, i)
			}
		}
		w := fitLearned(xs, train, cfg)
		for i, x := range xs {
			if x.fold == f {
				oof[i] = logitOf(w, &x)
			}
		}
	}
	blend := fitBlend(xs, oof, blendSet(sets, cfg.blendOn))
	all := make([]int, len(xs))
	for i := range all {
		all[i] = i
	}
	w := fitLearned(xs, all, cfg)
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return &TrainResult{Weights: encodeLearned(w, blend, sum), Report: cvReport(sets, xs, oof, blend)}, nil
}

// readTrainSet parses one set's rows into examples.
func readTrainSet(raw []byte, set int) ([]example, error) {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64<<10), 4<<20)
	var out []example
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r struct{ Text, Label, Kind, Source string }
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		x := example{set: set, group: 2}
		switch r.Label {
		case "injection", "jailbreak":
			x.y, x.group = 1, 0
		case "benign":
			x.group = 1
			x.adj = securityAdjacent(r.Kind)
		case "":
		default:
			return nil, fmt.Errorf("line %d: unknown label %q", line, r.Label)
		}
		hf := fnv.New32a()
		hf.Write([]byte(r.Text))
		x.fold = int(hf.Sum32() % learnedFolds)
		x.origin = fmt.Sprint(set)
		if repo, _, ok := strings.Cut(r.Source, ":"); ok && strings.Contains(repo, "/") {
			x.origin += "|" + repo
		}
		s := getScanner()
		s.scan(r.Text, 0)
		eachGram(s.n.b, func(h uint32, char bool, _ int) {
			if char {
				x.chars = append(x.chars, h)
			} else {
				x.words = append(x.words, h)
			}
		})
		s.denseFeatures(&x.dense)
		x.zr = ruleLogit(s.score())
		putScanner(s)
		out = append(out, x)
	}
	return out, sc.Err()
}

// Weight vector layout while training: learnedDim hashed weights, numDense
// dense ones, the bias.
const trainDim = learnedDim + numDense + 1

// logitOf is the classifier's logit of x under w.
func logitOf(w []float64, x *example) float64 {
	iw, ic := invSqrt(len(x.words)), invSqrt(len(x.chars))
	var sw, sc float64
	for _, h := range x.words {
		sw += w[h]
	}
	for _, h := range x.chars {
		sc += w[h]
	}
	z := w[trainDim-1] + float64(sw*iw) + float64(sc*ic)
	for i, v := range x.dense {
		z += float64(w[learnedDim+i] * v)
	}
	return z
}

// fitLearned runs SGD over the rows idx of xs and returns the weights.
func fitLearned(xs []example, idx []int, cfg trainConfig) []float64 {
	w := make([]float64, trainDim)
	var sizes [3]int
	for _, i := range idx {
		sizes[xs[i].group]++
	}
	groups := 0
	for _, n := range sizes {
		if n > 0 {
			groups++
		}
	}
	var gw [3]float64
	for g, n := range sizes {
		if n > 0 {
			gw[g] = float64(len(idx)) / float64(groups*n)
		}
	}
	gw[1] *= cfg.benignWeight
	order := append([]int(nil), idx...)
	rng := rand.New(rand.NewPCG(learnedSeed1, learnedSeed2))
	t := 0
	for range cfg.epochs {
		for i := len(order) - 1; i > 0; i-- {
			j := int(rng.Uint64() % uint64(i+1))
			order[i], order[j] = order[j], order[i]
		}
		for _, k := range order {
			x := &xs[k]
			z := logitOf(w, x)
			lr := cfg.rate / (1 + float64(cfg.decay*float64(t)))
			g := float64(float64(lr*gw[x.group]) * (portable.Sigmoid(z) - x.y))
			decay := 1 - float64(lr*cfg.l2)
			gw1 := float64(g * invSqrt(len(x.words)))
			for _, h := range x.words {
				w[h] = float64(w[h]*decay) - gw1
			}
			gc := float64(g * invSqrt(len(x.chars)))
			for _, h := range x.chars {
				w[h] = float64(w[h]*decay) - gc
			}
			for i, v := range x.dense {
				w[learnedDim+i] -= float64(g * v)
			}
			w[trainDim-1] -= g
			t++
		}
	}
	return w
}

// fitBlend fits a, b, c of sigmoid(a·zr + b·zc + c) to the out-of-fold
// logits zc by Newton's method on the group-weighted log-likelihood, with a
// small ridge.
func fitBlend(xs []example, zc []float64, only int) [3]float64 {
	var sizes [3]int
	for _, x := range xs {
		if only >= 0 && x.set != only {
			continue
		}
		sizes[x.group]++
	}
	var gw [3]float64
	for g, n := range sizes {
		if n > 0 {
			gw[g] = float64(len(xs)) / float64(3*n)
		}
	}
	p := [3]float64{1, 1, 0}
	for range 60 {
		var grad [3]float64
		var hess [3][3]float64
		for i, x := range xs {
			if only >= 0 && x.set != only {
				continue
			}
			f := [3]float64{x.zr, min(max(zc[i], -20), 20), 1}
			z := float64(p[0]*f[0]) + float64(p[1]*f[1]) + p[2]
			q := portable.Sigmoid(z)
			cw := gw[x.group]
			for a := range 3 {
				grad[a] += float64(float64(cw*(q-x.y)) * f[a])
				for b := range 3 {
					hess[a][b] += float64(float64(float64(cw*q)*(1-q)) * float64(f[a]*f[b]))
				}
			}
		}
		for a := range 3 {
			grad[a] += float64(1e-3 * p[a])
			hess[a][a] += 1e-3
		}
		d, ok := solve3(hess, grad)
		if !ok {
			break
		}
		step := max(math.Abs(d[0]), math.Abs(d[1]), math.Abs(d[2]), 1)
		for a := range 3 {
			p[a] -= d[a] / step
		}
		p[0], p[1] = max(p[0], 0), max(p[1], 0)
	}
	return p
}

// originFolds assigns each example the fold of its origin, in order of
// first appearance, and returns the number of folds.
func originFolds(xs []example) int {
	ids := map[string]int{}
	for i := range xs {
		id, ok := ids[xs[i].origin]
		if !ok {
			id = len(ids)
			ids[xs[i].origin] = id
		}
		xs[i].fold = id
	}
	return len(ids)
}

// solve3 solves m·x = v by Gaussian elimination with partial pivoting.
func solve3(m [3][3]float64, v [3]float64) ([3]float64, bool) {
	for c := range 3 {
		piv := c
		for r := c + 1; r < 3; r++ {
			if math.Abs(m[r][c]) > math.Abs(m[piv][c]) {
				piv = r
			}
		}
		if math.Abs(m[piv][c]) < 1e-12 {
			return v, false
		}
		m[c], m[piv] = m[piv], m[c]
		v[c], v[piv] = v[piv], v[c]
		for r := c + 1; r < 3; r++ {
			f := m[r][c] / m[c][c]
			for k := c; k < 3; k++ {
				m[r][k] -= float64(f * m[c][k])
			}
			v[r] -= float64(f * v[c])
		}
	}
	var x [3]float64
	for r := 2; r >= 0; r-- {
		s := v[r]
		for k := r + 1; k < 3; k++ {
			s -= float64(m[r][k] * x[k])
		}
		x[r] = s / m[r][r]
	}
	return x, true
}

// encodeLearned writes learned.bin (see decodeLearned).
func encodeLearned(w []float64, blend [3]float64, sum [32]byte) []byte {
	maxAbs := 0.0
	for _, v := range w[:learnedDim] {
		maxAbs = max(maxAbs, math.Abs(v))
	}
	scale := float32(maxAbs / 32767)
	if scale == 0 {
		scale = 1
	}
	out := make([]byte, 0, learnedSize())
	out = append(out, learnedMagic...)
	out = binary.LittleEndian.AppendUint32(out, learnedBits)
	out = binary.LittleEndian.AppendUint32(out, math.Float32bits(scale))
	for _, v := range w[:learnedDim] {
		q := math.Round(v / float64(scale))
		out = binary.LittleEndian.AppendUint16(out, uint16(int16(min(max(q, -32767), 32767))))
	}
	for _, v := range w[learnedDim:] {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(v)))
	}
	for _, v := range blend {
		out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(v)))
	}
	return append(out, sum[:]...)
}

// cvReport gives per set the out-of-fold figures at 0.5 of the rules, the
// classifier, the blend and the larger of rules and classifier.
func cvReport(sets []TrainSet, xs []example, zc []float64, blend [3]float64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "blend: a %.3f (rules) b %.3f (classifier) c %.3f\n", blend[0], blend[1], blend[2])
	type conf struct{ tp, fp, fn, adj, adjFP int }
	scores := []struct {
		name string
		f    func(i int) bool
	}{
		{"rules", func(i int) bool { return xs[i].zr >= 0 }},
		{"classifier", func(i int) bool { return zc[i] >= 0 }},
		{"blend", func(i int) bool {
			return float64(blend[0]*xs[i].zr)+float64(blend[1]*min(max(zc[i], -20), 20))+blend[2] >= 0
		}},
		{"max", func(i int) bool { return xs[i].zr >= 0 || zc[i] >= 0 }},
	}
	for si := -1; si < len(sets); si++ {
		name := "all labelled (pooled)"
		if si >= 0 {
			name = sets[si].Name
		}
		fmt.Fprintf(&b, "%s:", name)
		for _, s := range scores {
			var c conf
			for i, x := range xs {
				if si >= 0 && x.set != si || si < 0 && x.group == 2 {
					continue
				}
				flag := s.f(i)
				switch {
				case x.y == 1 && flag:
					c.tp++
				case x.y == 1:
					c.fn++
				case flag:
					c.fp++
				}
				if x.adj {
					c.adj++
					if flag {
						c.adjFP++
					}
				}
			}
			p, r := ratio(c.tp, c.tp+c.fp), ratio(c.tp, c.tp+c.fn)
			f1 := 0.0
			if p+r > 0 {
				f1 = 2 * p * r / (p + r)
			}
			fmt.Fprintf(&b, "  %s F1 %.3f P %.3f R %.3f fp %d adjFP %d/%d", s.name, f1, p, r, c.fp, c.adjFP, c.adj)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// TrainingSets reads the sets the embedded weights are trained on, in
// order: from quality (the quality harness's testdata) injection_tune.jsonl,
// injection_public_tune.jsonl, hardneg_tune.jsonl and pii_tune.jsonl; from sets (this package's testdata)
// generalise.jsonl, generalise2.jsonl … in name order, then
// train_public.jsonl (public rows, testdata/README.md). No held-out,
// held-back, dev or diagnostic (diag_benign.jsonl) file is opened.
func TrainingSets(quality, sets fs.FS) ([]TrainSet, error) {
	var out []TrainSet
	for _, name := range []string{"injection_tune.jsonl", "injection_public_tune.jsonl", "hardneg_tune.jsonl", "pii_tune.jsonl"} {
		b, err := fs.ReadFile(quality, name)
		if err != nil {
			return nil, fmt.Errorf("injection: training sets: %w", err)
		}
		out = append(out, TrainSet{Name: name, Data: b})
	}
	names, err := fs.Glob(sets, "generalise*.jsonl")
	if err != nil {
		return nil, fmt.Errorf("injection: training sets: %w", err)
	}
	sort.Slice(names, func(i, j int) bool {
		if len(names[i]) != len(names[j]) {
			return len(names[i]) < len(names[j])
		}
		return names[i] < names[j]
	})
	if len(names) == 0 {
		return nil, errors.New("injection: training sets: no generalise*.jsonl")
	}
	for _, name := range append(names, publicTrainSet) {
		b, err := fs.ReadFile(sets, name)
		if err != nil {
			return nil, fmt.Errorf("injection: training sets: %w", err)
		}
		out = append(out, TrainSet{Name: name, Data: b})
	}
	return out, nil
}

// publicTrainSet is the set of public training rows in this package's
// testdata.
const publicTrainSet = "train_public.jsonl"

// blendSet is the index of the set named on that the blend is fitted on, or
// -1 for all.
func blendSet(sets []TrainSet, on string) int {
	for i, s := range sets {
		if s.Name == on {
			return i
		}
	}
	return -1
}

// securityAdjacent reports whether a benign row of kind is security-adjacent
// text (the false-positive target): questions about security, texts
// with trigger words, security documentation.
func securityAdjacent(kind string) bool {
	return kind == "security_question" || kind == "trigger_words" || kind == "security_doc"
}
