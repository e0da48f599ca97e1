// Package verify owns the verification of a semantic-cache candidate: before
// the cache serves an answer stored for one prompt to a query whose embedding
// is merely close to it, verify checks that the two texts ask the same thing.
// Embeddings blur exactly the details that change an answer, so verify
// compares them explicitly: numbers (in digits or words), negation, quoted
// strings and code-like identifiers, named entities, language, antonym
// flips (largest/smallest, enable/disable, …), and the things asked about
// (a content noun swapped in the same request: "delete a question" /
// "delete an answer").
//
// Extract computes a prompt's Features once (the cache stores them with an
// entry, so they are JSON-serialisable); Agree compares a query's Features
// with a cached prompt's. Verification is deliberately precise rather than
// lenient: a false miss costs one upstream call, a false hit serves a wrong
// answer.
//
// verify imports, of svc, only internal/cache/embed (its word folding, so
// that the content-word check counts as one word what the built-in embedder
// does); internal/cache and its benchmark (internal/cache/quality) import
// it.
package verify
