package main

import (
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
)

// publicPromptsTxt holds prompts taken verbatim from public collections
// (protectai/llm-guard's scanner tests, utkusen/promptmap's rules, XSTest),
// labelled as their sources label them; testdata/SOURCES.md records the
// repositories, commits and licences. Unlike public_injections.jsonl they
// carry no split: publicSplit deals them.
//
//go:embed public_prompts.jsonl
var publicPromptsTxt string

// publicSetName is the set the public prompts are written to:
// injection_public_tune.jsonl and injection_public_heldout.jsonl.
const publicSetName = "injection_public"

// publicShingle is the length, in words, of the word runs (shingles)
// compared to keep splits apart, and of the prefix that keys a row.
const publicShingle = 8

// publicSplit deals the public prompts. tuned is every text the detector
// is tuned or trained on (the generated tune split and tunedOn's texts);
// heldOut is the generated held-out injection split. Two texts are near
// when they share a run (a shingle of publicShingle words, or a run of
// contentRun content words: runs). A row near a row of heldOut is dropped,
// so that neither public split tunes on nor duplicates it. The other rows
// are grouped: two near rows (variants of one prompt, such as a prompt
// stealer and its translated copy, or two DAN versions) are in one group,
// transitively (union-find). A group with a member near a tuned text goes
// to the tune split; any other group goes to the held-out split when, for
// every member, the first byte of the SHA-256 of its key (the row's first
// publicShingle words, lower case, letters and digits) is odd, and to the
// tune split otherwise. No held-out row so shares a run with a tuned text
// or a tune row of either set, and a row that would be tuned on alone (an
// even key: the rule before grouping) is never moved to the held-out split
// by a variant joining it.
func publicSplit(tuned, heldOut []injRow) (tune, held []injRow, dropped int, err error) {
	seenHeld := runSet(heldOut)
	seenTune := runSet(tuned)
	var rows []injRow
	for n, line := range strings.Split(strings.TrimSpace(publicPromptsTxt), "\n") {
		var r injRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, nil, 0, fmt.Errorf("public_prompts.jsonl:%d: %w", n+1, err)
		}
		if overlaps(r.Text, seenHeld) {
			dropped++
			continue
		}
		rows = append(rows, r)
	}
	groups := runGroups(rows)
	toTune := map[int]bool{} // group root → dealt to the tune split
	for i, r := range rows {
		g := groups.find(i)
		if sum := sha256.Sum256([]byte(rowKey(r.Text))); sum[0]&1 == 0 || overlaps(r.Text, seenTune) {
			toTune[g] = true
		}
	}
	for i, r := range rows {
		if !toTune[groups.find(i)] {
			held = append(held, r)
		} else {
			tune = append(tune, r)
		}
	}
	return tune, held, dropped, nil
}

// rowKey is the key whose hash deals a row: the first publicShingle words
// of text (normWords).
func rowKey(text string) string {
	words := normWords(text)
	return strings.Join(words[:min(publicShingle, len(words))], " ")
}

// runGroups unites the rows that share a run.
func runGroups(rows []injRow) unionFind {
	u := newUnionFind(len(rows))
	first := map[string]int{}
	for i, r := range rows {
		for _, s := range runs(r.Text) {
			if j, ok := first[s]; ok {
				u.union(i, j)
			} else {
				first[s] = i
			}
		}
	}
	return u
}

// unionFind is a disjoint-set forest over 0..n-1.
type unionFind []int

func newUnionFind(n int) unionFind {
	u := make(unionFind, n)
	for i := range u {
		u[i] = i
	}
	return u
}

func (u unionFind) find(i int) int {
	for u[i] != i {
		u[i] = u[u[i]]
		i = u[i]
	}
	return i
}

func (u unionFind) union(i, j int) {
	if a, b := u.find(i), u.find(j); a != b {
		u[max(a, b)] = min(a, b)
	}
}

// runSet is the set of the runs of rows' texts.
func runSet(rows []injRow) map[string]bool {
	seen := map[string]bool{}
	for _, r := range rows {
		for _, s := range runs(r.Text) {
			seen[s] = true
		}
	}
	return seen
}

// overlaps reports whether text has a run in seen.
func overlaps(text string, seen map[string]bool) bool {
	for _, s := range runs(text) {
		if seen[s] {
			return true
		}
	}
	return false
}

// runs are the shingles and the content runs of text (a shingle has
// publicShingle words, a content run contentRun: the two never collide).
func runs(text string) []string { return append(shingles(text), contentRuns(text)...) }

// shingles are the runs of publicShingle words of text (normWords).
func shingles(text string) []string {
	w := normWords(text)
	var out []string
	for i := 0; i+publicShingle <= len(w); i++ {
		out = append(out, strings.Join(w[i:i+publicShingle], " "))
	}
	return out
}

// normWords splits text into lower-case runs of letters and digits.
func normWords(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}
