// Command gen trains the injection detector's learned component
// (injection.TrainLearned) and writes learned.bin, which package injection
// embeds. It runs from package injection's directory through go generate:
//
//	go generate ./internal/compliance/injection
//
// It reads, in this order, the quality tune split
// (-quality/injection_tune.jsonl and injection_public_tune.jsonl, then
// hardneg_tune.jsonl and pii_tune.jsonl as benign texts), the package's hand-written
// generalise*.jsonl sets and its public training rows, train_public.jsonl
// (-sets). Held-out, held-back and dev sets are never read: they are for
// evaluation. The output is deterministic.
package main

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/svc-gateway/svc/internal/compliance/injection"
)

func main() {
	quality := flag.String("quality", "../quality/testdata", "directory of the quality sets (only *_tune.jsonl are read)")
	sets := flag.String("sets", "testdata", "directory of the generalise*.jsonl sets and train_public.jsonl")
	out := flag.String("out", "learned.bin", "file to write")
	flag.Parse()
	start := time.Now()
	ts, err := injection.TrainingSets(os.DirFS(*quality), os.DirFS(*sets))
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	res, err := injection.TrainLearned(ts)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, res.Weights, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	fmt.Printf("gen: %d sets, %d bytes in %v\n%s", len(ts), len(res.Weights), time.Since(start).Round(time.Millisecond), res.Report)
}
