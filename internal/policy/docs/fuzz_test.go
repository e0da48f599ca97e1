package docs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fuzzSeeds are small documents of each type, valid and damaged.
func fuzzSeeds(t testing.TB) map[string][]byte {
	pdf := makePDF(t, [][]string{{"1. Data", "Staff must not share SSNs."}}, pdfOpts{})
	return map[string][]byte{
		"pdf":           pdf,
		"pdf-flate":     makePDF(t, [][]string{{"CARDS", "Card numbers must be masked."}}, pdfOpts{flate: true}),
		"pdf-encrypted": makePDF(t, [][]string{{"x"}}, pdfOpts{encrypted: true}),
		"pdf-scanned":   makePDF(t, [][]string{{""}}, pdfOpts{image: true}),
		"pdf-cmap":      makePDF(t, [][]string{{"AB"}}, pdfOpts{cmap: "1"}),
		"pdf-truncated": pdf[:len(pdf)*2/3],
		"docx": makeDOCX(t, []docxPara{
			{style: "Heading1", text: "Customer Data"},
			{text: "Passwords shall never be pasted."},
			{table: [][]string{{"a", "b"}}},
		}, "Header", "Footer"),
		"txt": []byte("# Policy\n\n1.2 Data\nE-mail addresses must be redacted.\n"),
	}
}

// TestWriteFuzzSeeds writes the seed corpus of FuzzExtract to testdata
// when SVC_WRITE_FUZZ_SEEDS is set.
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("SVC_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set SVC_WRITE_FUZZ_SEEDS=1 to rewrite testdata/fuzz/FuzzExtract")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzExtract")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, data := range fuzzSeeds(t) {
		body := fmt.Sprintf("go test fuzz v1\n[]byte(%s)\n", strconv.Quote(string(data)))
		if err := os.WriteFile(filepath.Join(dir, "seed-"+name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// fuzzLimits keep each fuzz input cheap.
var fuzzLimits = Limits{
	MaxDecompressed: 4 << 20, MaxPartDecompressed: 2 << 20, MaxZipFiles: 64,
	MaxParagraphs: 2000, MaxText: 1 << 20, MaxPages: 50,
}

// FuzzExtract: no input panics, hangs or escapes the error kinds, and
// whatever is extracted drafts suggestions without panicking.
func FuzzExtract(f *testing.F) {
	for _, data := range fuzzSeeds(f) {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ExtractLimits(t.Context(), data, fuzzLimits)
		if err != nil {
			var ee *ExtractError
			if !errors.As(err, &ee) {
				t.Fatalf("error %v (%T) is not an *ExtractError", err, err)
			}
			return
		}
		for _, s := range Suggest(doc) {
			if !strings.HasPrefix(s.ID, "sug_") || s.Confidence <= 0 || s.Confidence > 1 || s.Priority < 0 || s.Priority > 100 {
				t.Fatalf("bad suggestion %+v", s)
			}
		}
	})
}
