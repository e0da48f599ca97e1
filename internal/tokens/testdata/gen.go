//go:build ignore

// gen writes the generated samples of the tokenizer corpus (corpus/gen-*.txt)
// from a fixed seed: go run gen.go (in this directory).
package main

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
)

func main() {
	r := rand.New(rand.NewPCG(10, 2026))
	bytesOf := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}
	// runes draws n characters from the ranges, uniformly.
	runes := func(n int, ranges ...[2]rune) string {
		var b strings.Builder
		for range n {
			rg := ranges[r.IntN(len(ranges))]
			b.WriteRune(rg[0] + rune(r.IntN(int(rg[1]-rg[0]+1))))
		}
		return b.String()
	}
	var uuids strings.Builder
	for range 24 {
		u := bytesOf(16)
		fmt.Fprintf(&uuids, "%x-%x-%x-%x-%x\n", u[0:4], u[4:6], u[6:8], u[8:10], u[10:])
	}
	files := map[string]string{
		"gen-base64-1.txt":  base64.StdEncoding.EncodeToString(bytesOf(1500)),
		"gen-base64-2.txt":  "data:image/png;base64," + base64.StdEncoding.EncodeToString(bytesOf(900)),
		"gen-base64url.txt": base64.RawURLEncoding.EncodeToString(bytesOf(1200)),
		"gen-hex.txt":       hex.EncodeToString(bytesOf(800)),
		"gen-uuids.txt":     uuids.String(),
		// Letters and digits in random order: no word a vocabulary knows.
		"gen-alnum.txt": runes(1500, [2]rune{'a', 'z'}, [2]rune{'A', 'Z'}, [2]rune{'0', '9'}),
		// Printable ASCII punctuation only.
		"gen-punct.txt": runes(1200, [2]rune{'!', '/'}, [2]rune{':', '@'}, [2]rune{'[', '`'}, [2]rune{'{', '~'}),
		// Rare CJK (Extension A and B), which byte-fallback vocabularies spell byte by byte.
		"gen-cjk-rare.txt": runes(400, [2]rune{0x3400, 0x4dbf}, [2]rune{0x20000, 0x2a6df}),
		// Common CJK, at random.
		"gen-cjk-common.txt": runes(600, [2]rune{0x4e00, 0x9fff}),
		// Symbols, arrows, box drawing, dingbats, emoji without joiners.
		"gen-symbols.txt": runes(500, [2]rune{0x2190, 0x21ff}, [2]rune{0x2500, 0x257f}, [2]rune{0x2700, 0x27bf}, [2]rune{0x1f300, 0x1f5ff}, [2]rune{0x1f900, 0x1f9ff}),
		// Letters of many scripts at random: Cyrillic, Greek, Arabic, Devanagari, Thai, Hangul, Ethiopic, Georgian.
		"gen-scripts.txt": runes(800, [2]rune{0x0400, 0x04ff}, [2]rune{0x0370, 0x03ff}, [2]rune{0x0600, 0x06ff}, [2]rune{0x0900, 0x097f}, [2]rune{0x0e00, 0x0e7f}, [2]rune{0xac00, 0xd7a3}, [2]rune{0x1200, 0x137f}, [2]rune{0x10a0, 0x10ff}),
		// Latin letters with combining marks (Zalgo-like).
		"gen-combining.txt": runes(900, [2]rune{'a', 'z'}, [2]rune{0x0300, 0x036f}),
		"gen-repeat-a.txt":  strings.Repeat("a", 2000),
		"gen-repeat-space.txt": "x" + strings.Repeat(" ", 1500) + "y" + strings.Repeat("\n", 300) +
			strings.Repeat("\t ", 200),
		"gen-digits.txt": runes(1500, [2]rune{'0', '9'}),
	}
	for name, text := range files {
		if err := os.WriteFile("corpus/"+name, []byte(text), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
}
