package archtest

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// archDoc is the architecture guide, relative to the module root, and
// whereHeading the heading of its list of packages.
const (
	archDoc      = "docs/ARCHITECTURE.md"
	whereHeading = "where things live"
)

// treePath matches a path in cmd/ or internal/ in running text:
// internal/store/memkv, `cmd/svc/`, internal/provider/catalog.go.
var treePath = regexp.MustCompile(`(?:^|[^\w./-])((?:cmd|internal)(?:/\w[\w.-]*)+)`)

// TestArchitectureDocListsEveryPackage keeps docs/ARCHITECTURE.md true: its
// "Where things live" list names every package directory under cmd/ and
// internal/, and every path it names exists.
func TestArchitectureDocListsEveryPackage(t *testing.T) {
	m, pkgs := tree(t)
	b, err := os.ReadFile(filepath.Join(m.root, archDoc))
	if err != nil {
		t.Fatal(err)
	}
	section, ok := markdownSection(string(b), whereHeading)
	if !ok {
		t.Fatalf("%s has no section headed %q listing the packages", archDoc, whereHeading)
	}
	listed := map[string]bool{}
	for _, p := range mentionedPaths(section) {
		listed[p] = true
		if _, err := os.Stat(filepath.Join(m.root, filepath.FromSlash(p))); err != nil {
			t.Errorf("%s lists %s under %q, which does not exist: fix or drop the line", archDoc, p, whereHeading)
		}
	}
	for _, p := range pkgs {
		if p.under("cmd", "internal") && !listed[p.rel] {
			t.Errorf("%s: package missing from %s: add a line under %q saying what it owns", p.rel, archDoc, whereHeading)
		}
	}
}

// markdownSection returns the body of the first section whose heading
// contains title (case-insensitive), up to the next heading of the same or a
// higher level. Fenced code blocks are not searched for headings.
func markdownSection(doc, title string) (string, bool) {
	var out []string
	level, fenced := 0, false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
		}
		if n := headingLevel(line); n > 0 && !fenced {
			if level > 0 && n <= level {
				break
			}
			if level == 0 && strings.Contains(strings.ToLower(line), title) {
				level = n
				continue
			}
		}
		if level > 0 {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n"), level > 0
}

func headingLevel(line string) int {
	n := len(line) - len(strings.TrimLeft(line, "#"))
	if n == 0 || n > 6 || !strings.HasPrefix(line[n:], " ") {
		return 0
	}
	return n
}

// mentionedPaths returns the cmd/ and internal/ paths of text, without a
// trailing slash or sentence punctuation.
func mentionedPaths(text string) []string {
	var out []string
	for _, sm := range treePath.FindAllStringSubmatch(text, -1) {
		out = append(out, strings.TrimRight(sm[1], ".-"))
	}
	return out
}

func TestMentionedPaths(t *testing.T) {
	text := "- `cmd/svc/` main. internal/store/memkv, (internal/provider/catalog.go). " +
		"See internal/llm/sse. Not xinternal/foo nor ../internal/bar nor `internal/`."
	got := strings.Join(mentionedPaths(text), " ")
	want := "cmd/svc internal/store/memkv internal/provider/catalog.go internal/llm/sse"
	if got != want {
		t.Errorf("mentionedPaths: got %q, want %q", got, want)
	}
}
