// Package secrets detects credentials in text: provider API keys (gitleaks'
// default rule set, embedded as data), AWS access and secret keys, private-key
// blocks, JWTs, database URLs with a password, and high-entropy tokens next to
// a key word; placeholders (`sk-...`, `<YOUR_API_KEY>`, `xxxx`) are not
// secrets.
//
// It imports, of svc, only internal/compliance/detect.
package secrets
