// Package access owns tool access requests and the grants they give: a
// virtual key or user asks for tools on a registered MCP server with a
// justification (Request), an admin approves or denies it, and an approved
// request grants exactly its tools to its requester until an admin revokes
// it. Every transition is atomic in SQL (SQLStore, migration 00013) and
// goes through Service, which tells every process's grants cache and calls
// the audit hook (Service.OnDecision).
//
// Grants is mcpgw.Grants: it answers on every tools/call and tools/list
// from an in-process cache per (requester, server), kept coherent across
// processes over the KV bus (channel mcp:grants:changed) and bypassed
// while the bus is down, so a revoke holds everywhere within about a
// second. Service.Handler serves /api/mcp/catalog/requests behind the
// caller's authentication (the principal in the request's context).
//
// The tool gateway's wiring imports access; it imports mcpgw, identity,
// apierr, jsonbody, store and store/sqlstore.
package access
