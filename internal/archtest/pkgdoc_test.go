package archtest

import (
	"go/parser"
	"go/token"
	"path"
	"strings"
	"testing"
)

// TestPackageDocs checks that every package under cmd/ and internal/ has a
// doc comment, in one of its non-test files, that says what it is: "Package
// <name> …", or "Command <name> …" for a main package (STYLE rule 8).
func TestPackageDocs(t *testing.T) {
	_, pkgs := tree(t)
	for _, p := range pkgs {
		if !p.under("cmd", "internal") {
			continue
		}
		want := "Package " + p.Name
		if p.Name == "main" {
			want = "Command " + path.Base(p.rel)
		}
		files := p.nonTestFiles()
		if len(files) == 0 {
			t.Errorf("%s: no non-test Go file to hold its doc comment: add a doc.go starting %q", p.rel, "// "+want)
			continue
		}
		found, other := false, ""
		fset := token.NewFileSet()
		for _, f := range files {
			af, err := parser.ParseFile(fset, f, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Errorf("%s: %v", p.rel, err)
				continue
			}
			if af.Name.Name != p.Name || af.Doc == nil {
				continue // a //go:build ignore generator, or a file without the comment
			}
			doc := af.Doc.Text()
			if w := strings.Fields(doc); len(w) >= 2 && w[0]+" "+w[1] == want {
				found = true
				break
			}
			other = "// " + firstLine(doc)
		}
		switch {
		case found:
		case other != "":
			t.Errorf("%s: package doc comment starts %q, want it to start %q", p.rel, other, "// "+want)
		default:
			t.Errorf("%s: no package doc comment: add one starting %q saying what the package owns and who may import it", p.rel, "// "+want)
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
