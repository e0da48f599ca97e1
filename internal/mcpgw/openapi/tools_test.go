package openapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func toolNames(tools []*mcp.Tool) []string {
	var out []string
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}

func findTool(t *testing.T, tools []*mcp.Tool, name string) *mcp.Tool {
	t.Helper()
	for _, tl := range tools {
		if tl.Name == name {
			return tl
		}
	}
	t.Fatalf("no tool %q among %v", name, toolNames(tools))
	return nil
}

// schemaOf decodes a tool's input schema as the client sees it.
func schemaOf(t *testing.T, tl *mcp.Tool) map[string]any {
	t.Helper()
	b, err := json.Marshal(tl.InputSchema)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// at walks a decoded JSON value along keys.
func at(t *testing.T, v any, keys ...string) any {
	t.Helper()
	for i, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("at %s: not an object: %v", strings.Join(keys[:i], "."), v)
		}
		if v, ok = m[k]; !ok {
			t.Fatalf("at %s: no member %q in %v", strings.Join(keys[:i], "."), k, m)
		}
	}
	return v
}

func has(v any, key string) bool {
	m, ok := v.(map[string]any)
	if !ok {
		return false
	}
	_, ok = m[key]
	return ok
}

func TestToolsPetstore(t *testing.T) {
	tools, err := mustParse(t, readFixture(t, "petstore.json")).Tools(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"updatePet", "addPet", "findPetsByStatus", "findPetsByTags",
		"getPetById", "updatePetWithForm", "deletePet", "uploadFile",
		"getInventory", "placeOrder", "getOrderById", "deleteOrder",
		"createUser", "createUsersWithListInput", "loginUser", "logoutUser",
		"getUserByName", "updateUser", "deleteUser",
	}
	if diff := cmp.Diff(want, toolNames(tools)); diff != "" {
		t.Fatalf("tool names (-want +got):\n%s", diff)
	}

	get := findTool(t, tools, "getPetById")
	if get.Annotations == nil || !get.Annotations.ReadOnlyHint || get.Annotations.DestructiveHint != nil {
		t.Errorf("getPetById annotations: got %+v, want read-only", get.Annotations)
	}
	if !strings.HasPrefix(get.Description, "GET /pet/{petId}: Find pet by ID") {
		t.Errorf("getPetById description: got %q", get.Description)
	}
	s := schemaOf(t, get)
	if got := at(t, s, "properties", "path", "properties", "petId", "type"); got != "integer" {
		t.Errorf("petId type: got %v, want integer", got)
	}
	if diff := cmp.Diff([]any{"petId"}, at(t, s, "properties", "path", "required")); diff != "" {
		t.Errorf("path required (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"path"}, at(t, s, "required")); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}

	del := findTool(t, tools, "deletePet")
	if a := del.Annotations; a == nil || a.ReadOnlyHint || a.DestructiveHint == nil || !*a.DestructiveHint {
		t.Errorf("deletePet annotations: got %+v, want destructive", del.Annotations)
	}
	// api_key is the apiKey security scheme's header: the registration's
	// credential fills it, so the tool does not offer it.
	if has(at(t, schemaOf(t, del), "properties"), "header") {
		t.Errorf("deletePet offers a header group: %v", schemaOf(t, del))
	}

	add := schemaOf(t, findTool(t, tools, "addPet"))
	if got := at(t, add, "properties", "body", "$ref"); got != "#/$defs/Pet" {
		t.Errorf("addPet body: got %v, want a reference to #/$defs/Pet", got)
	}
	for _, def := range []string{"Pet", "Category", "Tag"} {
		if !has(at(t, add, "$defs"), def) {
			t.Errorf("addPet $defs lack %s", def)
		}
	}
	if diff := cmp.Diff([]any{"name", "photoUrls"}, at(t, add, "$defs", "Pet", "required")); diff != "" {
		t.Errorf("Pet required (-want +got):\n%s", diff)
	}
	if got := at(t, add, "$defs", "Pet", "properties", "tags", "items", "$ref"); got != "#/$defs/Tag" {
		t.Errorf("Pet tags items: got %v", got)
	}

	upload := findTool(t, tools, "uploadFile")
	if has(at(t, schemaOf(t, upload), "properties"), "body") {
		t.Errorf("uploadFile offers a body for application/octet-stream")
	}
	if !strings.Contains(upload.Description, "application/octet-stream") {
		t.Errorf("uploadFile description does not say its body cannot be sent: %q", upload.Description)
	}
}

func TestToolsOpenAPI31(t *testing.T) {
	tools, err := mustParse(t, readFixture(t, "widgets-3.1.yaml")).Tools(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"widgets.list_v2", "post_folders_folderId_widgets", "deleteWidget", "patchWidget", "getTree", "putTree"}
	if diff := cmp.Diff(want, toolNames(tools)); diff != "" {
		t.Fatalf("tool names (-want +got):\n%s", diff)
	}

	list := schemaOf(t, findTool(t, tools, "widgets.list_v2"))
	headers := at(t, list, "properties", "header", "properties")
	if !has(headers, "X-Request-ID") {
		t.Errorf("the path item's header parameter is missing: %v", headers)
	}
	if has(headers, "Authorization") {
		t.Errorf("an Authorization header parameter is offered: %v", headers)
	}
	if has(at(t, list, "properties"), "cookie") {
		t.Errorf("cookie parameters are offered")
	}
	if got := at(t, list, "properties", "query", "properties", "limit", "exclusiveMinimum"); got != 0.0 {
		t.Errorf("limit exclusiveMinimum: got %v, want 0", got)
	}
	if got := at(t, list, "properties", "path", "properties", "folderId", "description"); got != "The folder holding the widgets." {
		t.Errorf("folderId description: got %v", got)
	}

	post := schemaOf(t, findTool(t, tools, "post_folders_folderId_widgets"))
	if diff := cmp.Diff([]any{"string", "null"}, at(t, post, "$defs", "NewWidget", "properties", "colour", "type")); diff != "" {
		t.Errorf("colour type (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]any{"path", "body"}, at(t, post, "required")); diff != "" {
		t.Errorf("required (-want +got):\n%s", diff)
	}

	tree := schemaOf(t, findTool(t, tools, "putTree"))
	if got := at(t, tree, "$defs", "Node", "properties", "children", "items", "$ref"); got != "#/$defs/Node" {
		t.Errorf("recursive Node: got %v, want a reference to itself", got)
	}
}

// TestSchema30 checks 3.0's nullable and boolean exclusive bounds become
// JSON Schema 2020-12.
func TestSchema30(t *testing.T) {
	spec := strings.Replace(mini, `"get": {`, `"get": {"parameters": [
	  {"name": "n", "in": "query", "schema": {"type": "integer", "nullable": true, "minimum": 1, "exclusiveMinimum": true, "maximum": 9}}], `, 1)
	tools, err := mustParse(t, []byte(spec)).Tools(nil)
	if err != nil {
		t.Fatal(err)
	}
	got := at(t, schemaOf(t, tools[0]), "properties", "query", "properties", "n")
	want := map[string]any{"type": []any{"integer", "null"}, "exclusiveMinimum": 1.0, "maximum": 9.0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}

func TestToolsInclude(t *testing.T) {
	d := mustParse(t, readFixture(t, "petstore.json"))
	tools, err := d.Tools([]string{"get", " Delete"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"findPetsByStatus", "findPetsByTags", "getPetById", "deletePet", "getInventory",
		"getOrderById", "deleteOrder", "loginUser", "logoutUser", "getUserByName", "deleteUser",
	}
	if diff := cmp.Diff(want, toolNames(tools)); diff != "" {
		t.Errorf("tool names (-want +got):\n%s", diff)
	}
	for _, bad := range []string{"FETCH", "TRACE", "CONNECT", ""} {
		if _, err := d.Tools([]string{"GET", bad}); !errors.Is(err, ErrUnknownMethod) || !strings.Contains(err.Error(), fmt.Sprintf("%q", bad)) {
			t.Errorf("include %q: got %v, want ErrUnknownMethod naming it", bad, err)
		}
	}
	if _, err := d.Tools([]string{"PATCH"}); !errors.Is(err, ErrNoOperations) {
		t.Errorf("include PATCH: got %v, want ErrNoOperations", err)
	}
}

func TestToolNames(t *testing.T) {
	long := strings.Repeat("a", 200)
	spec := `{"openapi": "3.0.3", "info": {"title": "t", "version": "1"}, "paths": {
	  "/a": {"get": {"operationId": "get pet", "responses": {"200": {"description": "ok"}}},
	         "put": {"operationId": "get_pet", "responses": {"200": {"description": "ok"}}}},
	  "/b/{id}/c.json": {"get": {"parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
	         "responses": {"200": {"description": "ok"}}}},
	  "/c": {"get": {"operationId": "` + long + `", "responses": {"200": {"description": "ok"}}},
	         "post": {"operationId": "` + long + `x", "responses": {"200": {"description": "ok"}}}},
	  "/d": {"get": {"operationId": "çà!", "responses": {"200": {"description": "ok"}}}}}}`
	tools, err := mustParse(t, []byte(spec)).Tools(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"get_pet", "get_pet_2", "get_b_id_c.json", strings.Repeat("a", 128), strings.Repeat("a", 126) + "_2", "get_d"}
	if diff := cmp.Diff(want, toolNames(tools)); diff != "" {
		t.Errorf("tool names (-want +got):\n%s", diff)
	}
}

func TestToolSchemaBound(t *testing.T) {
	// 12 objects of 1800 properties: over MaxSchemaNodes, each object under
	// MaxMappingKeys.
	inner := make([]string, 1800)
	for i := range inner {
		inner[i] = fmt.Sprintf(`"p%d": {"type": "string"}`, i)
	}
	var outer []string
	for i := range 12 {
		outer = append(outer, fmt.Sprintf(`"o%d": {"type": "object", "properties": {%s}}`, i, strings.Join(inner, ",")))
	}
	spec := strings.Replace(mini, `"get": {`, `"post": {"operationId": "huge", "requestBody": {"content": {"application/json":
	  {"schema": {"type": "object", "properties": {`+strings.Join(outer, ",")+`}}}}}, "responses": {"200": {"description": "ok"}}}, "get": {`, 1)
	d := mustParse(t, []byte(spec))
	_, err := d.Tools(nil)
	var se *SpecError
	if !errors.As(err, &se) || !strings.Contains(se.Problem, "POST /a") || !strings.Contains(se.Problem, "nodes") {
		t.Fatalf("got %v, want a *SpecError naming POST /a and the bound", err)
	}
	if tools, err := d.Tools([]string{"GET"}); err != nil || len(tools) != 1 {
		t.Errorf("GET only: got %d tools, %v; want the one small tool", len(tools), err)
	}
}

// TestBooleanSchemas: 3.1's boolean schemas become their JSON Schema forms.
func TestBooleanSchemas(t *testing.T) {
	spec := `openapi: 3.1.0
info: {title: t, version: '1'}
paths:
  /a:
    post:
      requestBody:
        content:
          application/json:
            schema: {type: object, properties: {x: true, y: false}}
`
	tools, err := mustParse(t, []byte(spec)).Tools(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"x": map[string]any{}, "y": map[string]any{"not": map[string]any{}}}
	if diff := cmp.Diff(want, at(t, schemaOf(t, tools[0]), "properties", "body", "properties")); diff != "" {
		t.Errorf("boolean schemas (-want +got):\n%s", diff)
	}
}
