// Command gen trains the compliance risk model's initial weights from the
// labelled sets (model.Train) and writes weights.bin and heldout.bin, which
// package model embeds. It runs from package model's directory through go
// generate:
//
//	go generate ./internal/compliance/model
//
// which reads ../quality/testdata (the *_tune.jsonl sets for training, the
// *_heldout.jsonl sets for the embedded evaluation set). -data picks another
// directory (testdata/seed holds a small hand-written set). Training uses
// the gold findings (model.GenerateConfig); to train on the real detectors'
// findings instead, set Findings and FindingsName there.
//
// The output is deterministic: the same data gives the same bytes. The
// embedded files must exist (even empty) for this command to build.
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/compliance/model"
)

// TrainConfig is what the embedded weights are trained with: the sets in
// dir, each row's findings made by eng (svc's detectors), as a scan makes
// them at run time.
func TrainConfig(dir string, eng *compliance.Engine) model.TrainConfig {
	cfg := model.GenerateConfig(dir)
	cfg.Findings, cfg.FindingsName = eng.Findings, "svc-detectors"
	return cfg
}

func main() {
	data := flag.String("data", "../quality/testdata", "directory of the labelled sets")
	out := flag.String("out", ".", "directory to write weights.bin and heldout.bin to")
	flag.Parse()
	start := time.Now()
	eng, err := compliance.NewDefault()
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	res, err := model.Train(TrainConfig(*data, eng))
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	for name, b := range map[string][]byte{"weights.bin": res.Weights, "heldout.bin": res.Heldout} {
		if err := os.WriteFile(filepath.Join(*out, name), b, 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "gen:", err)
			os.Exit(1)
		}
	}
	fmt.Printf("gen: trained on %d rows (%d risky) from %s in %v; data %x\n",
		res.Rows, res.Risky, *data, time.Since(start).Round(time.Millisecond), res.DataHash[:8])
	for _, e := range []struct {
		name string
		m    model.Metrics
	}{{"held-out, embedded (findings from the training detectors)", res.Metrics}, {"held-out, gold findings", res.GoldMetrics}} {
		m := e.m
		fmt.Printf("gen: %s: %d rows: accuracy %.3f precision %.3f recall %.3f F1 %.3f (tp %d fp %d tn %d fn %d)\n",
			e.name, m.N, m.Accuracy, m.Precision, m.Recall, m.F1, m.TP, m.FP, m.TN, m.FN)
	}
	fmt.Printf("gen: weights.bin %d bytes, heldout.bin %d bytes\n", len(res.Weights), len(res.Heldout))
}
