// Package quality is the compliance detectors' quality benchmark: labelled
// sets kept in testdata/ (PII and secrets with their spans, hard negatives,
// prompt injections and benign text), each with a tune split and a held-out
// split never tuned on, their sources recorded beside them
// (testdata/README.md, testdata/SOURCES.md); and the harness that reports
// span-level precision, recall and F1 per type (EvaluateSpans), the false
// positive rate on hard negatives (EvaluateHardNegatives), and the injection
// detector's precision, recall, F1 and ROC-AUC (EvaluateInjection). Run
// measures a scanner and an injection scorer on the held-out split against
// the targets; NaiveScan and NaiveInjectionScore are the bare-regex
// baseline it is compared with.
//
// The sets are written by the generator in gen/ (go generate). Nothing in
// svc imports this package at run time.
package quality
