// Package compliance is the compliance engine as a library: the built-in
// policy families (enterprise_standard, hipaa, pci_dss, gdpr, strict: which
// entity types each reports, with what severity and action, and from what
// confidence), Engine.Scan (detectors → resolved findings → violations,
// compliance score, risk level, recommended action, masked PII, redacted
// text), Engine.Redact, the intelligent scan over the risk model, the scan
// records kept for feedback (features, never the text) and the
// per-organisation baseline.
//
// The detector families live in pii, secrets and injection, the risk model
// in model; the HTTP surface is compliance/httpapi. The proxy (policy
// enforcement before and after each call) and the compliance component call
// this package in process.
package compliance
