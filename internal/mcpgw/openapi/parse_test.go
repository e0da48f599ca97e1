package openapi

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustParse(t testing.TB, spec []byte) *Document {
	t.Helper()
	d, err := Parse(spec)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return d
}

func TestParseFixtures(t *testing.T) {
	for _, tc := range []struct {
		file string
		ops  int
	}{
		{"petstore.json", 19},
		{"widgets-3.1.yaml", 6},
	} {
		t.Run(tc.file, func(t *testing.T) {
			d := mustParse(t, readFixture(t, tc.file))
			if got := len(d.ops); got != tc.ops {
				t.Errorf("operations: got %d, want %d", got, tc.ops)
			}
		})
	}
}

// mini is a minimal valid 3.0 document with one operation, for tests to
// change.
const mini = `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
 "paths": {"/a": {"get": {"responses": {"200": {"description": "ok"}}}}}}`

func manyKeys(n int) string {
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf(`"k%d": {}`, i)
	}
	return strings.Join(keys, ", ")
}

func TestParseInvalid(t *testing.T) {
	big := `{"openapi": "3.0.3", "info": {"title": "t", "version": "1", "description": "` +
		strings.Repeat("x", MaxSpecBytes) + `"}, "paths": {}}`
	for _, tc := range []struct {
		name string
		spec string
		want []string // substrings of the problem
	}{
		{"not openapi", `{"hello": "world"}`, []string{`"openapi" field is missing`}},
		{"not an object", `42`, []string{"not an object"}},
		{"wrong shape", `{"openapi": "3.0.3", "info": "t", "paths": {}}`, []string{"cannot be read as OpenAPI", "info"}},
		{"huge object", `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {},
		  "components": {"schemas": {` + manyKeys(MaxMappingKeys+1) + `}}}`, []string{"line 2", "more than the 2000 allowed"}},
		{"empty", "  \n", []string{"empty"}},
		{"swagger 2", `{"swagger": "2.0", "info": {"title": "t", "version": "1"}, "paths": {}}`,
			[]string{"Swagger 2.0", "convert"}},
		{"openapi 3.2", strings.Replace(mini, "3.0.3", "3.2.0", 1), []string{`"3.2.0" is not supported`}},
		{"missing paths", `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}}`, []string{"no paths"}},
		{"missing paths 3.1", `{"openapi": "3.1.0", "info": {"title": "t", "version": "1"}}`, []string{"no paths"}},
		{"no operations", `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {"/a": {"summary": "nothing"}}}`,
			[]string{"no operations"}},
		{"only trace", `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
		  "paths": {"/a": {"trace": {"responses": {"200": {"description": "ok"}}}}}}`, []string{"no operations"}},
		{"bad ref", strings.Replace(mini, `{"description": "ok"}`,
			`{"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Nope"}}}}`, 1),
			[]string{"bad reference", "#/components/schemas/Nope"}},
		{"external ref", strings.Replace(mini, `{"description": "ok"}`,
			`{"description": "ok", "content": {"application/json": {"schema": {"$ref": "/etc/passwd#/x"}}}}`, 1),
			[]string{`"/etc/passwd#/x"`, "outside the document"}},
		{"remote ref", strings.Replace(mini, `{"description": "ok"}`,
			`{"description": "ok", "content": {"application/json": {"schema": {"$ref": "http://169.254.169.254/x.json"}}}}`, 1),
			[]string{"169.254.169.254", "outside the document"}},
		{"yaml syntax", "openapi: 3.0.3\ninfo:\n  title: [t\n  version: 1\npaths: {}\n", []string{"neither JSON nor YAML", "line"}},
		{"too large", big, []string{"bytes, more than"}},
		{"undeclared path parameter", strings.Replace(mini, `"/a"`, `"/a/{id}"`, 1),
			[]string{"GET /a/{id}", "path parameters", "id"}},
		{"duplicate operationId", `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {
		  "/a": {"get": {"operationId": "x", "responses": {"200": {"description": "ok"}}}},
		  "/b": {"get": {"operationId": "x", "responses": {"200": {"description": "ok"}}}}}}`,
			[]string{`"GET /a"`, `"GET /b"`, `"x"`}},
		{"bad parameter location", strings.Replace(mini, `"get": {`, `"get": {"parameters": [{"name": "q", "in": "body", "schema": {}}], `, 1),
			[]string{"/a", "GET", `"body"`}},
		{"not JSON-representable", "openapi: 3.0.3\ninfo: {title: t, version: '1'}\npaths:\n  /a:\n    get:\n      parameters:\n" +
			"        - {name: n, in: query, schema: {type: number, minimum: .nan}}\n      responses: {'200': {description: ok}}\n",
			[]string{"line 7", ".nan"}},
		{"missing info", `{"openapi": "3.0.3", "paths": {"/a": {"get": {"responses": {"200": {"description": "ok"}}}}}}`,
			[]string{"info"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, err := Parse([]byte(tc.spec))
			if err == nil {
				t.Fatalf("Parse: got a document with %d operations, want an error", len(d.ops))
			}
			var se *SpecError
			if !errors.As(err, &se) {
				t.Fatalf("Parse: got %T %v, want a *SpecError", err, err)
			}
			for _, w := range tc.want {
				if !strings.Contains(se.Problem, w) {
					t.Errorf("problem %q does not contain %q", se.Problem, w)
				}
			}
		})
	}
}
