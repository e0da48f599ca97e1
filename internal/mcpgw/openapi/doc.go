// Package openapi turns an OpenAPI 3.0 or 3.1 document into MCP tools and
// hosts them as a virtual MCP server (an *mcp.Server of the official Go SDK)
// whose tools call the described HTTP API. It owns the parsing and
// validation of the document (Parse: JSON or YAML, at most MaxSpecBytes, a
// *SpecError naming the problem when invalid), the mapping of operations to
// tools (Document.Tools) and the calls (NewServer). It has no HTTP surface
// and no storage: the tool gateway (internal/mcpgw) imports it, hosts the
// server in-process and treats it like any upstream MCP server. Nothing else
// should import it.
//
// # Documents
//
// Loading and validation are kin-openapi's (github.com/getkin/kin-openapi
// v0.153.0), whose openapi3 loader reads OpenAPI 3.0 and 3.1 natively: type
// arrays with "null", numeric exclusive bounds, const, webhooks, paths made
// optional. No translation of 3.1 is done here. Versions 3.0.x and 3.1.x are
// accepted; Swagger 2.0 and OpenAPI 3.2 are refused. References must stay in
// the document (an external $ref is refused: no file or network is read).
// Beyond what the validator checks, a document must have paths with at
// least one operation, at most MaxOperations, and no object with more than
// MaxMappingKeys members (checked on a YAML node tree before loading: the
// YAML decoder's duplicate-key check is quadratic in an object's size). The examples and defaults
// of schemas are not validated (real documents get them wrong too often to
// refuse them for it), nor are regular expressions compiled.
//
// # Tools
//
// One tool per operation (methods GET, PUT, POST, DELETE, OPTIONS, HEAD and
// PATCH; TRACE is never exposed: its answer echoes the request, credential
// included). The tool's name is the operationId with every character outside
// [A-Za-z0-9_.-] replaced by "_", cut to 128 characters; without an
// operationId it is the lower-case method and the path ("get_pets_petId").
// A name already taken gets "_2", "_3", … Operations are visited in sorted
// path order, then GET, PUT, POST, DELETE, OPTIONS, HEAD, PATCH, so names
// are stable for a given document.
//
// The input schema (JSON Schema 2020-12) groups the arguments by where they
// go, so that parameters of the same name in different places cannot
// collide:
//
//	{"path":   {<path parameters>},
//	 "query":  {<query parameters>},
//	 "header": {<header parameters>},
//	 "body":   <the JSON request body>}
//
// Each group is present only when the operation has such parameters, and
// required when one of them is; each group refuses unknown members. Path
// parameters declared on the path item and on the operation are merged (the
// operation's win). Left out: cookie parameters; header parameters named
// Accept, Content-Type or Authorization (the OpenAPI specification says to
// ignore them) or any header a caller may not set (see below); and
// parameters carrying an apiKey security scheme's credential (same name and
// location), which the registration's credential fills. The body is the
// first JSON media type of the request body (application/json, then any
// +json type, then */*); an operation whose body has no JSON media type gets
// no body property, and its description says so. Schemas are translated to
// JSON Schema 2020-12 (3.0's nullable and boolean exclusive bounds become
// type arrays and numeric bounds); references become "$defs" entries, so
// recursive schemas stay finite. A tool's schema is bounded to
// MaxSchemaNodes nodes; a larger one is a *SpecError.
//
// Annotations: ReadOnlyHint for GET, HEAD and OPTIONS; DestructiveHint for
// DELETE; IdempotentHint for the idempotent methods; OpenWorldHint always.
//
// # Calls
//
// A call builds the URL from Options.BaseURL (its path is the prefix of the
// operation's path; the document's servers are ignored), the path
// parameters (serialised per their style, each value escaped with
// url.PathEscape; "." and ".." are refused), the query and the headers, and
// sends the body as JSON with the media type chosen above. Options.Authorize
// runs last, so the registration's credential wins over anything the
// arguments set. Argument headers that are hop-by-hop or that carry
// identity or framing (Authorization, Cookie, Host, Proxy-Authorization,
// Content-Length, …) are refused; header arguments match the declared names
// case-insensitively. The request goes through Options.Client
// with the call's context; redirects are the client's business.
//
// The result is one text content: the response body, read up to
// Options.MaxResponseBytes (a marker says when it was cut), or a line
// saying the body is binary; an HTTP status of 400 or more makes it a tool
// error (isError) whose text starts with the status. A complete body that
// is a JSON object is also the structuredContent. A missing required
// argument, an unknown one, or a value that cannot be serialised is a tool
// error naming it, and nothing is sent. Transport failures are tool errors
// that never carry the URL (the credential may be in its query) nor the
// Authorize error, which go to Options.Logger.
package openapi
