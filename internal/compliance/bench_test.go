package compliance_test

import (
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/compliance/quality"
)

// prompts4KB are ~4 KB prompts made of the tune sets' texts in turn (PII,
// attacks and benign prompts, hard negatives): denser in values than most
// prompts, so a bound on them holds for ordinary ones.
func prompts4KB(b *testing.B) []string {
	b.Helper()
	pii, err := quality.LoadExamples("testdata/pii_tune.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	inj, err := quality.LoadInjections("testdata/injection_tune.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	neg, err := quality.LoadHardNegatives("testdata/hardneg_tune.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	var out []string
	var sb strings.Builder
	for i := 0; len(out) < 32 && i < len(pii); i++ {
		for _, t := range []string{pii[i].Text, inj[i%len(inj)].Text, neg[i%len(neg)].Text} {
			if sb.Len()+len(t)+1 > 4096 {
				out = append(out, sb.String())
				sb.Reset()
			}
			sb.WriteString(t)
			sb.WriteByte('\n')
		}
	}
	return out
}

func BenchmarkScan4KB(b *testing.B) {
	e, err := compliance.NewDefault()
	if err != nil {
		b.Fatal(err)
	}
	ps := prompts4KB(b)
	p := compliance.Policies[compliance.DefaultPolicy]
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Scan(ps[i%len(ps)], p)
	}
}

func BenchmarkRedact4KB(b *testing.B) {
	e, err := compliance.NewDefault()
	if err != nil {
		b.Fatal(err)
	}
	ps := prompts4KB(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		e.Redact(ps[i%len(ps)])
	}
}
