package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// freshSource is the shape of a fresh row's source: the repository, the
// file and the index of the case in it.
var freshSource = regexp.MustCompile(`^meta-llama/PurpleLlama:CybersecurityBenchmarks/datasets/[a-z_/-]+\.json#[0-9]+$`)

// TestFreshSet: the fresh set is what freshSet keeps of the candidates —
// no text twice, none near a tuned text or a held-back set — each row
// naming its source once; the counts it dropped go to the log.
func TestFreshSet(t *testing.T) {
	files, st, err := buildAll(injDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("fresh set: %d candidates, %d exact duplicates, %d near a tuned text, %d near a held-back set dropped",
		st.Candidates, st.Duplicates, st.NearTuned, st.NearDev)
	var rows []injRow
	for _, line := range strings.Split(strings.TrimSpace(string(files[freshSetName+"_heldout.jsonl"])), "\n") {
		var r injRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if got, want := len(rows), st.Candidates-st.Duplicates-st.NearTuned-st.NearDev; got != want {
		t.Errorf("%d rows written, want %d (candidates less those dropped)", got, want)
	}
	dev, err := heldBack(injDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(dev) == 0 {
		t.Error("no held-back rows read: the fresh set would not keep away from them")
	}
	seenDev := runSet(dev)
	texts, sources := map[string]bool{}, map[string]bool{}
	for _, r := range rows {
		if !freshSource.MatchString(r.Source) {
			t.Errorf("source %q, want meta-llama/PurpleLlama:<path>.json#<index>", r.Source)
		}
		if texts[r.Text] || sources[r.Source] {
			t.Errorf("%s: text or source twice", r.Source)
		}
		texts[r.Text], sources[r.Source] = true, true
		if overlaps(r.Text, seenDev) {
			t.Errorf("%s shares a run with a held-back row", r.Source)
		}
	}
}

// TestFreshSetDrops: freshSet drops repeats and rows near a tuned or a
// held-back text, and keeps the rest in order.
func TestFreshSetDrops(t *testing.T) {
	saved := freshPromptsTxt
	t.Cleanup(func() { freshPromptsTxt = saved })
	lines := []string{
		`{"text":"one two three four five six seven eight nine","label":"injection","kind":"k","lang":"en","source":"a/b:c#0"}`,
		`{"text":"one two three four five six seven eight nine","label":"injection","kind":"k","lang":"en","source":"a/b:c#1"}`,
		`{"text":"alpha beta gamma delta epsilon zeta eta theta","label":"benign","kind":"k","lang":"en","source":"a/b:c#2"}`,
		`{"text":"red green blue cyan magenta yellow black white","label":"benign","kind":"k","lang":"en","source":"a/b:c#3"}`,
		`{"text":"short text kept","label":"benign","kind":"k","lang":"en","source":"a/b:c#4"}`,
	}
	freshPromptsTxt = strings.Join(lines, "\n")
	tuned := []injRow{{Text: "well: alpha beta gamma delta epsilon zeta eta theta!"}}
	dev := []injRow{{Text: "Red, green, blue, cyan and magenta."}}
	rows, st, err := freshSet(tuned, dev)
	if err != nil {
		t.Fatal(err)
	}
	if st != (freshStats{Candidates: 5, Duplicates: 1, NearTuned: 1, NearDev: 1}) {
		t.Errorf("stats %+v", st)
	}
	if len(rows) != 2 || rows[0].Source != "a/b:c#0" || rows[1].Source != "a/b:c#4" {
		t.Errorf("kept %+v, want rows 0 and 4", rows)
	}
	freshPromptsTxt = "{not json"
	if _, _, err := freshSet(nil, nil); err == nil {
		t.Error("malformed line: got no error")
	}
}
