// Command gen writes the compliance quality sets of
// internal/compliance/quality/testdata: the PII and secret rows with their
// spans, the hard negatives and the prompt-injection rows, each in a tune
// and a held-out split, and the fresh held-out injection set (no tune
// split). It is deterministic (fixed seeds): running it again
// rewrites the same bytes. Run it from internal/compliance/quality with
// `go generate` or `go run ./gen`; -out names another directory.
//
// The values are random and valid by their own rules (Luhn, mod-97, SSN
// areas, libphonenumber): none is a real person's or a real key.
package main

import (
	"bytes"
	_ "embed"
	"encoding/json"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

//go:embed presidio_templates.txt
var presidioTxt string

// Seeds of the two splits.
const (
	tuneSeed    = 13
	heldOutSeed = 1313
)

// quota is how many entities of each type a split holds at least.
var quota = map[string]int{
	"EMAIL": 180, "PHONE": 180, "SSN": 170, "CREDIT_CARD": 180, "IBAN": 170, "IP_ADDRESS": 170,
	"PERSON": 170, "API_KEY": 180, "AWS_ACCESS_KEY": 160, "AWS_SECRET_KEY": 160,
	"PRIVATE_KEY": 60, "JWT": 60, "DATABASE_URL": 80, "DATE_OF_BIRTH": 80,
}

// typeOfTag is the entity type a placeholder yields, for choosing
// templates by the type they hold.
var typeOfTag = map[string]string{
	"EMAIL": "EMAIL", "EMAIL2": "EMAIL", "PHONE": "PHONE", "SSN": "SSN", "CARD": "CREDIT_CARD", "IBAN": "IBAN",
	"IP": "IP_ADDRESS", "PERSON": "PERSON", "PERSON2": "PERSON", "PERSON3": "PERSON", "FIRST": "PERSON",
	"FIRST2": "PERSON", "LAST": "PERSON", "LAST2": "PERSON", "KEY": "API_KEY", "AKID": "AWS_ACCESS_KEY",
	"AKSECRET": "AWS_SECRET_KEY", "PEM": "PRIVATE_KEY", "JWT": "JWT", "DBURL": "DATABASE_URL", "DOB": "DATE_OF_BIRTH",
}

func main() {
	out := flag.String("out", "testdata", "directory to write the sets to")
	inj := flag.String("injection", "../injection", "package injection's directory (its generalise*.jsonl sets and tests are tuned on)")
	flag.Parse()
	if err := run(*out, *inj); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

// run writes every file of the sets into dir; injDir is package
// injection's directory.
func run(dir, injDir string) error {
	files, err := build(injDir)
	if err != nil {
		return err
	}
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// build renders every file, by name. injDir is package injection's
// directory: what it tunes on (tunedOn) keeps public and fresh rows out of
// the held-out splits, and its held-back sets (heldBack) keep fresh rows
// out too.
func build(injDir string) (map[string][]byte, error) {
	files, _, err := buildAll(injDir)
	return files, err
}

// buildAll is build, with what the fresh set dropped (freshSet).
func buildAll(injDir string) (files map[string][]byte, fresh freshStats, err error) {
	tuned, err := tunedOn(injDir)
	if err != nil {
		return nil, fresh, err
	}
	dev, err := heldBack(injDir)
	if err != nil {
		return nil, fresh, err
	}
	presTune, presHeld := presidioTemplates()
	files = map[string][]byte{}
	var heldOutInj []injRow
	for _, sp := range []struct {
		name      string
		seed      uint64
		split     *split
		templates []template
		heldOut   bool
	}{
		{"tune", tuneSeed, tuneSplit(), append(tuneTemplates, presTune...), false},
		{"heldout", heldOutSeed, heldOutSplit(), append(heldOutTemplates, presHeld...), true},
	} {
		// one stream a file, so growing one file leaves the others as they are.
		g := &gen{r: rand.New(rand.NewPCG(sp.seed, 1)), s: sp.split}
		pii := piiRows(g, sp.templates)
		neg := hardNegRows(rand.New(rand.NewPCG(sp.seed, 2)), sp.heldOut)
		inj := injectionRows(rand.New(rand.NewPCG(sp.seed, 3)), sp.heldOut)
		inj = append(inj, publicInjections(sp.heldOut)...)
		if !sp.heldOut {
			inj = append(inj, carrierRows(rand.New(rand.NewPCG(sp.seed, 4)))...)
		}
		if sp.heldOut {
			heldOutInj = append(inj, coreRows(heldOutEncodedCores)...)
		} else {
			tuned = append(tuned, inj...)
			tuned = append(tuned, coreRows(tuneEncodedCores)...)
			for _, r := range pii {
				tuned = append(tuned, injRow{Text: r.Text, Source: r.Source})
			}
			for _, r := range neg {
				tuned = append(tuned, injRow{Text: r.Text, Source: r.Source})
			}
		}
		if files["pii_"+sp.name+".jsonl"], err = jsonl(pii); err != nil {
			return nil, fresh, err
		}
		if files["hardneg_"+sp.name+".jsonl"], err = jsonl(neg); err != nil {
			return nil, fresh, err
		}
		if files["injection_"+sp.name+".jsonl"], err = jsonl(inj); err != nil {
			return nil, fresh, err
		}
	}
	pubTune, pubHeld, _, err := publicSplit(tuned, heldOutInj)
	if err != nil {
		return nil, fresh, err
	}
	if files[publicSetName+"_tune.jsonl"], err = jsonl(pubTune); err != nil {
		return nil, fresh, err
	}
	if files[publicSetName+"_heldout.jsonl"], err = jsonl(pubHeld); err != nil {
		return nil, fresh, err
	}
	// The fresh set keeps away from every text tuned on, the public tune
	// split's included.
	freshRows, fresh, err := freshSet(append(tuned, pubTune...), dev)
	if err != nil {
		return nil, fresh, err
	}
	if files[freshSetName+"_heldout.jsonl"], err = jsonl(freshRows); err != nil {
		return nil, fresh, err
	}
	return files, fresh, nil
}

// presidioTemplates converts presidio-research's templates to this
// generator's placeholders and deals them to the splits by line parity.
func presidioTemplates() (tune, heldOut []template) {
	for i, line := range strings.Split(strings.TrimSpace(presidioTxt), "\n") {
		t := template{source: fmt.Sprintf("presidio-research:templates.txt#%d", i+1), text: convertPresidio(line)}
		if i%2 == 0 {
			tune = append(tune, t)
		} else {
			heldOut = append(heldOut, t)
		}
	}
	return tune, heldOut
}

// convertPresidio rewrites presidio's [PLACEHOLDER]s; repeated people get
// distinct slots.
func convertPresidio(line string) string {
	simple := map[string]string{
		"[CREDIT_CARD_NUMBER]": "{CARD}", "[EMAIL_ADDRESS]": "{EMAIL}", "[PHONE_NUMBER]": "{PHONE}",
		"[IP_ADDRESS]": "{IP}", "[IBAN]": "{IBAN}", "[US_SSN]": "{SSN}", "[BIRTHDAY]": "{DOB}",
		"[COUNTRY]": "{COUNTRY}", "[CITY]": "{CITY}", "[ORGANIZATION]": "{ORG}", "[TITLE]": "Dr.",
	}
	for k, v := range simple {
		line = strings.ReplaceAll(line, k, v)
	}
	slots := map[string][]string{
		"[PERSON]":     {"{PERSON}", "{PERSON2}", "{PERSON3}"},
		"[FIRST_NAME]": {"{FIRST}", "{FIRST2}"},
		"[LAST_NAME]":  {"{LAST}", "{LAST2}"},
	}
	for k, vs := range slots {
		for _, v := range vs {
			line = strings.Replace(line, k, v, 1)
		}
	}
	return line
}

// piiRows renders every template once, then templates holding the type
// furthest below its quota until every quota is met.
func piiRows(g *gen, templates []template) []piiRow {
	byType := map[string][]template{}
	for _, t := range templates {
		for typ := range typesOf(t.text) {
			byType[typ] = append(byType[typ], t)
		}
	}
	count := map[string]int{}
	seen := map[string]bool{}
	var rows []piiRow
	emit := func(t template) {
		text, ents := g.render(t.text)
		if seen[text] {
			return
		}
		seen[text] = true
		if ents == nil {
			ents = []entity{}
		}
		for _, e := range ents {
			count[e.Type]++
		}
		rows = append(rows, piiRow{Text: text, Entities: ents, Source: t.source})
	}
	for _, t := range templates {
		emit(t)
	}
	for range 100000 {
		need, worst := "", 1.0
		for _, typ := range sortedKeys(quota) {
			if f := float64(count[typ]) / float64(quota[typ]); f < worst && len(byType[typ]) > 0 {
				need, worst = typ, f
			}
		}
		if need == "" {
			break
		}
		emit(pick(g.r, byType[need]))
	}
	g.r.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
	return rows
}

// typesOf is the set of entity types template text's placeholders yield.
func typesOf(text string) map[string]bool {
	types := map[string]bool{}
	for {
		i := strings.IndexByte(text, '{')
		if i < 0 {
			return types
		}
		j := strings.IndexByte(text[i:], '}')
		if j < 0 {
			return types
		}
		tag := text[i+1 : i+j]
		if isTag(tag) {
			name, _, _ := strings.Cut(tag, ":")
			if typ := typeOfTag[name]; typ != "" {
				types[typ] = true
			}
			text = text[i+j+1:]
		} else {
			text = text[i+1:]
		}
	}
}

// hardNegRows renders each kind's frames with fresh values, perKind rows a
// kind.
func hardNegRows(r *rand.Rand, heldOut bool) []hardNegRow {
	const perKind = 20
	var rows []hardNegRow
	seen := map[string]bool{}
	for _, k := range negKinds {
		frames := k.tune
		if heldOut {
			frames = k.heldOut
		}
		for n, tries := 0, 0; n < perKind && tries < 100*perKind; tries++ {
			text := fmt.Sprintf(pick(r, frames), k.value(r, heldOut))
			if seen[text] {
				continue
			}
			seen[text] = true
			rows = append(rows, hardNegRow{Text: text, Kind: k.kind, Source: "generated:" + k.kind})
			n++
		}
	}
	return rows
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// jsonl encodes rows one a line, HTML characters unescaped.
func jsonl[T any](rows []T) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for _, r := range rows {
		if err := enc.Encode(r); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}
