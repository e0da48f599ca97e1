// Package quality is the compliance detectors' quality benchmark: labelled
// sets kept in testdata/ (PII and secrets with their spans, hard negatives,
// prompt injections and benign text), each with a tune split and a held-out
// split never tuned on, their sources recorded beside them; and the harness
// that reports span-level precision, recall and F1 per type, the false
// positive rate on hard negatives, and the injection detector's precision,
// recall, F1 and ROC-AUC.
//
// Nothing in svc imports it at run time.
package quality
