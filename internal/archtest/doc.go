// Package archtest owns the tests that keep svc's source tree true to its
// architecture (docs/ARCHITECTURE.md, and the design and style guides it
// follows): every package has a doc comment saying what it owns, imports obey
// the import rules, docs/ARCHITECTURE.md lists every package and nothing that
// does not exist, and no source file outgrows the size limit.
//
// It has no code besides this comment. Nothing imports it, a rule its own
// tests enforce.
package archtest
