// Package httpapi is the HTTP surface of the policy library component
// (policy-perfect, POLICY_PORT 7782): /api/policies, /api/presets,
// /api/policy/assignments and /api/stats over a Store (policy.SQLStore),
// behind the admin key (401 for any other caller), and /health and /ready
// open. Each policy is answered with the checks its content compiles to
// (Deps.Compile). Document-to-policy generation and its jobs are served
// by policy/docs and added to the same mux with API.Mount. Handlers
// return errors; one writer renders them, OpenAI-shaped.
//
// Only wire imports it.
package httpapi
