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

// publicShingle is the length, in words, of the word runs compared to keep
// the public set apart from the generated held-out split, and of the prefix
// that decides a row's split.
const publicShingle = 8

// publicSplit deals the public prompts: a row whose text shares a run of
// publicShingle words with a row of heldOut (the generated held-out
// injection split) is dropped, so that neither public split tunes on nor
// duplicates it; the others go to the held-out split when the first byte of
// the SHA-256 of their first publicShingle words (lower case, letters and
// digits) is odd, to the tune split when it is even. Rows that open alike
// (variants of one prompt) so land in one split. The rule was fixed before
// any detector was run on the rows.
func publicSplit(heldOut []injRow) (tune, held []injRow, dropped int, err error) {
	seen := map[string]bool{}
	for _, r := range heldOut {
		for _, s := range shingles(r.Text) {
			seen[s] = true
		}
	}
	for n, line := range strings.Split(strings.TrimSpace(publicPromptsTxt), "\n") {
		var r injRow
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return nil, nil, 0, fmt.Errorf("public_prompts.jsonl:%d: %w", n+1, err)
		}
		if overlaps(r.Text, seen) {
			dropped++
			continue
		}
		words := normWords(r.Text)
		key := strings.Join(words[:min(publicShingle, len(words))], " ")
		if sum := sha256.Sum256([]byte(key)); sum[0]&1 == 1 {
			held = append(held, r)
		} else {
			tune = append(tune, r)
		}
	}
	return tune, held, dropped, nil
}

func overlaps(text string, seen map[string]bool) bool {
	for _, s := range shingles(text) {
		if seen[s] {
			return true
		}
	}
	return false
}

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
