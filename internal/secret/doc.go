// Package secret owns secrets at rest: the master key (parsing it from
// SVC_MASTER_KEY or generating it into the data directory), files that hold
// generated secrets with owner-only permissions, envelope encryption of
// individual secrets (Sealer), display masking and constant-time comparison.
//
// It uses only the standard library and imports nothing of svc. It is
// imported by keyvault (provider keys), wire (loading the master key and the
// generated ADMIN_API_KEY) and mgmt (masking, comparing the admin key).
package secret
