// Package model is the compliance risk model: an online logistic regression
// over hashed word and character n-grams and the detectors' findings, its
// initial weights trained at build time from the labelled data in the repo,
// updated from reviewers' feedback (weighted by reviewer, each user's
// influence capped), its state versioned in SQL and shared by every replica.
//
// # Use
//
//	m, err := model.New(ctx, db, model.Options{})  // embedded weights + SQL state
//	go m.Run(ctx)                                  // follow other replicas' feedback
//
//	v := model.Featurize(content, findings)        // on every intelligent scan
//	p, explain := m.Score(v)                       // risk 0–1, the features behind it
//	blob, _ := model.Encode(v)                     // keep with the scan (not the text)
//
//	v, _ = model.Decode(blob)                      // on feedback for that scan
//	applied, err := m.Learn(ctx, model.Feedback{ScanID: id, UserID: u, OrgID: o,
//		Vector: v, Label: 0, Predicted: p, Weight: 1})
//
//	m.Stats(ctx); m.UserStatus(ctx, u); m.Summary(ctx)
//
// # Features
//
// Featurize reads the first MaxText bytes. The spans of PII and secret
// findings are replaced by typed placeholders ("[ssn]") first, digits fold
// to 0, case and white space are normalised: no detected value, and no
// number, reaches the features. Word unigrams and bigrams and character
// 3–5-grams are hashed (FNV-1a, murmur3's finaliser) into HashedDim
// buckets, each family's block L2-normalised, at most MaxFeatures of them;
// the detectors add a log-scaled count per finding type and the highest
// score per category. What is stored for learning is Encode's form of
// these features (about 3 bytes a feature, 25 KB at most), never the text.
// Hashed n-grams are not encryption: someone holding the stored features
// and a guess of the text can test the guess; values the detectors found
// are not in them at all.
//
// # Learning and sharing
//
// The feedback log (table compliance_model_events, migration 00008) is
// append-only, its seq gap-free and in commit order: every insert first
// moves compliance_model_head's row, whose lock serialises inserting
// transactions across replicas. Every replica applies the events in seq
// order to the same initial weights, with arithmetic that rounds every
// product explicitly and a portable exp (mathx.go), so all replicas hold
// bit-identical weights at a given version (the last seq applied), on any
// CPU. Learn stores an event and applies it at once; Run polls every
// PollInterval (250 ms) for the others'. Applying a batch copies the
// weights (1 MiB), updates the copy and swaps it in through an atomic
// pointer: Score and Predict never wait for an update.
//
// An event moves its own text's logit by LearningRate × influence ×
// (label − score), spread over the text's features in proportion to their
// values (detector features at a tenth of the rate: feedback mostly
// corrects what is particular to the text). influence is the reviewer's
// weight decayed and capped per user: a user's k-th earlier event on a
// near-duplicate text (SimHash of the features within 10 bits) makes the
// new one count weight/(1+k), and a user's influences on near-duplicates
// sum to at most UserBudget. So one user moves a text's logit by less than
// LearningRate × UserBudget (1.8 by default: a text scored 0.86 or more
// stays flagged whatever one user does), while three reviewers unflag a
// false positive scored 0.95 in three corrections. The influence is
// computed in the inserting transaction and stored with the event; replicas
// replay it as stored.
//
// A fifth of scan ids (Holdout: FNV-1a of the id modulo 5) are holdout:
// their feedback is stored, counted in the status reports, never trained
// on, and Stats measures the current weights on them.
//
// # Snapshots and retention
//
// Every SnapshotEvery (200) events a replica stores the weights
// (compliance_model_snapshots, keyed by the initial weights' id and the
// version; the first writer wins, the content is the same on every
// replica); a starting replica loads the newest one of its initial weights
// and replays only the events after it. The newest three snapshots of the
// current initial weights are kept, other initial weights' for a day (a
// release with newly trained weights replays the events from its own
// start). Event rows are kept (the status reports count them); their
// features are cleared once no replica can need them: trained events at or
// below the oldest kept snapshot and older than the newest FeatureKeep
// (10,000) events, holdout events beyond the newest HoldoutEval (1,000).
// A newly trained release therefore replays at most the last FeatureKeep
// events' worth of feedback.
//
// # Build-time training
//
// go generate runs ./gen, which trains on ../quality/testdata's
// *_tune.jsonl sets (Train: SGD, fixed-seed shuffle, deterministic to the
// bit) and writes weights.bin (the weights, zstd-compressed, with the hash
// of the data) and heldout.bin (the *_heldout.jsonl rows with their
// findings); both are embedded. A test retrains and compares bytes, and
// fails when the data changed without go generate. Until the detectors are
// wired into the generator, training uses the gold entities as findings
// (and, for injection rows, a finding of the row's label), dropped from a
// third of the rows so the n-grams learn to stand alone; the held-out rows
// carry no findings, so Stats' built-in metrics are those of the text alone,
// a lower bound (gen also prints them with the gold findings, an upper
// bound). Pass the detectors as TrainConfig.Findings to train and measure on
// their real output.
package model
