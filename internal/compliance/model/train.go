package model

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/svc-gateway/svc/internal/compliance/detect"
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

// TrainResult is what Train produces.
type TrainResult struct {
	// Weights is the weights file (weights.bin); Heldout the held-out
	// set's vectors (heldout.bin).
	Weights, Heldout []byte
	// DataHash is the SHA-256 of the labelled files read, the trainer's
	// version and FindingsName.
	DataHash [32]byte
	// Rows and Risky count the training rows; HeldoutRows the held-out ones.
	Rows, Risky, HeldoutRows int
	// Heldout metrics of the trained weights, at threshold 0.5.
	Metrics Metrics
}

// Training hyper-parameters. trainerVersion enters the data hash: bump it
// when the algorithm or these change.
const (
	trainerVersion = "svc-risk-trainer/1"
	trainEpochs    = 12
	trainRate      = 0.5
	trainDecay     = 1e-3 // learning rate lr/(1 + decay·t)
	trainL2        = 1e-5
	trainSeed1     = 0x5eed
	trainSeed2     = 0xc0ffee
	maxLine        = 4 << 20
)

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
// regression by SGD over Featurize's vectors, trainEpochs passes in an order
// shuffled by a fixed-seed PCG, class-balanced, with a decaying rate and a
// little L2. Labels: injection and jailbreak rows are risky, benign ones
// not; PII rows are risky when they hold a secret or an SSN, card number,
// IBAN or passport number; hard negatives are not. It is deterministic: the
// same files give the same bytes (every product is rounded before it is
// added, see mathx.go).
func Train(cfg TrainConfig) (*TrainResult, error) {
	name := cfg.FindingsName
	if cfg.Findings == nil {
		name = "gold"
	}
	h := sha256.New()
	h.Write([]byte(trainerVersion + "\x00" + name + "\x00"))
	var tune, held []example
	for _, set := range setNames {
		for _, split := range []string{"tune", "heldout"} {
			file := set + "_" + split + ".jsonl"
			raw, err := os.ReadFile(filepath.Join(cfg.Dir, file))
			if err != nil {
				return nil, fmt.Errorf("model: train: %w", err)
			}
			h.Write(binary.LittleEndian.AppendUint64([]byte(file+"\x00"), uint64(len(raw))))
			h.Write(raw)
			xs, err := readSet(raw, set, cfg.Findings)
			if err != nil {
				return nil, fmt.Errorf("model: train: %s: %w", file, err)
			}
			if split == "tune" {
				tune = append(tune, xs...)
			} else {
				held = append(held, xs...)
			}
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
	w := fit(tune, res.Risky)
	res.Metrics = evaluate(w, held)
	f := &weightsFile{dataHash: res.DataHash, rows: uint32(res.Rows), risky: uint32(res.Risky), w: w}
	res.Weights = encodeWeights(f)
	var err error
	if res.Heldout, err = encodeHeldout(res.DataHash, held); err != nil {
		return nil, fmt.Errorf("model: train: %w", err)
	}
	return res, nil
}

// readSet parses one labelled set's JSON lines into examples.
func readSet(raw []byte, set string, findings FindingsFunc) ([]example, error) {
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
		switch set {
		case "injection":
			switch r.Label {
			case "injection", "jailbreak":
				risky = true
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
		if findings != nil {
			fs = findings(r.Text)
		}
		out = append(out, example{v: Featurize(r.Text, fs), risky: risky})
	}
	return out, sc.Err()
}

// fit runs the SGD passes and returns the weights (bias last).
func fit(xs []example, risky int) []float32 {
	w := make([]float64, Dim+1)
	n := float64(len(xs))
	// Class weights: each class counts as half the data.
	posW, negW := 1.0, 1.0
	if risky > 0 && risky < len(xs) {
		posW = n / (2 * float64(risky))
		negW = n / (2 * (n - float64(risky)))
	}
	order := make([]int, len(xs))
	for i := range order {
		order[i] = i
	}
	rng := rand.New(rand.NewPCG(trainSeed1, trainSeed2))
	t := 0
	for range trainEpochs {
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
			y, cw := 0.0, negW
			if x.risky {
				y, cw = 1, posW
			}
			lr := trainRate / (1 + float64(trainDecay*float64(t)))
			g := float64(float64(lr*cw) * (sigmoid(z) - y))
			for i, idx := range x.v.Idx {
				w[idx] -= float64(g*float64(x.v.Val[i])) + float64(float64(lr*trainL2)*w[idx])
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

// logit is the bias plus the dot product of w and v. Each product of two
// float32 values is exact in float64, so the sum is the same on every CPU.
func logit(w []float32, v Vector) float64 {
	z := float64(w[Dim])
	for i, idx := range v.Idx {
		z += float64(w[idx]) * float64(v.Val[i])
	}
	return z
}
