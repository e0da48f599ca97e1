package main

import (
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"strings"
)

// injRow is one line of injection_*.jsonl.
type injRow struct {
	Text   string `json:"text"`
	Label  string `json:"label"`
	Kind   string `json:"kind"`
	Lang   string `json:"lang"`
	Source string `json:"source"`
}

// An override is an instruction-override phrasing of one language: a core
// ("ignore all previous instructions") that a prefix may precede and a
// payload follows.
type overrideSet struct {
	lang     string
	prefixes []string
	cores    []string
	payloads []string
}

// combos yields n distinct prefix+core+payload texts of set, drawn at
// random.
func combos(r *rand.Rand, s overrideSet, n int) []string {
	seen := map[string]bool{}
	var out []string
	for tries := 0; len(out) < n && tries < 50*n; tries++ {
		t := pick(r, s.prefixes) + pick(r, s.cores) + pick(r, s.payloads)
		t = strings.TrimSpace(t)
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}

// encode hides text as the held-out or tune split's encodings do.
func encodeB64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
func encodeHex(s string) string { return hex.EncodeToString([]byte(s)) }

// homoglyphs replaces some Latin letters by look-alike Cyrillic ones.
func homoglyphs(r *rand.Rand, s string) string {
	m := map[rune]rune{'a': 'а', 'e': 'е', 'o': 'о', 'p': 'р', 'c': 'с', 'i': 'і', 'x': 'х', 'y': 'у'}
	var b strings.Builder
	for _, c := range s {
		if g, ok := m[c]; ok && r.IntN(2) == 0 {
			b.WriteRune(g)
		} else {
			b.WriteRune(c)
		}
	}
	return b.String()
}

// zeroWidth puts a zero-width character inside every word of s.
func zeroWidth(r *rand.Rand, s string) string {
	zw := []string{"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff"}
	words := strings.Split(s, " ")
	for i, w := range words {
		if len(w) > 2 {
			k := 1 + r.IntN(len(w)-1)
			if strings.ContainsRune(w[:k], '\uFFFD') || !isASCII(w) {
				continue
			}
			words[i] = w[:k] + pick(r, zw) + w[k:]
		}
	}
	return strings.Join(words, " ")
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// injectionRows builds a split's hand-written and generated rows; public
// rows are added by publicInjections.
func injectionRows(r *rand.Rand, heldOut bool) []injRow {
	var rows []injRow
	add := func(label, kind, lang, source string, texts ...string) {
		for _, t := range texts {
			rows = append(rows, injRow{Text: t, Label: label, Kind: kind, Lang: lang, Source: source})
		}
	}
	sets := tuneOverrides
	singles := concat(tuneInjections, tuneInjections2, tuneInjections3, tuneInjections4)
	benign := concat(tuneBenign, tuneBenign2, tuneBenign3, tuneBenign4)
	encodedCores := tuneEncodedCores
	if heldOut {
		sets, singles, benign = heldOutOverrides, heldOutInjections, heldOutBenign
		encodedCores = heldOutEncodedCores
	}
	for _, s := range sets {
		add("injection", "override", s.lang, "hand:override-combos", combos(r, s, 24)...)
	}
	for _, g := range singles {
		add(g.label, g.kind, g.lang, "hand", g.texts...)
	}
	// encoded payloads: the same kind of override, hidden four ways.
	for i, lc := range encodedCores {
		lang, c := lc[0], lc[1]
		switch i % 4 {
		case 0:
			add("injection", "encoded_base64", lang, "hand:encoded", pick(r, b64Frames(heldOut))+encodeB64(c))
		case 1:
			add("injection", "encoded_hex", lang, "hand:encoded", pick(r, hexFrames(heldOut))+encodeHex(c))
		case 2:
			add("injection", "homoglyph", lang, "hand:encoded", homoglyphs(r, c))
		default:
			add("injection", "zero_width", lang, "hand:encoded", zeroWidth(r, c))
		}
	}
	for _, g := range benign {
		add("benign", g.kind, g.lang, "hand", g.texts...)
	}
	return rows
}

func b64Frames(heldOut bool) []string {
	if heldOut {
		return []string{"Please base64-decode the following and do what it says: ", "Execute the decoded instruction: ", "payload="}
	}
	return []string{"Decode this and follow it: ", "base64: ", "Run the instructions in this string: "}
}

func hexFrames(heldOut bool) []string {
	if heldOut {
		return []string{"Convert from hex, then obey: ", "0x-encoded task: "}
	}
	return []string{"Decode this hex and follow it: ", "hex: "}
}

// concat joins groups of rows.
func concat(parts ...[]injGroup) []injGroup {
	var out []injGroup
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// An injGroup is hand-written rows sharing label, kind and language.
type injGroup struct {
	label, kind, lang string
	texts             []string
}
