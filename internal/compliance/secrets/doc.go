// Package secrets detects credentials in text: provider API keys, AWS access
// and secret keys, private-key blocks, JWTs, URLs with a password, passwords
// and high-entropy tokens next to a key word. Its Detector implements
// detect.Detector; findings are byte spans of the secret itself (the value,
// not its name), except a private key (the whole PEM block), a JWT (the
// whole token) and a URL (the whole URL, so redaction removes the password
// and the host it opens).
//
// # Rules
//
// Provider keys come from gitleaks' default rule set (gitleaks.toml, v8.30.1,
// MIT; SOURCES.md), embedded unchanged and read as data with
// github.com/BurntSushi/toml, plus svc.toml, svc's own rules in the same
// format for keys gitleaks lacks or matches in one shape only (OpenAI keys
// without the T3BlbkFJ marker, Anthropic keys of other versions, Groq,
// xAI, Replicate, OpenRouter, …; svc.toml says why each is there). Each
// rule's regex, secretGroup, entropy, keywords and allowlists (regexes and
// stop words, on the secret, the match or the line) are honoured; paths and
// commits do not apply to text. Every rule compiles with Go's regexp (none
// is skipped for that); the five rules scoped to file paths are not run,
// and two are replaced by validating detectors of this package:
// private-key (the block must hold a base64 body) and jwt (the header must
// decode to JSON with "alg").
//
// Two adaptations for prose: gitleaks' usual terminator (a quote, space,
// ';' or the end) also accepts closing punctuation before a space and
// brackets, '*', '|', '&' (keys end sentences, markdown and URL queries);
// and the Go pattern is compiled with wide counted repetitions opened
// (x{0,50} → x*), since Go's regexp runs in time proportional to the
// pattern, the bounds being enforced around the match instead.
//
// # Speed
//
// All keywords (rules' and the native detectors') are found in one
// Aho-Corasick pass (github.com/BobuSumisu/aho-corasick) over the text
// lower-cased in ASCII; a rule runs only if one of its keywords occurs, and
// then cheaply. Of the 236 patterns (atlassian's alternation of two shapes
// runs as two), 130 have matches that all start with a literal and run
// anchored at its occurrences; 100 follow gitleaks' assignment template
// (`<name with keyword> = <value>`, generic-api-key among them) and run
// only in small windows around a name literal that an operator and a long
// enough value follow; 3 run in windows around a literal every match holds;
// 3 run over the whole text. TestDifferential checks this finds exactly
// what running every pattern over the whole text finds. The rules are
// compiled once per process, on the first New (40–130 ms measured).
//
// # Decisions
//
//   - Types: aws-access-token → AWS_ACCESS_KEY; jwt → JWT; private-key →
//     PRIVATE_KEY; other provider rules → API_KEY; generic-api-key →
//     API_KEY when the name holds "api" or "key" (but not password,
//     secret, master, signing, encryption, session, HMAC, JWT), otherwise
//     SECRET; a high-entropy token after a key word → API_KEY after "API
//     key", otherwise SECRET; passwords → SECRET; URLs of a database or
//     broker scheme → DATABASE_URL, of another (https, ftp, smtp, …) →
//     SECRET.
//   - Placeholders are not secrets: marker words (example, your, xxxx,
//     ****, ..., <…>, ${…}, {{…}}, redacted, dummy, changeme, …), variable
//     references (os.environ, process.env, getenv, $VAR, %VAR%), few
//     distinct characters, runs of one character, typed sequences
//     (abc123def456…), judged on the part after a rule's literal prefix;
//     and vendors' documented examples (AKIAIOSFODNN7EXAMPLE, its secret
//     key, jwt.io's sample token).
//   - A URL without a password, with an empty one or a marker one
//     ("password", "<password>", "${DB_PASS}", "…") is not a secret; a weak
//     one ("changeme123") is.
//   - Hashes, UUIDs, git SHAs and versions are not secrets; a hex or base64
//     token right after a key word ("token: 9f86d0…", "my key is …") is,
//     unless the word names something else ("primary key", "page token",
//     "public key", "CSRF token").
//   - Findings inside the payload of a base64 data: URI are dropped: an
//     inlined image is not a credential, and its random bytes would match
//     by chance.
//
// The Detector is safe for concurrent use; per-call memory is pooled. It
// imports, of svc, only internal/compliance/detect.
package secrets
