// Package catalog is the tool gateway's tool catalog and semantic tool
// search: the tools every registered MCP server lists, kept in process and
// embedded once per change, behind three read-only routes:
//
//   - GET /api/mcp/catalog: the servers and their tools, with when each
//     was last listed and the last listing error;
//   - GET /api/mcp/tools/index: every indexed tool with its embedding
//     metadata (model, dimensions, indexed_at);
//   - GET /api/mcp/tools/search?q=&k=: the k tools (1–50, default 5) whose
//     name, title, description and parameter names are nearest the query
//     by cosine similarity.
//
// Each proxy builds its own index from upstream: RefreshAll at start, then
// Refresh when a server is registered or changed or sends
// notifications/tools/list_changed, Remove when it is deleted. Concurrent
// Refresh calls for one server coalesce: while one runs, the others wait for
// a single follow-up run that begins after it (so a change announced during
// a listing is not missed). A server that fails to list keeps its last good
// tools; the error and its time are shown in the catalog.
//
// Embedding: the semantic cache's embedder (embed.Embedder; the built-in
// lexical embed.Local by default), with the model name and dimensions it
// reports recorded per tool. A tool is embedded when its text changes, never
// at search time; only the query is embedded per search. Search is exact (a
// dot product per tool: a few thousand tools take well under a millisecond).
// The text of a tool is its name split into words (snake_case, camelCase and
// kebab-case), its title, its description (first 2 KiB) and its top-level
// parameter names split likewise. With the lexical embedder, search finds
// tools that share words (or their WordNet synonyms and stems) with the
// query and is weak on paraphrase: see quality_test.go for the measured
// recall.
//
// Visibility: every answer takes a Filter (server id, tool name → shown),
// which the HTTP surface gets per request from Options.Visible, so a caller
// sees only the tools it may call.
//
// Imports of svc: mcpgw, cache/embed, apierr, jsonbody, store. The wiring
// builds it and the HTTP surface mounts its handlers.
package catalog
