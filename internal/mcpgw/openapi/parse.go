package openapi

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"
)

// Bounds on what a document may hold.
const (
	// MaxSpecBytes is the largest document Parse reads.
	MaxSpecBytes = 2 << 20
	// MaxOperations is the most operations a document may describe.
	MaxOperations = 2000
	// MaxSchemaNodes is the most schema nodes (objects of the input schema,
	// $defs included) one tool's input schema may have.
	MaxSchemaNodes = 20000
	// MaxMappingKeys is the most members one object of the document may
	// have: the YAML decoder's duplicate-key check is quadratic in it.
	MaxMappingKeys = 2000
)

// SpecError says why a document is not a usable OpenAPI document. Problem
// names what is wrong and, where it can, where (path, operation, reference).
// It carries only what the document itself says: it is fit for the caller's
// client.
type SpecError struct {
	Problem string
}

func (e *SpecError) Error() string { return "invalid OpenAPI document: " + e.Problem }

func specErrorf(format string, args ...any) *SpecError {
	return &SpecError{Problem: fmt.Sprintf(format, args...)}
}

// Document is a parsed, validated OpenAPI document. It is read-only after
// Parse and safe for concurrent use.
type Document struct {
	doc *openapi3.T
	ops []*operation
}

// operation is one method of one path, with the path item's parameters
// merged into the operation's.
type operation struct {
	method string // upper case
	path   string // the path template, as in the document
	op     *openapi3.Operation
	params []*openapi3.Parameter
}

// methods are the operations' methods that become tools, in the order tools
// are built. TRACE is left out on purpose (its answer echoes the request);
// CONNECT and 3.2's QUERY and additional operations are not 3.0/3.1 methods.
var methods = []string{"GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH"}

// Parse reads an OpenAPI 3.0 or 3.1 document, JSON or YAML, of at most
// MaxSpecBytes, resolves its references (in the document only) and
// validates it. Every failure is a *SpecError.
func Parse(spec []byte) (*Document, error) {
	if len(spec) > MaxSpecBytes {
		return nil, specErrorf("the document is %d bytes, more than the %d allowed", len(spec), MaxSpecBytes)
	}
	if len(bytes.TrimSpace(spec)) == 0 {
		return nil, specErrorf("the document is empty")
	}
	swagger, err := scan(spec)
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	loader.IsExternalRefsAllowed = false
	doc, err := loader.LoadFromData(spec)
	if err != nil {
		var ext *openapi3.DisallowedExternalRefError
		if errors.As(err, &ext) {
			return nil, specErrorf("reference %q points outside the document; only references within it (#/...) are allowed", ext.Ref)
		}
		return nil, specErrorf("%s", loadProblem(err))
	}
	if err := checkVersion(doc, swagger); err != nil {
		return nil, err
	}
	if doc.Paths == nil || doc.Paths.Len() == 0 {
		return nil, specErrorf("the document has no paths: there is no operation to make a tool of")
	}
	err = doc.Validate(context.Background(),
		openapi3.DisableExamplesValidation(),
		openapi3.DisableSchemaDefaultsValidation(),
		openapi3.DisableSchemaPatternValidation(),
	)
	if err != nil {
		return nil, specErrorf("%s", err)
	}
	ops, err := collect(doc)
	if err != nil {
		return nil, err
	}
	return &Document{doc: doc, ops: ops}, nil
}

// loadProblem is the loader's error, worded for the document's author.
func loadProblem(err error) string {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "failed to unmarshal data: "); ok {
		return "the document cannot be read as OpenAPI: " + rest
	}
	if strings.Contains(msg, "in fragment in URI") || strings.Contains(msg, "$ref") {
		return "bad reference: " + msg
	}
	return msg
}

// scan parses the document as a YAML node tree (JSON is YAML), which is
// linear, and refuses what would make the loader slow: an object with more
// than MaxMappingKeys members. It returns the top-level "swagger" field, for
// checkVersion.
func scan(spec []byte) (string, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(spec, &root); err != nil {
		return "", specErrorf("the document is neither JSON nor YAML: %v", err)
	}
	top := &root
	if top.Kind == yaml.DocumentNode && len(top.Content) == 1 {
		top = top.Content[0]
	}
	if top.Kind != yaml.MappingNode {
		return "", specErrorf("the document is not an object")
	}
	stack := []*yaml.Node{top}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.Kind == yaml.MappingNode && len(n.Content)/2 > MaxMappingKeys {
			return "", specErrorf("the object at line %d has %d members, more than the %d allowed", n.Line, len(n.Content)/2, MaxMappingKeys)
		}
		if n.Kind != yaml.AliasNode {
			stack = append(stack, n.Content...)
		}
	}
	var swagger string
	for i := 0; i+1 < len(top.Content); i += 2 {
		if top.Content[i].Value == "swagger" {
			swagger = top.Content[i+1].Value
		}
	}
	return swagger, nil
}

// checkVersion refuses what is not OpenAPI 3.0 or 3.1, saying what it is.
func checkVersion(doc *openapi3.T, swagger string) error {
	if doc.IsOpenAPI30() || (doc.IsOpenAPI31OrLater() && !doc.IsOpenAPI32OrLater()) {
		return nil
	}
	if doc.OpenAPI != "" {
		return specErrorf("openapi version %q is not supported: use 3.0.x or 3.1.x", doc.OpenAPI)
	}
	if swagger != "" {
		return specErrorf("Swagger %s documents are not supported: convert the document to OpenAPI 3", oneLine(swagger))
	}
	return specErrorf("not an OpenAPI document: the \"openapi\" field is missing")
}

// collect lists the document's operations in tool order, their parameters
// merged, and checks what the tools need beyond the validator.
func collect(doc *openapi3.T) ([]*operation, error) {
	paths := doc.Paths.Map()
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var ops []*operation
	for _, path := range keys {
		item := paths[path]
		if item == nil {
			continue
		}
		for _, method := range methods {
			op := item.GetOperation(method)
			if op == nil {
				continue
			}
			if len(ops) == MaxOperations {
				return nil, specErrorf("the document has more than %d operations", MaxOperations)
			}
			params, err := mergeParams(item.Parameters, op.Parameters)
			if err != nil {
				return nil, specErrorf("operation %s %s: %s", method, path, err)
			}
			ops = append(ops, &operation{method: method, path: path, op: op, params: params})
		}
	}
	if len(ops) == 0 {
		return nil, specErrorf("the document's paths have no operations (of %s)", strings.Join(methods, ", "))
	}
	return ops, nil
}

// mergeParams returns the path item's parameters overridden by the
// operation's ones of the same name and location, then the operation's
// others.
func mergeParams(item, op openapi3.Parameters) ([]*openapi3.Parameter, error) {
	type key struct{ in, name string }
	var out []*openapi3.Parameter
	index := map[key]int{}
	for _, list := range []openapi3.Parameters{item, op} {
		for _, ref := range list {
			if ref == nil || ref.Value == nil {
				return nil, errors.New("a parameter is empty")
			}
			p := ref.Value
			k := key{p.In, p.Name}
			if p.In == openapi3.ParameterInHeader {
				k.name = strings.ToLower(p.Name)
			}
			if i, ok := index[k]; ok {
				out[i] = p
				continue
			}
			index[k] = len(out)
			out = append(out, p)
		}
	}
	return out, nil
}
