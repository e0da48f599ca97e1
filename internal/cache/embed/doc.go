// Package embed owns the text embedders of the semantic cache: the Embedder
// interface, Local (a built-in lexical embedder that needs no network and no
// model download), and wrappers that add a bounded memo (Memo), request
// batching (Batch) and vector normalisation (Func) to any embedder; and Fold,
// Local's folding of one word, which the cache's verification shares.
//
// Local maps a text to a unit-length vector of LocalDim signed, hashed
// features. A text is lower-cased and split into words; question scaffolding
// and function words ("how do I", "can you tell me", "please", "what is the")
// are dropped; each remaining word is folded to a canonical form (a few
// abbreviations expanded, number names made digits, typos one edit from a
// known word corrected, then the WordNet 3.0 synonym of its most frequent
// sense, then a Porter stem). The features are those forms, pairs of
// neighbouring forms, and their character n-grams, each weighted by a
// frequency prior so that rare words count more. Paraphrases that share their
// content words therefore land close together (cosine ≥ 0.9 for most
// rewordings of scaffolding, synonyms, inflections and typos), while texts
// that share no content land near 0. Local does not see negations, numbers
// or names as anything special: the cache's verification step checks those.
//
// Vectors from embedders with different names are never comparable. The
// package is a leaf: it imports nothing of svc. internal/cache and its
// sub-packages, and cmd/ or internal/wire to configure them, import it.
//
// lexicon.txt.gz is derived from WordNet 3.0 by gen_lexicon.go (see
// LICENSE.wordnet for WordNet's licence); go generate rebuilds it where the
// Debian package wordnet-base is installed.
package embed
