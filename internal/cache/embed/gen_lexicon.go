//go:build ignore

// Command gen_lexicon writes lexicon.txt.gz, the synonym and frequency data
// of the Local embedder, from the WordNet 3.0 database (Debian package
// wordnet-base, files under /usr/share/wordnet). Run it by hand, or with go
// generate in this directory, where the package is installed:
//
//	apt-get install -y wordnet-base
//	go generate ./internal/cache/embed/
//
// or: go run gen_lexicon.go -wordnet /usr/share/wordnet -out lexicon.txt.gz
//
// Each line of the output is "word<TAB>canonical<TAB>class pos": canonical
// is empty when the word is its own representative, class is
// floor(log2(1+n)), n the SemCor tag count of the canonical word, in hex, and
// pos the part of speech of the canonical word's first sense (n, v, a, r),
// with no space between them.
//
// Only single-word lower-case ASCII lemmas are kept. A lemma's meaning is
// taken to be its most frequent sense: the first synset listed for it, in the
// part of speech whose first sense is tagged most often (cntlist.rev). Words
// share a canonical word when they share that synset, the canonical word
// being the member with the most tags, except that
//
//   - protected words (technical terms: java, python, sort) and noFold words
//     (frequent merges read with -v and found wrong: travel/move) keep
//     their own;
//   - a word whose first sense has under minShare of its tags is ambiguous,
//     and keeps its own;
//   - British spellings (colour, summarise) take their American variant's;
//   - a lemma that is also a regular inflection of another (works, needs)
//     takes its base word's, as do irregular inflections (*.exc: went, mice).
//
// The output is sorted and does not depend on map iteration order: running
// the command twice gives the same bytes.
package main

import (
	"bufio"
	"compress/gzip"
	"flag"
	"fmt"
	"log"
	"maps"
	"math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// protected words are never folded, nor chosen as the canonical word of
// another: their everyday or technical sense in prompts is not WordNet's first
// sense (java is coffee there, python a snake).
var protected = strings.Fields(`
	java python ruby rust go swift perl shell kernel bash c r julia scala
	haskell lisp pascal ada dart elixir erlang fortran cobol kotlin lua
	docker git linux unix windows apple amazon google android chrome
	spring node react angular vue django flask rails excel word office
	token tokens model models prompt cache cookie cookies thread threads
	string strings array tree graph table tables key keys hash map maps
	class object objects function method package module bug bugs patch
	port host server client proxy gateway route router cloud container
	pod cluster node nodes queue stack heap pipe socket stream channel
	mac pc bit byte bytes file files folder window mouse keyboard
	program programme programs code run test build deploy log logs query
	sort order filter merge branch commit pull push fork issue release
	record records field fields row column index schema type value
	`)

// noFold words keep their own features although their first sense is shared
// with a more frequent word: merges of frequent words, read in the output of
// -v, whose everyday senses differ (travel is not move, a task not a project).
var noFold = strings.Fields(`
	travel race task put lay individual director effect pursue faith degree
	main kid chief affair launch lay link bound pitch stuff fig off along
	straight instance particular portion responsibility swear swore
	`)

// variants are British spellings, folded to the canonical word of their
// American variant when the two share a sense.
var variants = [][2]string{
	{"ise", "ize"}, {"isation", "ization"}, {"yse", "yze"}, {"our", "or"},
	{"tre", "ter"}, {"ogue", "og"}, {"ence", "ense"}, {"lled", "led"},
}

// minShare is the least share of a word's tags its first sense must have for
// the word to be folded: a word whose tags spread over several senses is
// ambiguous, and keeps its own features. Words with fewer than minTags tags
// have no such evidence, and are folded.
const (
	minShare = 0.2
	minTags  = 5
)

var posLetter = map[string]byte{"noun": 'n', "verb": 'v', "adj": 'a', "adv": 'r'}

type synset struct {
	pos   byte     // n v a r (satellites as a)
	words []string // single-word lower-case lemmas in order, "" for others
}

type sense struct {
	key   string // synset key: pos + offset
	count int
}

func main() {
	dir := flag.String("wordnet", "/usr/share/wordnet", "WordNet 3.0 dict directory")
	out := flag.String("out", "lexicon.txt.gz", "output file")
	verbose := flag.Bool("v", false, "print merges of frequent words to stderr")
	why := flag.String("why", "", "comma-separated words whose folding to explain on stderr")
	flag.Parse()

	counts := readCounts(filepath.Join(*dir, "cntlist.rev"))
	synsets := map[string]*synset{}
	tagged := map[string]map[string]int{} // lemma → synset key → tag count
	for _, p := range []string{"noun", "verb", "adj", "adv"} {
		readData(filepath.Join(*dir, "data."+p), synsets, counts, tagged)
	}
	first := map[string]sense{} // lemma → its most frequent sense
	freq := map[string]int{}    // lemma → tag count over all senses
	for lemma, m := range tagged {
		for _, c := range m {
			freq[lemma] += c
		}
	}
	for _, p := range []string{"noun", "verb", "adj", "adv"} {
		readIndex(filepath.Join(*dir, "index."+p), tagged, first)
	}
	prot, keep := map[string]bool{}, map[string]bool{}
	for _, w := range protected {
		prot[w] = true
	}
	for _, w := range noFold {
		keep[w] = true
	}

	canon := map[string]string{}
	for w, s := range first {
		if !plain(w) {
			continue
		}
		canon[w] = w
		if prot[w] || keep[w] || freq[w] >= minTags && float64(s.count) < minShare*float64(freq[w]) {
			continue
		}
		// The synset's members that have it as their first sense, ties
		// going to the earliest listed.
		best, bestN := "", -1
		for _, r := range synsets[s.key].words {
			if r == "" || prot[r] || first[r].key != s.key {
				continue
			}
			if r != w && freq[r] >= minTags && float64(first[r].count) < minShare*float64(freq[r]) {
				continue
			}
			if freq[r] > bestN {
				best, bestN = r, freq[r]
			}
		}
		if best != "" {
			canon[w] = best
		}
	}
	// Each stage below reads the result of the stage before, so that the
	// output does not depend on map iteration order.
	spelled := maps.Clone(canon)
	for w := range spelled {
		if prot[w] || keep[w] {
			continue
		}
		for _, v := range variants {
			if !strings.HasSuffix(w, v[0]) {
				continue
			}
			am := strings.TrimSuffix(w, v[0]) + v[1]
			if c, ok := spelled[am]; ok && shareSense(tagged[w], tagged[am]) {
				canon[w] = c
			}
		}
	}
	// A word that is also a regular inflection of another word (works, needs,
	// grounds) is almost always used as that inflection in prompts: it folds
	// as its base word does, not by its own first sense (plant, inevitably,
	// evidence).
	before := maps.Clone(canon)
	for w, c := range before {
		if c == w || prot[w] {
			continue
		}
		for _, d := range detachments {
			base, ok := strings.CutSuffix(w, d[0])
			if !ok || len(base) < 2 {
				continue
			}
			base += d[1]
			if bc, ok := before[base]; ok && base != w {
				canon[w] = bc
				break
			}
		}
	}
	// Irregular inflections fold to their base's canonical word, unless they
	// are words in their own right.
	// Only a base whose first sense has the inflection's part of speech
	// lends its canonical word: kidding is not a child.
	lemmas := maps.Clone(canon)
	for _, p := range []string{"noun", "verb", "adj", "adv"} {
		for infl, base := range readExc(filepath.Join(*dir, p+".exc")) {
			if _, ok := lemmas[infl]; ok || !plain(infl) {
				continue
			}
			if c, ok := lemmas[base]; ok {
				if fb, ok := first[base]; !ok || fb.key[0] != posLetter[p] {
					c = base
				}
				canon[infl] = c
				if freq[infl] == 0 {
					freq[infl] = freq[base]
				}
			}
		}
	}

	for _, w := range strings.Split(*why, ",") {
		if s, ok := first[w]; ok {
			fmt.Fprintf(os.Stderr, "%s: first sense %s (%d of %d tags), synset %v, canonical %s\n",
				w, s.key, s.count, freq[w], synsets[s.key].words, canon[w])
		}
	}
	words := make([]string, 0, len(canon))
	for w := range canon {
		words = append(words, w)
	}
	slices.Sort(words)
	f, err := os.Create(*out)
	if err != nil {
		log.Fatal(err)
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		log.Fatal(err)
	}
	bw := bufio.NewWriter(zw)
	merged := 0
	for _, w := range words {
		c := canon[w]
		n := freq[c]
		if c == w {
			c = ""
		} else {
			merged++
			if *verbose && freq[w] >= 20 {
				fmt.Fprintf(os.Stderr, "%s(%d) → %s(%d)\n", w, freq[w], c, n)
			}
		}
		pos := byte('n')
		if s, ok := first[canon[w]]; ok {
			pos = s.key[0]
		}
		fmt.Fprintf(bw, "%s\t%s\t%x%c\n", w, c, bits.Len(uint(n)), pos)
	}
	if err := bw.Flush(); err != nil {
		log.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		log.Fatal(err)
	}
	if err := f.Close(); err != nil {
		log.Fatal(err)
	}
	log.Printf("%d words, %d folded to another", len(words), merged)
}

// detachments are WordNet's rules for the base form of a regular
// inflection, as the Local embedder applies them.
var detachments = [][2]string{
	{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"},
	{"shes", "sh"}, {"ies", "y"}, {"es", "e"}, {"es", ""},
	{"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""},
}

// shareSense reports whether two words' sense sets meet.
func shareSense(a, b map[string]int) bool {
	for k := range a {
		if _, ok := b[k]; ok {
			return true
		}
	}
	return false
}

// plain reports whether w is a lower-case ASCII word of two letters or more.
func plain(w string) bool {
	if len(w) < 2 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// readCounts reads cntlist.rev: sense key → tag count.
func readCounts(path string) map[string]int {
	m := map[string]int{}
	each(path, func(f []string) {
		if len(f) == 3 {
			n, _ := strconv.Atoi(f[2])
			m[f[0]] += n
		}
	})
	return m
}

// readData reads one data.* file into synsets, and the tag count of every
// sense of a single-word lemma into tagged.
func readData(path string, synsets map[string]*synset, counts map[string]int, tagged map[string]map[string]int) {
	type word struct {
		lemma string
		lexID int
	}
	heads := map[string]word{} // "a"+offset → first word of a head synset
	var sats []struct {
		key, lexFile, head string
		words              []word
	}
	each(path, func(f []string) {
		if len(f) < 4 || len(f[0]) != 8 {
			return // licence header
		}
		pos := f[2][0]
		n, _ := strconv.ParseInt(f[3], 16, 32)
		ws := make([]word, n)
		for i := range ws {
			l := strings.ToLower(f[4+2*i])
			if j := strings.IndexByte(l, '('); j > 0 {
				l = l[:j] // adjective markers: (a) (p) (ip)
			}
			id, _ := strconv.ParseInt(f[5+2*i], 16, 32)
			ws[i] = word{l, int(id)}
		}
		spos := pos
		if pos == 's' {
			spos = 'a'
		}
		key := string(spos) + f[0]
		ss := &synset{pos: spos}
		for _, w := range ws {
			if plain(w.lemma) {
				ss.words = append(ss.words, w.lemma)
			} else {
				ss.words = append(ss.words, "")
			}
		}
		synsets[key] = ss
		if pos == 'a' && len(ws) > 0 {
			heads[key] = ws[0]
		}
		num := map[byte]string{'n': "1", 'v': "2", 'a': "3", 'r': "4", 's': "5"}[pos]
		if pos == 's' {
			// The head is the adjective this satellite's & pointer names.
			p := 4 + 2*int(n)
			np, _ := strconv.Atoi(f[p])
			head := ""
			for i := 0; i < np; i++ {
				if f[p+1+4*i] == "&" {
					head = "a" + f[p+2+4*i]
					break
				}
			}
			sats = append(sats, struct {
				key, lexFile, head string
				words              []word
			}{key, f[1], head, ws})
			return
		}
		for _, w := range ws {
			sk := fmt.Sprintf("%s%%%s:%s:%02d::", w.lemma, num, f[1], w.lexID)
			add(tagged, w.lemma, key, counts[sk])
		}
	})
	for _, s := range sats {
		h := heads[s.head]
		for _, w := range s.words {
			sk := fmt.Sprintf("%s%%5:%s:%02d:%s:%02d", w.lemma, s.lexFile, w.lexID, h.lemma, h.lexID)
			add(tagged, w.lemma, s.key, counts[sk])
		}
	}
}

func add(tagged map[string]map[string]int, lemma, key string, n int) {
	if tagged[lemma] == nil {
		tagged[lemma] = map[string]int{}
	}
	tagged[lemma][key] += n
}

// readIndex reads one index.* file, keeping for each lemma the first sense
// of this part of speech if it is tagged more often than the one kept so far.
func readIndex(path string, tagged map[string]map[string]int, first map[string]sense) {
	each(path, func(f []string) {
		if len(f) < 4 || strings.HasPrefix(f[0], " ") {
			return
		}
		lemma, pos := f[0], f[1]
		if pos == "s" {
			pos = "a"
		}
		nSyn, _ := strconv.Atoi(f[2])
		off := f[len(f)-nSyn]
		key := pos + off
		s := sense{key: key, count: tagged[lemma][key]}
		if old, ok := first[lemma]; !ok || s.count > old.count {
			first[lemma] = s
		}
	})
}

// readExc reads one *.exc file: inflected form → base form (the first).
func readExc(path string) map[string]string {
	m := map[string]string{}
	each(path, func(f []string) {
		if len(f) >= 2 {
			if _, ok := m[f[0]]; !ok {
				m[f[0]] = f[1]
			}
		}
	})
	return m
}

// each calls fn with the fields of every line of the file at path.
func each(path string, fn func([]string)) {
	f, err := os.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		if line := sc.Text(); !strings.HasPrefix(line, "  ") {
			fn(strings.Fields(line))
		}
	}
	if err := sc.Err(); err != nil {
		log.Fatal(err)
	}
}
