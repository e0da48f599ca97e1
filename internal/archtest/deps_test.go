package archtest

import (
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
)

// importRules are the import rules of DESIGN.md, on svc's own packages. Paths
// are relative to the module root. Adding a rule is adding a line; its example
// is an import the rule must refuse, which TestImportRulesCatchExamples checks.
var importRules = []importRule{
	{"provider adapters import, of svc, only llm, llm/sse, apierr and provider", below("internal/provider"), not(is("internal/llm", "internal/llm/sse", "internal/apierr", "internal/provider")), nonTest, edge{"internal/provider/x", "internal/upstream"}},
	{"mgmt never imports provider packages or upstream", within("internal/mgmt"), within("internal/provider", "internal/upstream"), nonTest, edge{"internal/mgmt", "internal/provider/openai"}},
	{"only cmd/ imports wire (end-to-end tests excepted)", not(within("cmd")), is("internal/wire"), nonTest, edge{"internal/proxy", "internal/wire"}},
	{"leaf packages (identity, store, llm/sse) import nothing of svc", is("internal/identity", "internal/store", "internal/llm/sse"), anyPkg, nonTest, edge{"internal/store", "internal/apierr"}},
	{"apierr imports nothing of svc", is("internal/apierr"), anyPkg, nonTest, edge{"internal/apierr", "internal/llm"}},
	{"the stores (store, memkv, rediskv, sqlstore) import, of svc, only store packages: the domains' SQL lives in the domains", storeImpls, not(within("internal/store")), nonTest, edge{"internal/store/sqlstore", "internal/auth"}},
	{"the detector families (detect, pii, secrets, injection) import, of svc, only compliance/detect and compliance/portable", is("internal/compliance/detect", "internal/compliance/pii", "internal/compliance/secrets", "internal/compliance/injection", "internal/compliance/portable"), not(is("internal/compliance/detect", "internal/compliance/portable")), nonTest, edge{"internal/compliance/pii", "internal/apierr"}},
	{"nothing imports e2e or archtest, not even tests", anyPkg, within("internal/e2e", "internal/archtest"), withTests, edge{"internal/proxy", "internal/e2e"}},
}

// grabBagNames may not name a package or its directory (STYLE rule 10): a
// package says what it owns.
var grabBagNames = []string{"util", "utils", "common", "helpers", "misc"}

// An importRule forbids the packages it binds some imports of svc's packages.
type importRule struct {
	rule    string  // quoted in failures
	from    pathSet // the importing packages the rule binds
	denied  pathSet // the svc imports it forbids them
	scope   scope   // nonTest, or withTests too
	example edge    // an import the rule must refuse
}

// pathSet is a set of module-relative package paths.
type pathSet func(rel string) bool

// edge is one import: from imports to.
type edge struct{ from, to string }

// scope says which of a package's imports a rule checks.
type scope bool

const (
	nonTest   scope = false // imports of non-test files only
	withTests scope = true  // and those of its _test.go files
)

// is is the set of exactly paths.
func is(paths ...string) pathSet {
	return func(rel string) bool { return slices.Contains(paths, rel) }
}

// within is the set of roots and every package below them.
func within(roots ...string) pathSet {
	return func(rel string) bool {
		for _, r := range roots {
			if rel == r || strings.HasPrefix(rel, r+"/") {
				return true
			}
		}
		return false
	}
}

// below is the set of packages strictly below root.
func below(root string) pathSet {
	return func(rel string) bool { return strings.HasPrefix(rel, root+"/") }
}

// storeImpls are the store packages but storetest, whose conformance suites
// check the domains' record interfaces and so import the domains.
func storeImpls(rel string) bool {
	return within("internal/store")(rel) && !within("internal/store/storetest")(rel)
}

func not(s pathSet) pathSet { return func(rel string) bool { return !s(rel) } }

func anyPkg(string) bool { return true }

// violations returns one message per import of pkgs that breaks a rule.
func violations(m module, pkgs []*goPackage, rules []importRule) []string {
	var out []string
	for _, p := range pkgs {
		for _, r := range rules {
			if !r.from(p.rel) {
				continue
			}
			check := func(imports []string, where string) {
				for _, imp := range imports {
					to := m.rel(imp)
					if to == "" || to == p.rel || !r.denied(to) {
						continue // not svc's, the package's own external test, or allowed
					}
					out = append(out, fmt.Sprintf("%s%s imports %s: rule %q", p.rel, where, to, r.rule))
				}
			}
			check(p.Imports, "")
			if r.scope == withTests {
				check(p.TestImports, " (test files)")
				check(p.XTestImports, " (test files)")
			}
		}
	}
	return out
}

// TestImportRules checks the non-test imports of every package against
// importRules (and the test imports, for rules that say so), and that no
// package has a grab-bag name.
func TestImportRules(t *testing.T) {
	m, pkgs := tree(t)
	for _, p := range pkgs {
		if p.Error != nil {
			t.Errorf("%s: go list reports %q: its imports may be incomplete", p.rel, p.Error.Err)
		}
	}
	for _, v := range violations(m, pkgs, importRules) {
		t.Error(v)
	}
	for _, p := range pkgs {
		for _, name := range []string{p.Name, path.Base(p.rel)} {
			if slices.Contains(grabBagNames, name) {
				t.Errorf("%s is named %s: rule %q", p.rel, name, "no package named "+strings.Join(grabBagNames, ", ")+": name it for what it owns")
				break
			}
		}
	}
}

// TestImportRulesCatchExamples checks that every rule can fail: each refuses
// the import given as its example.
func TestImportRulesCatchExamples(t *testing.T) {
	m := module{path: "example.com/svc"}
	for _, r := range importRules {
		p := &goPackage{rel: r.example.from, ImportPath: m.path + "/" + r.example.from}
		if r.scope == withTests {
			p.XTestImports = []string{m.path + "/" + r.example.to}
		} else {
			p.Imports = []string{m.path + "/" + r.example.to}
		}
		if got := violations(m, []*goPackage{p}, []importRule{r}); len(got) != 1 {
			t.Errorf("rule %q: %s importing %s gave %d violations, want 1", r.rule, r.example.from, r.example.to, len(got))
		}
	}
}
