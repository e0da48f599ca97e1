// Package goldentest runs every adapter's golden-file tests: Run owns the
// loop (find the cases, run each as a subtest, compare what it recorded with
// its want_* files by JSON value, or rewrite them with -update, and fail on a
// want file no run recorded), and the package holds what the cases share:
// replaying a provider's answer over HTTP, decoding streams as a client
// does, and the forms in which errors and stream ends are recorded. Adapters'
// _test files import it; nothing else does.
package goldentest

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// Update rewrites the want_* files from the adapter's current output.
var Update = flag.Bool("update", false, "rewrite the want_* files in testdata/ from the adapter's current output")

// Case is one golden case: a directory of testdata/ holding the input files
// and the want_* files.
type Case struct {
	// Dir is the case's directory.
	Dir  string
	t    *testing.T
	want map[string]any
}

// Run runs fn as a subtest, named after the directory, for every directory
// of testdata/ that holds marker (a file every case has, such as
// "target.json"). After fn returns, Run compares each value fn recorded with
// Case.Want against its file, decoding both into the value's type and
// comparing by value (embedded JSON by value too); with -update it writes
// the files instead. A want_* file that fn did not record fails the case: a
// case must check everything its directory claims. Run fails when there are
// no cases.
func Run(t *testing.T, marker string, fn func(t *testing.T, c *Case)) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "*", marker))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no cases in testdata/ (no */%s)", marker)
	}
	for _, f := range files {
		dir := filepath.Dir(f)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			c := &Case{Dir: dir, t: t, want: map[string]any{}}
			fn(t, c)
			c.check(t)
		})
	}
}

// Has reports whether the case has the file name.
func (c *Case) Has(name string) bool {
	_, err := os.Stat(filepath.Join(c.Dir, name))
	return err == nil
}

// Read returns the file name of the case, or fails the test.
func (c *Case) Read(name string) []byte {
	c.t.Helper()
	b, err := os.ReadFile(filepath.Join(c.Dir, name))
	if err != nil {
		c.t.Fatal(err)
	}
	return b
}

// ReadJSON decodes the file name into v, or fails the test. A missing file
// leaves v as it is when optional.
func (c *Case) ReadJSON(name string, v any, optional bool) {
	c.t.Helper()
	if optional && !c.Has(name) {
		return
	}
	MustUnmarshal(c.t, name, c.Read(name), v)
}

// Want records got as what the want file name must hold. Run checks it when
// the case returns.
func (c *Case) Want(name string, got any) {
	c.t.Helper()
	if !strings.HasPrefix(name, "want_") {
		c.t.Fatalf("Want(%q): want files are named want_*", name)
	}
	if _, dup := c.want[name]; dup {
		c.t.Fatalf("Want(%q) recorded twice", name)
	}
	c.want[name] = got
}

// Status reads the case's status file: the HTTP status on the first line,
// then response headers, one "Name: value" a line, added to defaults.
func (c *Case) Status(defaults http.Header) (int, http.Header) {
	c.t.Helper()
	lines := strings.Split(strings.TrimSpace(string(c.Read("status"))), "\n")
	status, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil {
		c.t.Fatalf("status: the first line must be the HTTP status: %v", err)
	}
	h := defaults.Clone()
	if h == nil {
		h = http.Header{}
	}
	for _, l := range lines[1:] {
		k, v, ok := strings.Cut(l, ":")
		if !ok {
			c.t.Fatalf("status: header line %q is not Name: value", l)
		}
		h.Add(strings.TrimSpace(k), strings.TrimSpace(v))
	}
	return status, h
}

// check compares (or writes) every recorded file and fails on unrecorded
// want files.
func (c *Case) check(t *testing.T) {
	t.Helper()
	names := make([]string, 0, len(c.want))
	for name := range c.want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		compare(t, c.Dir, name, c.want[name])
	}
	existing, err := filepath.Glob(filepath.Join(c.Dir, "want_*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range existing {
		if _, ok := c.want[filepath.Base(f)]; !ok {
			t.Errorf("%s is checked by nothing: the case recorded %v (delete the file, or fix the case)", filepath.Base(f), names)
		}
	}
}

// compare checks got against the JSON file dir/name, both decoded into got's
// type and compared by value (an empty list and null alike), or writes the
// file with -update.
func compare(t *testing.T, dir, name string, got any) {
	t.Helper()
	path := filepath.Join(dir, name)
	enc := Encode(t, got)
	if *Update {
		if err := os.WriteFile(path, enc, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	// Decode got the same way, so both sides went through the same JSON.
	typ := reflect.TypeOf(got)
	for typ != nil && typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	newValue := func() any {
		if typ == nil {
			return new(any)
		}
		return reflect.New(typ).Interface()
	}
	want, gotDec := newValue(), newValue()
	MustUnmarshal(t, path, b, want)
	MustUnmarshal(t, path, enc, gotDec)
	if diff := cmp.Diff(want, gotDec, JSONValue, equateEmpty); diff != "" {
		t.Errorf("%s: got != want (-want +got):\n%s", name, diff)
	}
}

// equateEmpty treats an empty list or map as null, except embedded JSON,
// which JSONValue compares.
var equateEmpty = cmp.FilterPath(func(p cmp.Path) bool {
	return p.Last().Type() != reflect.TypeFor[json.RawMessage]()
}, cmpopts.EquateEmpty())

// JSONValue compares embedded JSON documents by value, not by layout.
var JSONValue = cmp.Transformer("JSONValue", func(m json.RawMessage) any {
	if m == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(m))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return fmt.Sprintf("invalid JSON %q: %v", m, err)
	}
	return v
})

// Encode is v as an indented want file.
func Encode(t testing.TB, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Flatten joins a header's values, for want files.
func Flatten(h http.Header) map[string]string {
	out := make(map[string]string, len(h))
	for k, v := range h {
		out[k] = strings.Join(v, ", ")
	}
	return out
}

// MustUnmarshal decodes b into v or fails the test naming the file.
func MustUnmarshal(t testing.TB, name string, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}
