// Package mcpgw is the tool gateway's core: the registration of an MCP
// server (Server, Validate), who may call which tool with which arguments
// (Server.Permits, with grants from approved access requests), the
// canonical form of a call's arguments (Canonical: the tool-call cache's key
// and the audit entry's hash), and the gateway itself (Gateway.Call and
// Gateway.Tools: the per-call order of authorisation, limits, access
// control, the guard seam, the compliance scan of arguments and result,
// cost and the audit record), over small interfaces it owns and the
// wiring fills: upstream sessions, limits, the guard, the scanner, the
// cache, the recorder.
//
// Its subpackages are the parts: registry (SQL records of servers, sealed
// credentials, change notices), upstream (SDK client sessions to the
// servers), toolcache, catalog (tools and semantic search), access
// (access requests and grants), oauth (tokens for upstream servers),
// openapi (an OpenAPI document as a hosted MCP server) and httpapi (the HTTP
// surfaces). mcpgw imports none of them.
package mcpgw
