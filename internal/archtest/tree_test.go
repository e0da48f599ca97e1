package archtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// module is the module under test: its root directory and module path.
type module struct {
	root string // absolute directory holding go.mod
	path string // module path, e.g. github.com/svc-gateway/svc
}

// goPackage is the part of `go list -json` output the tests read.
type goPackage struct {
	Dir            string
	ImportPath     string
	Name           string
	GoFiles        []string
	CgoFiles       []string
	IgnoredGoFiles []string // files excluded by build constraints, tests included
	Imports        []string
	TestImports    []string
	XTestImports   []string
	Error          *struct{ Err string }

	rel string // ImportPath relative to the module path: "internal/mgmt"
}

// nonTestFiles are the package's non-test .go files, whatever their build
// constraints, as absolute paths.
func (p *goPackage) nonTestFiles() []string {
	var out []string
	for _, group := range [][]string{p.GoFiles, p.CgoFiles, p.IgnoredGoFiles} {
		for _, f := range group {
			if strings.HasSuffix(f, ".go") && !strings.HasSuffix(f, "_test.go") {
				out = append(out, filepath.Join(p.Dir, f))
			}
		}
	}
	return out
}

// under reports whether the package lives in one of the top-level
// directories dirs ("cmd", "internal").
func (p *goPackage) under(dirs ...string) bool {
	for _, d := range dirs {
		if strings.HasPrefix(p.rel+"/", d+"/") {
			return true
		}
	}
	return false
}

var (
	loadModule   = sync.OnceValues(findModule)
	loadPackages = sync.OnceValues(listPackages)
)

// tree returns the module and its packages, or stops the test.
func tree(t *testing.T) (module, []*goPackage) {
	t.Helper()
	m, err := loadModule()
	if err != nil {
		t.Fatal(err)
	}
	pkgs, err := loadPackages()
	if err != nil {
		t.Fatal(err)
	}
	return m, pkgs
}

// findModule walks up from the working directory to the go.mod.
func findModule() (module, error) {
	dir, err := os.Getwd()
	if err != nil {
		return module{}, err
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil {
			path := modulePath(b)
			if path == "" {
				return module{}, fmt.Errorf("%s: no module line", filepath.Join(dir, "go.mod"))
			}
			return module{root: dir, path: path}, nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			return module{}, err
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return module{}, errors.New("no go.mod in the working directory or above it")
		}
		dir = parent
	}
}

func modulePath(gomod []byte) string {
	s := bufio.NewScanner(bytes.NewReader(gomod))
	for s.Scan() {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(s.Text()), "module"); ok && rest != "" && (rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// listPackages runs `go list -e -json ./...` at the module root.
func listPackages() ([]*goPackage, error) {
	m, err := loadModule()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command("go", "list", "-e", "-deps=false",
		"-json=Dir,ImportPath,Name,GoFiles,CgoFiles,IgnoredGoFiles,Imports,TestImports,XTestImports,Error", "./...")
	cmd.Dir = m.root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("go list ./...: %v\n%s", err, stderr.Bytes())
	}
	var pkgs []*goPackage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		p := new(goPackage)
		if err := dec.Decode(p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, fmt.Errorf("go list ./...: decoding its output: %v", err)
		}
		p.rel = m.rel(p.ImportPath)
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("go list ./... in %s found no packages", m.root)
	}
	return pkgs, nil
}

// rel returns importPath relative to the module ("internal/mgmt"), or "" when
// it is not one of the module's packages.
func (m module) rel(importPath string) string {
	rel, ok := strings.CutPrefix(importPath, m.path+"/")
	if !ok {
		return ""
	}
	return rel
}
