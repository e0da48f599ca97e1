package docs

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"errors"
	"hash/crc32"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestDetectFormat(t *testing.T) {
	tests := []struct {
		name string
		data []byte
		want Format
		err  error
	}{
		{"pdf", makePDF(t, [][]string{{"hello"}}, pdfOpts{}), FormatPDF, nil},
		{"docx", makeDOCX(t, []docxPara{{text: "hello"}}, "", ""), FormatDOCX, nil},
		{"text", []byte("Plain text, café.\n"), FormatTXT, nil},
		{"zip without word/document.xml", zipOf(t, map[string]string{"a.txt": "x"}), "", ErrUnsupportedType},
		{"invalid UTF-8", []byte("abc\xff\xfe"), "", ErrUnsupportedType},
		{"binary", []byte("\x89PNG\r\n\x1a\n\x00\x00"), "", ErrUnsupportedType},
		{"PDF named by its extension only", []byte("GIF89a....."), FormatTXT, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DetectFormat(tt.data)
			if !errors.Is(err, tt.err) || got != tt.want {
				t.Errorf("DetectFormat = %q, %v; want %q, %v", got, err, tt.want, tt.err)
			}
		})
	}
}

func zipOf(t testing.TB, files map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for name, data := range files {
		w, _ := zw.Create(name)
		w.Write([]byte(data))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestExtractTXT(t *testing.T) {
	doc, err := Extract(t.Context(), []byte(policyText))
	if err != nil {
		t.Fatal(err)
	}
	want := Document{Type: FormatTXT, Sections: []Section{
		{Heading: "Acme Data Handling Policy", Paragraphs: []string{}},
		{Heading: "1. SCOPE", Paragraphs: []string{"This policy applies to all employees who use AI assistants. It supports our GDPR obligations."}},
		{Heading: "2. Customer Data", Paragraphs: []string{"Employees must not enter social security numbers or credit card numbers into AI tools. Customer e-mail addresses must be masked before they are shared with an external model."}},
		{Heading: "3. Credentials", Paragraphs: []string{"Passwords, API keys and other credentials shall never be pasted into prompts."}},
		{Heading: "4. Incidents", Paragraphs: []string{"Staff should report any output that contains personal data to the security team."}},
		{Heading: "5. Good Practice", Paragraphs: []string{"Teams should consider reviewing prompts where possible."}},
	}}
	if diff := cmp.Diff(want, doc); diff != "" {
		t.Errorf("Extract(policy text) mismatch (-want +got):\n%s", diff)
	}
}

func TestHeadingLine(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{"## Retention", true},
		{"#hashtag", false},
		{"1.2 Payment Card Data", true},
		{"IV. Enforcement", true},
		{"DATA CLASSIFICATION", true},
		{"1. Staff must not share passwords", false}, // a numbered rule
		{"1.2 payment data", false},
		{"This line ends with a period.", false},
		{"OK", false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			if _, got := headingLine(tt.line); got != tt.want {
				t.Errorf("headingLine(%q) = %v, want %v", tt.line, got, tt.want)
			}
		})
	}
}

// docText is a document's headings and paragraphs, one a line.
func docText(d Document) string {
	var sb strings.Builder
	for _, s := range d.Sections {
		if s.Heading != "" {
			sb.WriteString("# " + s.Heading + "\n")
		}
		for _, p := range s.Paragraphs {
			sb.WriteString(p + "\n")
		}
	}
	return sb.String()
}

func TestExtractPDF(t *testing.T) {
	pages := [][]string{
		{"1. Customer Data", "", "Employees must not enter social security numbers", "into AI tools (ever)."},
		{"CREDENTIALS", "", "Passwords shall never be pasted into prompts."},
	}
	want := "# 1. Customer Data\n" +
		"Employees must not enter social security numbers into AI tools (ever).\n" +
		"# CREDENTIALS\n" +
		"Passwords shall never be pasted into prompts.\n"
	for _, flate := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "flate"}[flate]
		t.Run(name, func(t *testing.T) {
			doc, err := Extract(t.Context(), makePDF(t, pages, pdfOpts{flate: flate}))
			if err != nil {
				t.Fatal(err)
			}
			if doc.Type != FormatPDF {
				t.Errorf("Type = %q, want pdf", doc.Type)
			}
			if got := docText(doc); got != want {
				t.Errorf("text:\n%s\nwant:\n%s", got, want)
			}
		})
	}
}

func TestExtractPDFFailures(t *testing.T) {
	good := makePDF(t, [][]string{{"hello"}}, pdfOpts{})
	tests := []struct {
		name string
		data []byte
		kind error
	}{
		{"encrypted", makePDF(t, [][]string{{"secret"}}, pdfOpts{encrypted: true}), ErrEncrypted},
		{"garbage", append([]byte("%PDF-1.4\n"), bytes.Repeat([]byte("garbage "), 100)...), ErrUnreadable},
		{"truncated", good[:len(good)/2], ErrUnreadable},
		{"broken xref", bytes.Replace(good, []byte("xref"), []byte("xfer"), 1), ErrUnreadable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Extract(t.Context(), tt.data)
			var ee *ExtractError
			if !errors.Is(err, tt.kind) || !errors.As(err, &ee) || ee.Reason == "" {
				t.Fatalf("Extract = %v, want an *ExtractError of %v with a reason", err, tt.kind)
			}
		})
	}
}

// TestExtractPDFHostileNumbers: numbers that would make the PDF library
// allocate without bound are refused before it reads the file.
func TestExtractPDFHostileNumbers(t *testing.T) {
	good := makePDF(t, [][]string{{"A line"}}, pdfOpts{})
	withCMap := func(n string) []byte { return makePDF(t, [][]string{{"AAA"}}, pdfOpts{cmap: n, flate: true}) }
	if doc, err := Extract(t.Context(), withCMap("1")); err != nil || !strings.Contains(docText(doc), "AAA") {
		t.Fatalf("Extract(PDF with a ToUnicode CMap) = %q, %v; want AAA", docText(doc), err)
	}
	tests := []struct {
		name string
		data []byte
	}{
		{"xref object number", bytes.Replace(good, []byte("xref\n0 "), []byte("xref\n999999999 "), 1)},
		{"trailer size", bytes.Replace(good, []byte("/Size "), []byte("/Size 99999999"), 1)},
		{"huge integer", bytes.Replace(good, []byte("/Size "), []byte("/Size 99999999999999999999"), 1)},
		{"bfchar count", withCMap("999999999")},
		{"predictor columns", bytes.Replace(good, []byte("/Length"), []byte("/DecodeParms << /Predictor 12 /Columns 4000000000 >> /Length"), 1)},
		{"xref stream widths", bytes.Replace(good, []byte("/Length"), []byte("/W [1 99999999999 2] /Length"), 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Extract(t.Context(), tt.data); !errors.Is(err, ErrUnreadable) {
				t.Errorf("Extract = %v, want ErrUnreadable", err)
			}
		})
	}
}

func TestExtractScannedPDF(t *testing.T) {
	doc, err := Extract(t.Context(), makePDF(t, [][]string{{""}, {""}}, pdfOpts{image: true, flate: true}))
	if err != nil {
		t.Fatalf("Extract(scanned PDF) = %v, want no error", err)
	}
	if !doc.Empty() {
		t.Errorf("Extract(scanned PDF) = %+v, want no text", doc)
	}
}

func TestExtractPDFCompressionBomb(t *testing.T) {
	// 8 MiB of spaces in a Flate content stream, under a 1 MiB limit.
	data := makePDF(t, [][]string{{strings.Repeat(" ", 8<<20)}}, pdfOpts{flate: true})
	lim := DefaultLimits
	lim.MaxDecompressed = 1 << 20
	_, err := ExtractLimits(t.Context(), data, lim)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ExtractLimits(bomb) = %v, want ErrTooLarge", err)
	}
}

func TestExtractDOCX(t *testing.T) {
	body := []docxPara{
		{style: "Heading1", text: "1. Customer Data"},
		{text: "Employees must not enter social security numbers into AI tools."},
		{table: [][]string{{"Data", "Rule"}, {"Card numbers", "Must be masked"}}},
		{style: "Kop1", text: "2. Credentials"},
		{text: "Passwords shall never be shared & never pasted."},
	}
	doc, err := Extract(t.Context(), makeDOCX(t, body, "Acme Confidential", "Page footer: Internal use only"))
	if err != nil {
		t.Fatal(err)
	}
	want := Document{Type: FormatDOCX, Sections: []Section{
		{Heading: "Header", Paragraphs: []string{"Acme Confidential"}},
		{Heading: "1. Customer Data", Paragraphs: []string{
			"Employees must not enter social security numbers into AI tools.",
			"Data | Rule",
			"Card numbers | Must be masked",
		}},
		{Heading: "2. Credentials", Paragraphs: []string{"Passwords shall never be shared & never pasted."}},
		{Heading: "Footer", Paragraphs: []string{"Page footer: Internal use only"}},
	}}
	if diff := cmp.Diff(want, doc); diff != "" {
		t.Errorf("Extract(docx) mismatch (-want +got):\n%s", diff)
	}
}

// bombPart is a WordprocessingML part of about size bytes of paragraphs,
// deflated to a few MiB: one flushed deflate block, repeated (no
// back-reference leaves a block).
type bombPart struct {
	compressed []byte
	crc        uint32
	size       uint64
}

// makeBombPart builds a part whose root element is root ("document", "hdr").
func makeBombPart(root string, size int64) bombPart {
	head := `<?xml version="1.0"?><w:` + root + ` ` + docxNS + `><w:body>`
	chunk := []byte(strings.Repeat("<w:p><w:r><w:t>lorem ipsum</w:t></w:r></w:p>", 1<<14)) // ~720 KiB
	var block bytes.Buffer
	fw, _ := flate.NewWriter(&block, flate.BestCompression)
	fw.Write(chunk)
	fw.Flush()
	n := size / int64(len(chunk))

	var compressed bytes.Buffer
	hw, _ := flate.NewWriter(&compressed, flate.NoCompression)
	hw.Write([]byte(head))
	hw.Flush()
	crc := crc32.NewIEEE()
	crc.Write([]byte(head))
	for range n {
		compressed.Write(block.Bytes())
		crc.Write(chunk)
	}
	tail := []byte("</w:body></w:" + root + ">")
	tw, _ := flate.NewWriter(&compressed, flate.NoCompression)
	tw.Write(tail)
	tw.Close()
	crc.Write(tail)
	return bombPart{compressed.Bytes(), crc.Sum32(), uint64(len(head)) + uint64(n)*uint64(len(chunk)) + uint64(len(tail))}
}

// zipBomb is a DOCX of the named parts; declared, when not 0, is the
// uncompressed size its headers state (a lie).
func zipBomb(t testing.TB, parts map[string]bombPart, declared uint64) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, name := range []string{"word/header1.xml", "word/document.xml"} {
		p, ok := parts[name]
		if !ok {
			continue
		}
		size := p.size
		if declared != 0 {
			size = declared
		}
		w, err := zw.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Deflate, CRC32: p.crc,
			CompressedSize64: uint64(len(p.compressed)), UncompressedSize64: size})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(p.compressed)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// peakHeap runs f and returns the most heap its objects held meanwhile
// above what they held before, sampled every millisecond.
func peakHeap(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() uint64 { metrics.Read(sample); return sample[0].Value.Uint64() }
	runtime.GC()
	base := read()
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			if v := read(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	<-stopped
	if p := peak.Load(); p > base {
		return p - base
	}
	return 0
}

func TestExtractDOCXZipBomb(t *testing.T) {
	giant := makeBombPart("document", 1<<30)
	doc6 := makeBombPart("document", 6<<20)
	hdr6 := makeBombPart("hdr", 6<<20)
	doc60 := makeBombPart("document", 60<<20)
	// The same code paths as DefaultLimits, at a tenth of the sizes, so the
	// test runs in a second.
	small := DefaultLimits
	small.MaxDecompressed, small.MaxPartDecompressed = 10<<20, 8<<20
	small.MaxParagraphs = 1 << 30 // let the inflate caps, not the paragraph count, stop it
	tests := []struct {
		name string
		data []byte
		lim  Limits
		kind error
	}{
		{"declares 1 GiB", zipBomb(t, map[string]bombPart{"word/document.xml": giant}, 0), DefaultLimits, ErrTooLarge},
		{"declares 6 MiB, inflates to 1 GiB", zipBomb(t, map[string]bombPart{"word/document.xml": giant}, 6<<20), small, ErrUnreadable},
		{"two parts of 6 MiB: over the 10 MiB total", zipBomb(t, map[string]bombPart{"word/document.xml": doc6, "word/header1.xml": hdr6}, 0), small, ErrTooLarge},
		{"60 MiB of paragraphs: over the paragraph cap", zipBomb(t, map[string]bombPart{"word/document.xml": doc60}, 0), DefaultLimits, ErrTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error
			peak := peakHeap(func() { _, err = ExtractLimits(t.Context(), tt.data, tt.lim) })
			if !errors.Is(err, tt.kind) {
				t.Fatalf("Extract(zip bomb) = %v, want %v", err, tt.kind)
			}
			t.Logf("%d bytes compressed; peak heap %d MiB; %v", len(tt.data), peak>>20, err)
			// The paragraphs kept before a cap and the decoder's tokens: far
			// under what the bomb inflates to.
			if peak > 64<<20 {
				t.Errorf("peak heap %d MiB reading the bomb, want < 64 MiB", peak>>20)
			}
		})
	}
}

func TestExtractDOCXLimits(t *testing.T) {
	many := map[string]string{"word/document.xml": `<w:document ` + docxNS + `/>`}
	for i := range 30 {
		many["word/media/f"+strings.Repeat("x", i)] = ""
	}
	paras := make([]docxPara, 50)
	for i := range paras {
		paras[i] = docxPara{text: "paragraph"}
	}
	lim := DefaultLimits
	lim.MaxZipFiles, lim.MaxParagraphs = 20, 40
	for name, data := range map[string][]byte{
		"too many files":      zipOf(t, many),
		"too many paragraphs": makeDOCX(t, paras, "", ""),
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := ExtractLimits(t.Context(), data, lim); !errors.Is(err, ErrTooLarge) {
				t.Errorf("ExtractLimits = %v, want ErrTooLarge", err)
			}
		})
	}
	t.Run("nested table rows past the text limit", func(t *testing.T) {
		// Each paragraph, cell and row is under the limit; the enclosing
		// cell passes it at the nested table's second row.
		cell := "<w:tc><w:p><w:r><w:t>" + strings.Repeat("x", 30) + "</w:t></w:r></w:p></w:tc>"
		row := "<w:tr>" + strings.Repeat(cell, 3) + "</w:tr>"
		doc := "<w:document " + docxNS + "><w:body><w:tbl><w:tr><w:tc><w:tbl>" + strings.Repeat(row, 3) +
			"</w:tbl></w:tc></w:tr></w:tbl></w:body></w:document>"
		lim := DefaultLimits
		lim.MaxText = 100
		_, err := ExtractLimits(t.Context(), zipOf(t, map[string]string{"word/document.xml": doc}), lim)
		// Refused where the cell passes the limit, not later by the total.
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "table cell") {
			t.Errorf("ExtractLimits = %v, want ErrTooLarge for the table cell", err)
		}
	})
	t.Run("malformed xml", func(t *testing.T) {
		data := zipOf(t, map[string]string{"word/document.xml": "<w:document " + docxNS + "><w:p>"})
		if _, err := Extract(t.Context(), data); !errors.Is(err, ErrUnreadable) {
			t.Errorf("Extract = %v, want ErrUnreadable", err)
		}
	})
}
