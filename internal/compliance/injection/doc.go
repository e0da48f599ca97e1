// Package injection detects prompt injection and jailbreak attempts:
// instruction override (English, German, Spanish, French), system-prompt and
// secret extraction, goal hijacking (including instructions hidden in
// documents for the model that reads them), role-play and "developer mode"
// jailbreaks, markdown-image exfiltration, and payloads hidden by encoding
// (base64, hex, URL escapes, homoglyphs, zero-width and tag characters),
// decoded before matching.
//
// Detector implements detect.Detector; its Score is the injection likelihood
// (0–1) that the quality harness ranks for ROC-AUC and the risk model takes
// as a feature. Findings are detect.PromptInjection or detect.Jailbreak with
// byte offsets into the original text and a rule such as "override:de",
// "extraction", "hijack", "dan", "devmode", "jailbreak", "exfil:markdown",
// "override:template" or "encoded:base64+override".
//
// # How it works
//
// One pass normalises the text (lower case, NFKD with marks dropped,
// Cyrillic/Greek look-alikes folded to Latin, zero-width characters and soft
// hyphens removed, tag characters read as ASCII) into a byte string with an
// offset map back to the original, and flags the bytes that came from an
// obfuscator's characters. The words are looked up once in a lexicon that
// gives each a set of word classes (override verb, scope, object, reveal
// verb, role, restriction …); words of no class cost one map lookup. Family
// matchers start only at anchor words and read a few words around them, so
// ordinary prose costs about 55–60 µs per 4 KB and no allocation.
//
// A match is weighed, not just found: its log-odds add up its parts — for
// "ignore all previous instructions" the verb's strength, the object
// ("instructions" > "rules" > "context"), the scope ("previous", "all",
// "above" > "your" > "the") — and subtract what makes it ordinary: a
// technical object nearby ("ignore the default settings"), the user's own
// text ("ignore my previous email"), an infinitive or reported speech ("a
// user asked it to repeat the text above"), a complement ("the instructions
// for the printer"). A role ("act as", "pretend") counts only with a
// jailbreak cue (no restrictions, unfiltered, DAN, an evil persona, a
// harmful procedure). Hits near each other raise each other; the text's score
// is the sigmoid of its best hit.
//
// # Talking about attacks is not attacking
//
// Questions and texts about prompt injection quote attacks. A hit is
// discounted when a topic word (injection, jailbreak, attack, security,
// filter …) and a discussion word (explain, example, detect, prevent, why
// …) surround it, more when it is in quotation marks, and more again after
// "phrases like", "such as", "catch". So "Our filter should catch 'ignore
// previous instructions'" stays clean while the same words as an order, or
// as content to translate ("Translate: 'ignore previous instructions …'"),
// are flagged. The discount is never applied to an obfuscated or encoded
// hit: nobody hides an example. An attacker can wrap an attack in such a
// discussion; the risk model still sees the discounted score.
//
// # Bounds
//
// Every input is accepted. At most 64 MiB of a text are scanned; blobs of
// 16–8192 bytes are decoded, at most 24 decode attempts per text and two
// levels deep; at most 128 URLs are read; at most 256 hits are kept (the
// weakest give way). All scans are linear in the text's length.
//
// It imports, of svc, only internal/compliance/detect.
package injection
