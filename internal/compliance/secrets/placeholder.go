package secrets

import (
	"math"
	"strings"
	"sync"
	"unicode/utf8"

	ahocorasick "github.com/BobuSumisu/aho-corasick"
)

// entropy is the Shannon entropy of s in bits per character, over runes as
// gitleaks counts it.
func entropy(s string) float64 {
	if s == "" {
		return 0
	}
	var counts [256]int
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
		counts[s[i]]++
	}
	if !ascii {
		return runeEntropy(s)
	}
	inv := 1 / float64(len(s))
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			f := float64(c) * inv
			h -= f * math.Log2(f)
		}
	}
	return h
}

func runeEntropy(s string) float64 {
	counts := map[rune]int{}
	n := 0
	for _, r := range s {
		counts[r]++
		n++
	}
	h := 0.0
	for _, c := range counts {
		f := float64(c) / float64(n)
		h -= f * math.Log2(f)
	}
	return h
}

// placeholderWords, found anywhere in a lower-cased candidate, mark a
// placeholder, a masked value, a variable reference or a documented
// example rather than a secret.
var placeholderWords = [][]byte{
	[]byte("example"), []byte("your"), []byte("xxxx"), []byte("****"), []byte("..."),
	[]byte("\u2026"), []byte("<"), []byte(">"), []byte("${"), []byte("{{"), []byte("}}"),
	[]byte("placeholder"), []byte("redacted"), []byte("dummy"), []byte("sample"),
	[]byte("changeme"), []byte("change_me"), []byte("change-me"), []byte("replace"),
	[]byte("insert"), []byte("_here"), []byte("-here"), []byte("todo"), []byte("fixme"),
	[]byte("abcdefgh"), []byte("bcdefghi"), []byte("12345678"), []byte("0123456"), []byte("98765432"),
	[]byte("getenv"), []byte("environ"), []byte("process.env"), []byte("env("), []byte("env["),
	[]byte("secrets."), []byte("vault:"), []byte("not_a_real"), []byte("notreal"), []byte("fake_"),
	[]byte("_fake"), []byte("-fake"), []byte("fake-"), []byte("invalid"), []byte("test_key"),
	[]byte("testkey"), []byte("mytoken"), []byte("my_token"), []byte("mysecret"), []byte("my_secret"),
	[]byte("secret_key"), []byte("secretkey"), []byte("api_key"), []byte("apikey"), []byte("password"),
	[]byte("secret"), []byte("test-key"), []byte("change-it"), []byte("changeit"),
}

// placeholderTrie finds placeholderWords in one pass.
var placeholderTrie = sync.OnceValue(func() *ahocorasick.Trie {
	b := ahocorasick.NewTrieBuilder()
	for _, w := range placeholderWords {
		b.AddPattern(w)
	}
	return b.Build()
})

// knownExamples are documented example values, published by the vendors
// as non-working samples.
var knownExamples = []string{
	"AKIAIOSFODNN7EXAMPLE",                                  // AWS access key ID (docs)
	"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",              // AWS secret access key (docs)
	"SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",           // signature of jwt.io's sample token
	"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0", // its head
}

// placeholder reports whether a candidate secret s (low: s lower-cased)
// is a placeholder rather than a secret: one of the marker words, a
// documented example, a variable reference, too few distinct characters,
// a long run of one character, or a typed sequence.
func placeholder(s string, low []byte) bool {
	if len(s) == 0 {
		return true
	}
	switch s[0] {
	case '$', '%':
		return true
	}
	marked := false
	placeholderTrie().Walk(low, func(_, _, _ int64) bool {
		marked = true
		return false
	})
	if marked {
		return true
	}
	for _, x := range knownExamples {
		if len(s) >= len(x) && strings.Contains(s, x) || len(x) > len(s) && len(s) >= 20 && strings.Contains(x, s) {
			return true
		}
	}
	var seen [256]bool
	distinct, run, best := 0, 0, 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !seen[c] {
			seen[c] = true
			distinct++
		}
		if i > 0 && s[i-1] == c {
			run++
		} else {
			run = 1
		}
		best = max(best, run)
	}
	if best >= 6 || len(s) >= 8 && distinct < 5 {
		return true
	}
	return sequential(s)
}

// sequential reports a hand-typed sequence ("abc123def456…"): a third or
// more of neighbouring characters ascending by one. Random strings have
// one such pair in 16 (hex) or in 62.
func sequential(s string) bool {
	if len(s) < 12 {
		return false
	}
	asc := 0
	for i := 1; i < len(s); i++ {
		if s[i] == s[i-1]+1 {
			asc++
		}
	}
	return asc*3 >= len(s)-1
}
