// Package registry keeps the registered MCP servers: their records in SQL
// (table mcp_servers, migration 00012: the registration as JSON without
// its credential, the credential — auth_token and a stdio server's env
// values — sealed with secret.Sealer, the row's id as additional data), the
// admin operations on them (Registry.Create, Update, Delete, Get, List:
// normalised, validated and, for base_url, checked by the egress policy),
// and the in-process view every proxy reads on each call
// (Registry.Server, Servers: an atomic snapshot, no SQL on the call path;
// Credential opens the sealed credential for the upstream side).
//
// Changes reach every process within a second: each write publishes the
// server's id on the KV channel "mcp:servers:changed" and every Registry's
// Run reloads that row; a full reload every 30 s, and at once when the bus
// comes back after an outage, heals a missed notice. OnChange hooks let the
// catalog and the upstream sessions drop what they hold of a changed
// server. SQLStore is the Store on SQL (store_sql.go).
//
// It imports mcpgw, egress, secret, store and store/sqlstore; the wiring
// (construction, Run), the gateway (through mcpgw.Servers) and the HTTP
// surface import it.
package registry
