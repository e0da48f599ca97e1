package main

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// freshPromptsTxt holds the candidate rows of the fresh held-out injection
// set, copied verbatim from meta-llama/PurpleLlama's CyberSecEval data sets
// by a mechanical rule fixed before the detector was run on them
// (testdata/README.md, testdata/SOURCES.md): every prompt-injection case's
// user input in English and, machine-translated, in German, Spanish and
// French (attacks); every third English and every second German, Spanish
// and French false-refusal prompt (benign security questions); every
// twentieth instruct prompt (benign coding requests). Each row's source
// names the file and the index of the case in it.
//
//go:embed fresh_prompts.jsonl
var freshPromptsTxt string

// freshSetName is the set the fresh rows are written to:
// injection_fresh_heldout.jsonl. It has no tune split.
const freshSetName = "injection_fresh"

// freshStats counts what freshSet dropped.
type freshStats struct {
	Candidates int // rows of fresh_prompts.jsonl
	Duplicates int // exact repeats of an earlier row's text
	NearTuned  int // rows sharing a run with a text the detector is tuned on
	NearDev    int // of the others, rows sharing a run with a held-back dev set
}

// freshSet deals the fresh rows: a row whose text repeats an earlier row's
// is dropped, and so is a row near (sharing a run of publicShingle words or
// of contentRun content words, as publicSplit compares) a text in tuned,
// everything the detector is tuned or trained on, or in dev, the held-back
// sets of package injection whose figures were read while tuning. Every
// other row is held out, in the file's order.
func freshSet(tuned, dev []injRow) ([]injRow, freshStats, error) {
	var st freshStats
	seenTuned, seenDev := runSet(tuned), runSet(dev)
	seen := map[string]bool{}
	var out []injRow
	for n, line := range strings.Split(strings.TrimSpace(freshPromptsTxt), "\n") {
		var r injRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, st, fmt.Errorf("fresh_prompts.jsonl:%d: %w", n+1, err)
		}
		st.Candidates++
		switch {
		case seen[r.Text]:
			st.Duplicates++
		case overlaps(r.Text, seenTuned):
			st.NearTuned++
		case overlaps(r.Text, seenDev):
			st.NearDev++
		default:
			out = append(out, r)
		}
		seen[r.Text] = true
	}
	return out, st, nil
}

// heldBack are package injection's held-back sets (testdata/heldback*.jsonl):
// never trained on, but their aggregate figures were read while the rules
// were tuned, so the fresh set keeps away from them too. injDir is package
// injection's directory.
func heldBack(injDir string) ([]injRow, error) {
	paths, err := filepath.Glob(filepath.Join(injDir, "testdata", "heldback*.jsonl"))
	if err != nil {
		return nil, err
	}
	var rows []injRow
	for _, p := range paths {
		r, err := readSet(p)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}
