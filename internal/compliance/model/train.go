package model

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/svc-gateway/svc/internal/compliance/detect"
	"github.com/svc-gateway/svc/internal/compliance/portable"
)

// FindingsFunc returns a text's findings, for training: the real detectors
// once they are wired in, or nil for the gold entities (see TrainConfig).
type FindingsFunc func(text string) []detect.Finding

// TrainConfig says what Train reads.
type TrainConfig struct {
	// Dir holds the labelled sets: injection_{tune,heldout}.jsonl
	// ({"text","label": "injection"|"jailbreak"|"benign"}),
	// pii_{tune,heldout}.jsonl ({"text","entities":[{"type","start","end"}]},
	// byte offsets) and hardneg_{tune,heldout}.jsonl ({"text","kind"}).
	// Training reads only the *_tune files; the *_heldout files are
	// featurized into the held-out set Stats evaluates on.
	Dir string
	// Findings gives each row's findings. When nil, PII rows get their gold
	// entities (score 1) and other rows none.
	Findings FindingsFunc
	// FindingsName names Findings in the data hash ("gold" when Findings
	// is nil), so that weights trained with other detectors differ.
	FindingsName string
}

// GenerateConfig is the configuration go generate trains with (package gen)
// and TestEmbeddedWeightsAreUpToDate retrains with: the one place to plug
// the detectors in (set Findings and FindingsName).
func GenerateConfig(dir string) TrainConfig {
	return TrainConfig{Dir: dir}
}

// TrainResult is what Train produces.
type TrainResult struct {
	// Weights is the weights file (weights.bin); Heldout the held-out
	// split's rows with their findings (heldout.bin).
	Weights, Heldout []byte
	// DataHash is the SHA-256 of the labelled files read, the trainer's
	// version and FindingsName.
	DataHash [32]byte
	// Rows and Risky count the training rows; HeldoutRows the held-out ones.
	Rows, Risky, HeldoutRows int
	// Metrics are the trained weights' on the held-out split as embedded
	// (its findings from Findings; none when that is nil), at Threshold.
	// GoldMetrics are on the held-out split with its gold findings: the
	// model behind perfect detectors.
	Metrics, GoldMetrics Metrics
}

// Training hyper-parameters. trainerVersion enters the data hash: bump it
// when the algorithm or these change.
const (
	trainerVersion = "svc-risk-trainer/2"
	trainSeed1     = 0x5eed
	trainSeed2     = 0xc0ffee
	maxLine        = 4 << 20
)

// hyper are the training hyper-parameters: passes over the data, the
// learning rate lr/(1 + decay·t) after t steps, the L2 penalty.
type hyper struct {
	epochs          int
	rate, decay, l2 float64
}

// trainHyper is what Train uses.
// Chosen by 2-fold cross-validation on the tune split (never the held-out
// one), among rates 0.5–2 and 12–20 passes.
var trainHyper = hyper{epochs: 12, rate: 2, decay: 1e-3, l2: 1e-6}

// setNames are the labelled sets, in the order they are read.
var setNames = [...]string{"injection", "pii", "hardneg"}

// riskyPII are the PII types whose presence makes a text risky; every
// secret type does too. Others (e-mail, phone, names, …) alone do not.
var riskyPII = map[detect.Type]bool{detect.SSN: true, detect.CreditCard: true, detect.IBAN: true, detect.Passport: true}

// riskyType reports whether a finding of type t makes a text risky.
func riskyType(t detect.Type) bool {
	return riskyPII[t] || t.Category() == detect.CategorySecret
}

// row is one line of a labelled set.
type row struct {
	Text     string `json:"text"`
	Label    string `json:"label"`
	Entities []struct {
		Type  string `json:"type"`
		Start int    `json:"start"`
		End   int    `json:"end"`
	} `json:"entities"`
}

// Train trains the initial weights on cfg.Dir's tune sets: logistic
// regression by SGD over Featurize's vectors, trainHyper's passes in an
// order shuffled by a fixed-seed PCG, each group (set × label) weighted
// alike, with a decaying rate and a little L2. Labels: injection and
// jailbreak rows are risky, benign ones not; PII rows are risky when they
// hold a secret or an SSN, card number, IBAN or passport number; hard
// negatives are not. Findings: see readSet and dropEvery. It is
// deterministic: the same files give the same bytes (every product is
// rounded before it is added, see mathx.go).
func Train(cfg TrainConfig) (*TrainResult, error) {
	name := cfg.FindingsName
	if cfg.Findings == nil {
		name = "gold"
	}
	h := sha256.New()
	h.Write([]byte(trainerVersion + "\x00" + name + "\x00"))
	var tune, held, gold []example
	for set, setName := range setNames {
		for _, split := range []string{"tune", "heldout"} {
			file := setName + "_" + split + ".jsonl"
			raw, err := os.ReadFile(filepath.Join(cfg.Dir, file))
			if err != nil {
				return nil, fmt.Errorf("model: train: %w", err)
			}
			h.Write(binary.LittleEndian.AppendUint64([]byte(file+"\x00"), uint64(len(raw))))
			h.Write(raw)
			mode := readTune
			if split == "heldout" {
				mode = readHeldout
			}
			xs, err := readSet(raw, set, cfg.Findings, mode)
			if err != nil {
				return nil, fmt.Errorf("model: train: %s: %w", file, err)
			}
			if split == "tune" {
				tune = append(tune, xs...)
				continue
			}
			held = append(held, xs...)
			if xs, err = readSet(raw, set, nil, readGold); err != nil {
				return nil, fmt.Errorf("model: train: %s: %w", file, err)
			}
			gold = append(gold, xs...)
		}
	}
	if len(tune) == 0 {
		return nil, errors.New("model: train: no training rows")
	}
	res := &TrainResult{Rows: len(tune), HeldoutRows: len(held)}
	copy(res.DataHash[:], h.Sum(nil))
	for _, x := range tune {
		if x.risky {
			res.Risky++
		}
	}
	w := fit(tune, trainHyper)
	res.Metrics = evaluate(w, held)
	res.GoldMetrics = evaluate(w, gold)
	f := &weightsFile{dataHash: res.DataHash, rows: uint32(res.Rows), risky: uint32(res.Risky), w: w}
	res.Weights = encodeWeights(f)
	res.Heldout = encodeHeldout(res.DataHash, held)
	return res, nil
}

// dropEvery: every dropEvery-th row (by a hash of its text) of the tune
// sets is trained without findings, so that the n-grams learn to stand
// alone when a detector misses and the detector features do not absorb
// everything.
const dropEvery = 3

// How readSet gives rows their findings.
type readMode int

const (
	// readTune: findings(text), or the gold findings when findings is nil;
	// none for the rows dropped.
	readTune readMode = iota
	// readHeldout: findings(text), or none when findings is nil (gold
	// findings would hand the model the answer).
	readHeldout
	// readGold: the gold findings, for every row.
	readGold
)

// readSet parses one labelled set's JSON lines into examples (set is the
// index into setNames), their findings as mode says. The gold findings are
// a PII row's entities, and for an injection or jailbreak row one finding
// of that type over the whole text.
func readSet(raw []byte, set int, findings FindingsFunc, mode readMode) ([]example, error) {
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(make([]byte, 64<<10), maxLine)
	var out []example
	for line := 1; sc.Scan(); line++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var r row
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("line %d: %w", line, err)
		}
		var risky bool
		var fs []detect.Finding
		switch setNames[set] {
		case "injection":
			switch r.Label {
			case "injection":
				risky = true
				fs = append(fs, detect.Finding{Type: detect.PromptInjection, Start: 0, End: len(r.Text), Score: 1, Rule: "gold"})
			case "jailbreak":
				risky = true
				fs = append(fs, detect.Finding{Type: detect.Jailbreak, Start: 0, End: len(r.Text), Score: 1, Rule: "gold"})
			case "benign":
			default:
				return nil, fmt.Errorf("line %d: unknown label %q", line, r.Label)
			}
		case "pii":
			for _, e := range r.Entities {
				t := detect.Type(e.Type)
				if e.Start < 0 || e.End > len(r.Text) || e.Start >= e.End {
					return nil, fmt.Errorf("line %d: entity %s [%d, %d) out of the text's %d bytes", line, e.Type, e.Start, e.End, len(r.Text))
				}
				risky = risky || riskyType(t)
				fs = append(fs, detect.Finding{Type: t, Start: e.Start, End: e.End, Score: 1, Rule: "gold"})
			}
		}
		switch {
		case mode == readGold:
		case findings != nil:
			fs = findings(r.Text)
		case mode == readHeldout:
			fs = nil
		}
		if mode == readTune && dropped(r.Text) {
			fs = nil
		}
		g := set * 2
		if risky {
			g++
		}
		x := example{v: Featurize(r.Text, fs), risky: risky, group: g}
		if mode == readHeldout {
			x.text, x.findings = r.Text, fs
		}
		out = append(out, x)
	}
	return out, sc.Err()
}

// dropped reports whether a tune row is trained without findings.
func dropped(text string) bool {
	h := fnv.New32a()
	h.Write([]byte(text))
	return h.Sum32()%dropEvery == 0
}

// fit runs the SGD passes and returns the weights (bias last).
func fit(xs []example, hp hyper) []float32 {
	w := make([]float64, Dim+1)
	// Group weights: each non-empty group (set × label) counts alike, so
	// the large PII set does not drown the injection set, nor one label
	// the other.
	var sizes [2 * len(setNames)]int
	for _, x := range xs {
		sizes[x.group]++
	}
	groups := 0
	for _, n := range sizes {
		if n > 0 {
			groups++
		}
	}
	var gw [2 * len(setNames)]float64
	for g, n := range sizes {
		if n > 0 {
			gw[g] = float64(len(xs)) / float64(groups*n)
		}
	}
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(trainSeed1, trainSeed2))
	t := 0
	for range hp.epochs {
		for i := len(order) - 1; i > 0; i-- {
			j := int(rng.Uint64() % uint64(i+1))
			order[i], order[j] = order[j], order[i]
		}
		for _, k := range order {
			x := xs[k]
			z := w[Dim]
			for i, idx := range x.v.Idx {
				z += float64(w[idx] * float64(x.v.Val[i]))
			}
			y, cw := 0.0, gw[x.group]
			if x.risky {
				y = 1
			}
			lr := hp.rate / (1 + float64(hp.decay*float64(t)))
			g := float64(float64(lr*cw) * (portable.Sigmoid(z) - y))
			for i, idx := range x.v.Idx {
				w[idx] -= float64(g*float64(x.v.Val[i])) + float64(float64(lr*hp.l2)*w[idx])
			}
			w[Dim] -= g
			t++
		}
	}
	out := make([]float32, Dim+1)
	for i, v := range w {
		out[i] = float32(min(max(v, -maxWeight), maxWeight))
	}
	return out
}

// evaluate returns the metrics of weights w on xs at threshold 0.5.
func evaluate(w []float32, xs []example) Metrics {
	var c confusion
	for _, x := range xs {
		c.add(logit(w, x.v) >= 0, x.risky)
	}
	return c.metrics()
}

// evaluateRows is evaluate on rows given by their text and findings.
func evaluateRows(w []float32, xs []example) Metrics {
	var c confusion
	for _, x := range xs {
		c.add(logit(w, Featurize(x.text, x.findings)) >= 0, x.risky)
	}
	return c.metrics()
}

// logit is the bias plus the dot product of w and v. Each product of two
// float32 values is exact in float64, so the sum is the same on every CPU.
func logit(w []float32, v Vector) float64 {
	z := float64(w[Dim])
	for i, idx := range v.Idx {
		z += float64(w[idx]) * float64(v.Val[i])
	}
	return z
}
