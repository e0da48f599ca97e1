package config

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// exampleFile is the example settings file at the repository root: every
// setting svc reads, with its default.
const exampleFile = "../../svc.example.yaml"

// mentionLine matches a line of the example file that names a setting,
// active ("NAME: value") or a commented example ("# NAME: value").
var mentionLine = regexp.MustCompile(`(?m)^(#\s*)?([A-Z][A-Z0-9_]*|sso(?:\.[a-z_]+)+):[ \t]*(.*)$`)

// recorder is a Source that notes every name looked up in it.
type recorder struct {
	Source
	read map[string]bool
}

func (r recorder) Lookup(name string) (string, bool) {
	r.read[name] = true
	return r.Source.Lookup(name)
}

// TestExampleFileLoads loads svc.example.yaml as SVC_CONFIG would (unknown
// names refused) and checks that its active values are svc's defaults.
func TestExampleFileLoads(t *testing.T) {
	active, _ := exampleSettings(t)
	got, err := fromSource(active, built, active)
	if err != nil {
		t.Fatalf("%s does not load: %v", exampleFile, err)
	}
	want, err := FromSource(Map{}, built)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("%s: the active values are not the defaults (-default +file):\n%s", exampleFile, d)
	}
}

// TestExampleFileExamplesLoad loads the file with its commented examples
// (secrets, provider settings, alternatives) put in: each must be a setting
// svc accepts, with a valid value.
func TestExampleFileExamplesLoad(t *testing.T) {
	active, examples := exampleSettings(t)
	if len(examples) < 10 {
		t.Fatalf("found %d commented examples in %s, want the secrets and provider settings", len(examples), exampleFile)
	}
	all := Map{}
	for k, v := range active {
		all[k] = v
	}
	for k, v := range examples {
		all[k] = v
	}
	c, err := fromSource(all, built, all)
	if err != nil {
		t.Fatalf("%s with its commented examples put in does not load: %v", exampleFile, err)
	}
	if p := c.Providers["mylab"]; p.APIBase == "" || p.APIKey == "" {
		t.Errorf("the example's MYLAB_* provider was not read: %+v", p)
	}
}

// TestExampleFileMentionsEverySetting fails when config reads a setting that
// svc.example.yaml does not mention, so a new setting cannot be left out.
func TestExampleFileMentionsEverySetting(t *testing.T) {
	text := readExample(t)
	active, examples := exampleSettings(t)
	withExamples := Map{}
	for k, v := range active {
		withExamples[k] = v
	}
	for k, v := range examples {
		withExamples[k] = v
	}
	// Settings may be read only on some paths (a provider's, a split
	// process's): read from several sources and take every name.
	read := map[string]bool{}
	for _, src := range []Map{{}, active, withExamples, {"SERVICE_TYPE": Proxy}} {
		_, _ = fromSource(recorder{Source: src, read: read}, built, nil)
	}
	if len(read) < 40 {
		t.Fatalf("recorded %d names read, want every setting: is the recorder still in the parser's path?", len(read))
	}
	if missing := unmentioned(text, read); len(missing) > 0 {
		t.Errorf("config reads settings that %s does not mention: %s; add each with its default and a one-line comment",
			exampleFile, strings.Join(missing, ", "))
	}

	t.Run("the check catches a setting taken out", func(t *testing.T) {
		cut := regexp.MustCompile(`(?m)^PROXY_PORT:.*\n`).ReplaceAllString(text, "")
		if got := unmentioned(cut, read); len(got) != 1 || got[0] != "PROXY_PORT" {
			t.Errorf("with PROXY_PORT cut from the file: got %v, want [PROXY_PORT]", got)
		}
	})
}

// unmentioned returns the names of read that text mentions on no line of its own.
func unmentioned(text string, read map[string]bool) []string {
	mentioned := map[string]bool{}
	for _, m := range mentionLine.FindAllStringSubmatch(text, -1) {
		mentioned[m[2]] = true
	}
	var out []string
	for name := range read {
		if !mentioned[name] {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func readExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// exampleSettings returns the example file's active settings (through
// LoadFile, as svc reads it) and its commented examples, without the
// pending settings config does not know yet.
func exampleSettings(t *testing.T) (active, examples Map) {
	t.Helper()
	active, err := LoadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, m := range mentionLine.FindAllStringSubmatch(readExample(t), -1) {
		if m[1] != "" {
			lines = append(lines, m[2]+": "+m[3])
		}
	}
	f := t.TempDir() + "/examples.yaml"
	if err := os.WriteFile(f, []byte(strings.Join(lines, "\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	examples, err = LoadFile(f)
	if err != nil {
		t.Fatalf("the commented examples of %s are not a YAML map of settings (a name twice?): %v", exampleFile, err)
	}
	return active, examples
}
