// Package oauth holds the OAuth 2.1 authorizations svc's tool gateway uses
// to reach upstream MCP servers that require them, as the MCP authorization
// specification describes (2025-06-18 and later).
//
// An admin starts an authorization (Flow.Initiate, GET
// /api/mcp/auth/initiate?server_id=): svc discovers the server's
// authorization server — protected-resource metadata (RFC 9728) named by the
// resource_metadata of the server's 401 WWW-Authenticate challenge or found
// at /.well-known/oauth-protected-resource beside its URL, then the
// authorization server's metadata (RFC 8414
// /.well-known/oauth-authorization-server, else OpenID Connect
// /.well-known/openid-configuration), its issuer checked against the one the
// resource named — takes a client (the one configured on the server, else one
// registered dynamically, RFC 7591, reused for the next authorization by the
// same issuer), and answers the authorization URL: the authorization code
// grant with PKCE S256, a single-use random state (32 bytes, 10 minutes, kept
// sealed in the KV store so any replica can complete it) and the RFC 8707
// resource parameter. The authorization server redirects the admin's browser
// to the callback (Flow.Callback, GET /api/mcp/auth/callback), which consumes
// the state, checks the RFC 9207 iss parameter, exchanges the code with the
// PKCE verifier and the resource, and stores the tokens sealed in SQL (table
// mcp_oauth_tokens, migration 00014). Flow.Token gives the gateway the access
// token of a server, refreshed (with the resource parameter) when it expires
// within a minute; two replicas refreshing at once compare and set on the
// row's version, and the loser takes the winner's token. Flow.Tokens (GET
// /api/mcp/auth/tokens) lists which servers have tokens, their scopes and
// expiry, never a token.
//
// Token values, the client secret and the PKCE verifier never leave svc:
// they are not in answers, errors or logs. Metadata, registration and token
// answers are read up to 1 MiB. Every URL discovery yields must be https
// (Config.AllowHTTPLoopback also admits http to a loopback address, for tests
// and local development); the HTTP client, given by the wiring, guards against
// requests to private addresses.
//
// The metadata and registration types and fetches are the MCP Go SDK's
// (github.com/modelcontextprotocol/go-sdk/oauthex); the code exchange, the
// refresh and PKCE are golang.org/x/oauth2's.
//
// The tool gateway's wiring imports it and mounts its handlers (http.go):
// initiate, tokens and revoke behind the admin check; the callback where the
// admin's browser, sent by the authorization server, reaches it — its
// single-use state is its credential. It imports apierr, jsonbody, identity,
// secret, store and sqlstore.
package oauth
