// Package usage serves the tool gateway's read side of the audit log: GET
// /api/mcp/usage (calls, errors, cost and average latency per MCP server and
// tool, per hour, day or the whole window) and GET /api/mcp/logs (one item
// per tool call, newest first, paged by offset or by cursor).
//
// Every tool call is one audit entry (the gateway's Recorder): provider
// "mcp:<server_id>", model the tool's name, and a tool_call part with the
// outcome, the surface and the arguments' size and SHA-256. Both routes read
// those entries through a Source (audit.Reader: the long-term SQL store and
// the hot tier's unwritten entries), selecting them with the provider prefix
// "mcp:" and, for the filters, the existing columns (provider, model, key_id,
// user_id, status, success). Usage is one grouped aggregate in SQL (bounded
// to MaxRows groups); logs are audit's pages of entries with the tool part
// lifted out. Arguments appear only when they were logged
// (SVC_MCP_LOG_ARGUMENTS).
//
// Callers see their own calls: the admin key sees every call and may filter
// by key_id and user_id; a virtual key sees its own key's calls, another
// principal (a signed-in user) its own user's; asking for another's is a
// 403. The principal comes from the request's context (identity.From), put
// there by the authentication in front of the handlers; without one the
// answer is 401.
//
// Parameters are audit's (audit.ParseQuery): the window from/to (RFC 3339)
// or days (1–365, default 30), status, limit (1–1000), offset and before for
// logs; plus server_id, tool, key_id, user_id, outcome (success|error) and,
// for usage, period (hour|day|all, default day; hour over at most
// MaxHourWindow). A bad value is a 400 naming the parameter, with the
// OpenAI-shaped error body (apierr).
//
// The wiring builds it over the process's audit.Reader and mounts the two
// handlers behind authentication. It imports audit, identity, mcpgw (the
// registration's limits), apierr and jsonbody.
package usage
