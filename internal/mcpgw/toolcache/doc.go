// Package toolcache is the tool gateway's tool-call cache: the results of
// read-only tool calls, keyed by the caller's tenant, the server, the tool
// and the call's canonical arguments (mcpgw.CacheKey), kept for the
// server's TTL in svc's shared KV store so that every replica serves what
// any replica stored. Cache implements mcpgw.Cache (whose Put takes a
// result's JSON when the caller holds it, so it is not encoded again) and
// mcpgw.JSONCache (a hit's JSON).
//
// What is stored: a successful result only. A result with isError set is
// never stored (a tool's error is an answer about that moment, and caching
// it would repeat a transient failure), nor is a result whose JSON is over
// Options.MaxBytes (1 MiB by default): bigger results are simply not cached.
// A result is stored as its JSON, zstd-compressed past 1 KiB, with the cost
// of the call that produced it.
//
// Keys: an entry's KV key is
//
//	mcp:tc:e:<global generation>.<server generation>:<hex SHA-256 of tenant, server, tool, arguments>
//
// so a key has the same bounded length whatever the arguments, and tenants
// never share an entry. Flushing never scans keys: Flush bumps the global
// generation (mcp:tc:gen) and FlushServer the server's (mcp:tc:gen:s:<id>),
// after which no replica reads the older entries (they expire by their
// TTL). A Cache keeps the generations it read for at most a second, so
// another replica's flush is seen within a second; its own at once.
//
// Statistics are fleet-wide KV counters per server (mcp:tc:stats:<id>:hits,
// :misses, :saved_micro_usd): Get counts a miss, Hit counts a hit and its
// savings; Stats reads them.
//
// Failures: the KV store failing on Get is a miss (logged at most once a
// minute), never an error to the caller; Put, Flush and Stats return the
// store's error.
//
// Imports of svc: mcpgw and store. The wiring builds it; the gateway calls it
// through mcpgw.Cache and the HTTP surface calls Stats, Flush and
// FlushServer.
package toolcache
