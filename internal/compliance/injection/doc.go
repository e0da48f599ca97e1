// Package injection detects prompt injection and jailbreak attempts:
// instruction override (English, German, Spanish, French), system-prompt and
// secret extraction, goal hijacking, role-play and "developer mode"
// jailbreaks, markdown-image exfiltration, and payloads hidden by encoding
// (base64, hex, homoglyphs, zero-width characters), decoded before matching.
//
// It imports, of svc, only internal/compliance/detect.
package injection
