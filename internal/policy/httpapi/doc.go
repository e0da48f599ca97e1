// Package httpapi is the HTTP surface of the policy library component
// (policy-perfect, POLICY_PORT 7782): /api/policies, /api/presets,
// /api/policy/assignments, /api/stats, document-to-policy generation and
// its jobs, behind the admin key.
//
// Only wire imports it.
package httpapi
