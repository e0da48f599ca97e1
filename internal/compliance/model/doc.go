// Package model is the compliance risk model: an online logistic regression
// over hashed word and character n-grams and the detectors' findings, its
// initial weights trained at build time from the labelled data in the repo,
// updated from reviewers' feedback (weighted by reviewer, each user's
// influence capped), its state versioned in SQL and shared by every replica.
package model
