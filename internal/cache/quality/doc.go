// Package quality owns the semantic cache's quality benchmark: a labelled
// set of prompt pairs (testdata/pairs.jsonl: paraphrases that must hit,
// near-duplicates that must not; testdata/heldout.jsonl: pairs never tuned
// on, whose figures only are reported) and the harness that measures, for an
// embedder and a similarity threshold, with and without verification, how
// often the cache would serve a paraphrase (hit rate) and how often it would
// serve the wrong answer (false-hit rate).
//
// Its tests hold the built-in embedder and verification to the cache's
// targets. Nothing in svc imports quality at run time; it imports, of svc,
// only internal/cache/verify (and internal/cache/embed in its tests).
package quality
