// Package e2e holds svc's end-to-end tests: they build real processes with
// wire on loopback ports, drive them with the official OpenAI Go SDK and plain
// HTTP, and check the answers, headers, audit log and metrics. It has no
// non-test code besides this comment; nothing imports it.
package e2e
