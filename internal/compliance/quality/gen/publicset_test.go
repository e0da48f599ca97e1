package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestSplitsShareNoShingle: no held-out row, generated or public, shares a
// run of publicShingle words with a tune row of either set, so that a
// variant of a held-out prompt is never tuned on.
func TestSplitsShareNoShingle(t *testing.T) {
	files, err := build()
	if err != nil {
		t.Fatal(err)
	}
	rows := func(name string) []injRow {
		var out []injRow
		for _, line := range strings.Split(strings.TrimSpace(string(files[name])), "\n") {
			var r injRow
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			out = append(out, r)
		}
		return out
	}
	tune := map[string]string{} // shingle → the tune row's source
	for _, name := range []string{"injection_tune.jsonl", publicSetName + "_tune.jsonl"} {
		for _, r := range rows(name) {
			for _, s := range shingles(r.Text) {
				tune[s] = name + " " + r.Source
			}
		}
	}
	for _, name := range []string{"injection_heldout.jsonl", publicSetName + "_heldout.jsonl"} {
		for _, r := range rows(name) {
			for _, s := range shingles(r.Text) {
				if src, ok := tune[s]; ok {
					t.Errorf("%s row (%s) shares %q with %s", name, r.Source, s, src)
					break
				}
			}
		}
	}
}

// TestShingleGroups: rows sharing a shingle are grouped transitively; the
// others stay apart.
func TestShingleGroups(t *testing.T) {
	rows := []injRow{
		{Text: "one two three four five six seven eight nine"},                                          // 0
		{Text: "zero one two three four five six seven eight"},                                          // 1: shares with 0
		{Text: "alpha beta gamma delta epsilon zeta eta theta, zero one two three four five six seven"}, // 2: shares with 1
		{Text: "one two three four five six seven"},                                                     // 3: too short to share
		{Text: "alpha beta gamma delta epsilon zeta eta iota"},                                          // 4: 7 words in common with 2
	}
	u := shingleGroups(rows)
	same := func(i, j int) bool { return u.find(i) == u.find(j) }
	if !same(0, 1) || !same(1, 2) || !same(0, 2) {
		t.Errorf("rows 0, 1, 2 should form one group: %v", u)
	}
	if same(0, 3) || same(2, 4) || same(3, 4) {
		t.Errorf("rows 3 and 4 should stand alone: %v", u)
	}
}

// TestPublicSplitKeepsGroupsTogether: every group of the public rows lands
// in one split.
func TestPublicSplitKeepsGroupsTogether(t *testing.T) {
	files, err := build()
	if err != nil {
		t.Fatal(err)
	}
	split := map[string]string{}
	for _, sp := range []string{"tune", "heldout"} {
		for _, line := range strings.Split(strings.TrimSpace(string(files[publicSetName+"_"+sp+".jsonl"])), "\n") {
			var r injRow
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				t.Fatal(err)
			}
			for _, s := range shingles(r.Text) {
				if other, ok := split[s]; ok && other != sp {
					t.Errorf("shingle %q in both splits", s)
				}
				split[s] = sp
			}
		}
	}
}
