package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Texts the injection detector is tuned on outside this generator's tune
// split. Held-out rows must share no run of words with them: a paraphrase
// of a held-out prompt in any of them is tuned on as surely as one in the
// tune split.

// tunedOn is every text package injection tunes or trains on outside the
// quality sets: its hand-written sets (testdata/generalise*.jsonl, which
// the rules were tuned on and injection.TrainingSets reads for the learned
// blend), the public rows the learned blend trains on and the public dev
// set it is chosen on (testdata/train_public.jsonl, dev_public.jsonl), and
// the string literals of its tests (the table tests' prompts).
// injDir is package injection's directory; each row's Source names the
// file and line.
func tunedOn(injDir string) ([]injRow, error) {
	sets, err := filepath.Glob(filepath.Join(injDir, "testdata", "generalise*.jsonl"))
	if err != nil {
		return nil, err
	}
	if len(sets) == 0 {
		return nil, fmt.Errorf("no generalise*.jsonl in %s/testdata", injDir)
	}
	sets = append(sets, filepath.Join(injDir, "testdata", "train_public.jsonl"), filepath.Join(injDir, "testdata", "dev_public.jsonl"))
	var rows []injRow
	for _, path := range sets {
		r, err := readSet(path)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	tests, err := filepath.Glob(filepath.Join(injDir, "*_test.go"))
	if err != nil {
		return nil, err
	}
	if len(tests) == 0 {
		return nil, fmt.Errorf("no tests in %s", injDir)
	}
	sort.Strings(tests)
	for _, path := range tests {
		r, err := stringLiterals(path)
		if err != nil {
			return nil, err
		}
		rows = append(rows, r...)
	}
	return rows, nil
}

// readSet reads a labelled JSON-lines set; each row's Source is its file
// and line.
func readSet(path string) ([]injRow, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var rows []injRow
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<22)
	for n := 1; sc.Scan(); n++ {
		var r injRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		r.Source = fmt.Sprintf("%s:%d", filepath.Base(path), n)
		rows = append(rows, r)
	}
	return rows, sc.Err()
}

// stringLiterals are the string constants of a Go file: each literal, and
// each sum of literals ("a" + "b") whole.
func stringLiterals(path string) ([]injRow, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	var rows []injRow
	ast.Inspect(f, func(n ast.Node) bool {
		e, ok := n.(ast.Expr)
		if !ok {
			return true
		}
		s, ok := literalSum(e)
		if !ok {
			return true
		}
		p := fset.Position(e.Pos())
		rows = append(rows, injRow{Text: s, Source: fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)})
		return false
	})
	return rows, nil
}

// literalSum is the value of e when it is a string literal or a sum of
// them.
func literalSum(e ast.Expr) (string, bool) {
	switch e := e.(type) {
	case *ast.BasicLit:
		if e.Kind != token.STRING {
			return "", false
		}
		s, err := strconv.Unquote(e.Value)
		return s, err == nil
	case *ast.BinaryExpr:
		if e.Op != token.ADD {
			return "", false
		}
		x, ok := literalSum(e.X)
		if !ok {
			return "", false
		}
		y, ok := literalSum(e.Y)
		return x + y, ok
	case *ast.ParenExpr:
		return literalSum(e.X)
	}
	return "", false
}

// coreRows are a split's encoded cores as rows: the texts it hides in
// base64, hex, look-alike letters and zero-width characters, compared as
// they read once decoded.
func coreRows(cores [][2]string) []injRow {
	rows := make([]injRow, len(cores))
	for i, c := range cores {
		rows[i] = injRow{Text: c[1], Lang: c[0], Source: "encoded core"}
	}
	return rows
}

// contentRun is the length, in content words, of the runs the looser
// check compares: paraphrases that change the small words ("the rules
// you received before my first message" / "the rules you got before my
// first message") share them where they share no publicShingle words.
const contentRun = 5

// contentRuns are the runs of contentRun content words of text: its
// normWords without stop words, one-letter words and words with a digit
// (numbers, hex bytes: "20 61 6e 64" is no paraphrase).
func contentRuns(text string) []string { return contentRunsOf(text, contentRun) }

// contentRunsOf are the runs of n content words of text.
func contentRunsOf(text string, n int) []string {
	var w []string
	for _, x := range normWords(text) {
		if len([]rune(x)) > 1 && !stopWords[x] && !strings.ContainsAny(x, "0123456789") {
			w = append(w, x)
		}
	}
	var out []string
	for i := 0; i+n <= len(w); i++ {
		out = append(out, strings.Join(w[i:i+n], " "))
	}
	return out
}

// stopWords are the function words of the four languages: articles,
// pronouns, prepositions, conjunctions, auxiliaries and modals, and a few
// quantifiers and adverbs.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(stopWordsEN + stopWordsDE + stopWordsES + stopWordsFR) {
		m[w] = true
	}
	return m
}()

const (
	stopWordsEN = ` the an and or but nor so yet if then than that this these those there here it its
	me my mine we us our ours you your yours he him his she her hers they them their theirs who whom
	whose which what when where why how is are was were be been being am do does did done doing have has
	had having will would shall should can could may might must to of in on at by for from with without
	into onto about as up down out over under again once all any both each few more most other some
	such no not only own same too very just also now ll re ve don doesn didn isn aren wasn weren won
	wouldn shouldn couldn can't please`
	stopWordsDE = ` der die das den dem des ein eine einen einem einer eines und oder aber doch wenn dann
	als wie so zu zum zur im in am an auf aus bei mit nach von vom vor für über unter um durch ohne
	gegen bis ich du er sie es wir ihr mich dich sich uns euch mir dir ihm ihn ihnen mein meine meinen
	meinem meiner meines dein deine deinen deinem deiner deines sein seine seinen seinem seiner ihre
	ihren ihrem ihrer unser unsere euer eure ist sind war waren bin bist seid hat habe hast haben hatte
	hatten wird wirst werden wurde wurden kann kannst können muss musst müssen soll sollst sollen will
	willst wollen darf darfst dürfen nicht kein keine keinen auch noch nur schon sehr dass was wer wo
	hier da dies diese dieser dieses diesen jetzt alle alles allen bitte `
	stopWordsES = ` el la los las un una unos unas y o pero si no que de del al a en con por para sin
	sobre entre hasta desde yo tú tu te ti mi mis me nos os se su sus lo le les él ella ellos ellas
	nosotros vosotros usted ustedes este esta estos estas esto ese esa esos esas eso es son era eran
	fue ser estar está están estás estoy hay ha has he han hemos haber muy más ya como cuando donde qué
	quién todo todos toda todas también solo ahora por favor `
	stopWordsFR = ` le la les un une des du de et ou mais si ne pas que qu qui quoi au aux en dans par
	pour sur sous avec sans entre je tu il elle on nous vous ils elles me te se moi toi lui leur leurs
	mon ma mes ton ta tes son sa ses notre votre nos vos ce cet cette ces ça est sont était étaient
	être avoir as ai ont avez avons fait plus très tout tous toute toutes aussi maintenant `
)
