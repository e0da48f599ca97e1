package archtest

import (
	"bytes"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// maxLines is the most lines a non-test, non-generated Go file may have
// (STYLE rule 10: split a file by concern before ~800 lines).
const maxLines = 800

// TestFileSize reports every non-test, non-generated .go file of the module
// longer than maxLines. testdata directories are exempt.
func TestFileSize(t *testing.T) {
	m, _ := tree(t)
	err := filepath.WalkDir(m.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != m.root && skipDir(p, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if n := lineCount(src); n > maxLines && !generated(p, src) {
			rel, _ := filepath.Rel(m.root, p)
			t.Errorf("%s has %d lines, over the limit of %d: split it by concern (STYLE rule 10)", filepath.ToSlash(rel), n, maxLines)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// skipDir reports whether the walk leaves out directory p: testdata, hidden
// and _-prefixed directories (which the go tool ignores too), vendor and
// node_modules, and nested modules.
func skipDir(p, name string) bool {
	switch {
	case name == "testdata", name == "vendor", name == "node_modules",
		strings.HasPrefix(name, "."), strings.HasPrefix(name, "_"):
		return true
	}
	_, err := os.Stat(filepath.Join(p, "go.mod"))
	return err == nil
}

func lineCount(src []byte) int {
	n := bytes.Count(src, []byte("\n"))
	if len(src) > 0 && src[len(src)-1] != '\n' {
		n++
	}
	return n
}

// generated reports whether src carries the "Code generated … DO NOT EDIT."
// comment (https://go.dev/s/generatedcode).
func generated(name string, src []byte) bool {
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.PackageClauseOnly|parser.ParseComments)
	return err == nil && ast.IsGenerated(f)
}
