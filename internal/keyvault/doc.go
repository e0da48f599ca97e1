// Package keyvault owns provider API keys: it validates, seals (secret.Sealer,
// aad = provider name) and stores them through Store, resolves the key to use
// for a provider (a stored key wins over <PROVIDER>_API_KEY from the
// environment) behind an in-memory cache, and keeps the caches of every
// process coherent through invalidations on the KV channel "keyvault:changed".
// SQLStore is the Store on SQL (store_sql.go).
//
// It imports secret, store and store/sqlstore. It is imported by wire (construction, Run),
// proxy (Key, on the request path) and mgmt (Put, List, Delete).
package keyvault
