package docs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Format is a document's type, read from its content (never its name).
type Format string

// Formats Extract reads.
const (
	FormatPDF  Format = "pdf"
	FormatDOCX Format = "docx"
	FormatTXT  Format = "txt"
)

// Document is the text of a document, in sections.
type Document struct {
	Type     Format    `json:"type"`
	Sections []Section `json:"sections"`
}

// Section is a run of paragraphs under one heading ("" before the first
// heading).
type Section struct {
	Heading    string   `json:"heading"`
	Paragraphs []string `json:"paragraphs"`
}

// Empty reports whether d holds no text at all (a scanned PDF).
func (d Document) Empty() bool {
	for _, s := range d.Sections {
		if len(s.Paragraphs) > 0 {
			return false
		}
	}
	return true
}

// Sentinel errors of extraction; an *ExtractError wraps one of them.
var (
	// ErrUnsupportedType: the content is not a PDF, a DOCX or UTF-8 text
	// (the API answers 415).
	ErrUnsupportedType = errors.New("docs: unsupported document type")
	// ErrEncrypted: a password-protected PDF.
	ErrEncrypted = errors.New("docs: encrypted document")
	// ErrUnreadable: a damaged or malformed file of a known type.
	ErrUnreadable = errors.New("docs: unreadable document")
	// ErrTooLarge: a limit of Limits was passed (a zip bomb, too many
	// paragraphs).
	ErrTooLarge = errors.New("docs: document too large")
)

// ExtractError is why a document could not be read. Reason is safe to
// show the uploader (it is the job's reason).
type ExtractError struct {
	Format Format
	Kind   error // ErrUnsupportedType, ErrEncrypted, ErrUnreadable or ErrTooLarge
	Reason string
	Err    error // the cause, if any
}

// Error is the format, the reason and the cause.
func (e *ExtractError) Error() string {
	s := "docs: " + string(e.Format) + ": " + e.Reason
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the kind and the cause, for errors.Is.
func (e *ExtractError) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

func extractErr(f Format, kind error, reason string, err error) *ExtractError {
	return &ExtractError{Format: f, Kind: kind, Reason: reason, Err: err}
}

// Limits bound what extraction decompresses and keeps.
type Limits struct {
	// MaxDecompressed is the total bytes inflated from a DOCX's parts or a
	// PDF's streams.
	MaxDecompressed int64
	// MaxPartDecompressed is the bytes inflated from one DOCX part.
	MaxPartDecompressed int64
	// MaxZipFiles is the number of entries a DOCX may hold.
	MaxZipFiles int
	// MaxParagraphs is the number of paragraphs kept.
	MaxParagraphs int
	// MaxText is the bytes of text kept.
	MaxText int
	// MaxPages is the number of PDF pages read.
	MaxPages int
}

// DefaultLimits are the limits Extract applies.
var DefaultLimits = Limits{
	MaxDecompressed:     100 << 20,
	MaxPartDecompressed: 64 << 20,
	MaxZipFiles:         2000,
	MaxParagraphs:       100_000,
	MaxText:             64 << 20,
	MaxPages:            5000,
}

// Extract reads the text of data, a PDF, DOCX or UTF-8 text document
// (the type from its content), with DefaultLimits. Errors are
// *ExtractError. A PDF without text (scanned pages) is an empty Document,
// not an error.
func Extract(ctx context.Context, data []byte) (Document, error) {
	return ExtractLimits(ctx, data, DefaultLimits)
}

// ExtractLimits is Extract with limits of the caller's.
func ExtractLimits(ctx context.Context, data []byte, lim Limits) (Document, error) {
	f, err := DetectFormat(data)
	if err != nil {
		return Document{}, err
	}
	if err := ctx.Err(); err != nil {
		return Document{}, err
	}
	b := newBuilder(f, lim)
	switch f {
	case FormatPDF:
		err = extractPDF(ctx, data, b)
	case FormatDOCX:
		err = extractDOCX(ctx, data, b)
	default:
		b.text(string(data))
	}
	if err == nil {
		err = b.err
	}
	if err != nil {
		return Document{}, err
	}
	return b.doc(), nil
}

// DetectFormat tells the type of data from its content: "%PDF-" is a PDF,
// a zip holding word/document.xml a DOCX, valid UTF-8 without NUL or other
// binary control bytes text; anything else is ErrUnsupportedType.
func DetectFormat(data []byte) (Format, error) {
	switch {
	case bytes.HasPrefix(data, []byte("%PDF-")):
		return FormatPDF, nil
	case bytes.HasPrefix(data, []byte("PK\x03\x04")):
		if isDOCX(data) {
			return FormatDOCX, nil
		}
		return "", extractErr("zip", ErrUnsupportedType, "a zip archive that is not a Word document", nil)
	}
	if !utf8.Valid(data) {
		return "", extractErr("", ErrUnsupportedType, "neither PDF, DOCX nor UTF-8 text", nil)
	}
	for _, c := range data {
		if c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' {
			return "", extractErr("", ErrUnsupportedType, "binary content: neither PDF, DOCX nor text", nil)
		}
	}
	return FormatTXT, nil
}

// builder collects paragraphs into sections, enforcing the limits.
type builder struct {
	f        Format
	lim      Limits
	sections []Section
	paras    int
	size     int
	err      error
}

func newBuilder(f Format, lim Limits) *builder { return &builder{f: f, lim: lim} }

func (b *builder) cur() *Section {
	if len(b.sections) == 0 {
		b.sections = append(b.sections, Section{})
	}
	return &b.sections[len(b.sections)-1]
}

// heading starts a section.
func (b *builder) heading(h string) {
	h = cleanSpace(h)
	if h == "" || b.err != nil {
		return
	}
	b.size += len(h)
	if b.size > b.lim.MaxText {
		b.err = extractErr(b.f, ErrTooLarge, fmt.Sprintf("more than %d MiB of text", b.lim.MaxText>>20), nil)
		return
	}
	b.sections = append(b.sections, Section{Heading: h})
}

// para adds a paragraph to the current section.
func (b *builder) para(p string) {
	p = cleanSpace(p)
	if p == "" || b.err != nil {
		return
	}
	b.paras++
	b.size += len(p)
	switch {
	case b.paras > b.lim.MaxParagraphs:
		b.err = extractErr(b.f, ErrTooLarge, fmt.Sprintf("more than %d paragraphs", b.lim.MaxParagraphs), nil)
		return
	case b.size > b.lim.MaxText:
		b.err = extractErr(b.f, ErrTooLarge, fmt.Sprintf("more than %d MiB of text", b.lim.MaxText>>20), nil)
		return
	}
	s := b.cur()
	s.Paragraphs = append(s.Paragraphs, p)
}

// text splits plain text into headings and paragraphs: paragraphs are
// blocks of lines between blank lines; a line that reads as a heading
// (markdown "#", a numbered "1.2 Title", ALL CAPS) starts a section.
func (b *builder) text(s string) {
	var para []string
	flush := func() {
		if len(para) > 0 {
			b.para(strings.Join(para, " "))
			para = para[:0]
		}
	}
	for line := range strings.Lines(s) {
		if b.err != nil {
			return
		}
		line = strings.TrimSpace(line)
		if line == "" {
			flush()
			continue
		}
		if h, ok := headingLine(line); ok {
			flush()
			b.heading(h)
			continue
		}
		para = append(para, line)
	}
	flush()
}

func (b *builder) doc() Document {
	d := Document{Type: b.f, Sections: []Section{}}
	for _, s := range b.sections {
		if s.Paragraphs == nil {
			s.Paragraphs = []string{}
		}
		d.Sections = append(d.Sections, s)
	}
	return d
}

// headingLine reports whether a line of plain text is a heading and
// returns it without its markdown marks.
func headingLine(line string) (string, bool) {
	if len(line) > 120 {
		return "", false
	}
	if strings.HasPrefix(line, "#") {
		h := strings.TrimLeft(line, "#")
		if len(line)-len(h) <= 6 && (h == "" || h[0] == ' ' || h[0] == '\t') {
			h = strings.TrimSpace(h)
			return h, h != ""
		}
		return "", false
	}
	if strings.ContainsAny(line[len(line)-1:], ".:;,") {
		return "", false
	}
	words := strings.Fields(line)
	if numbered(words[0]) {
		if len(words) < 2 || len(words) > 12 || obligationRe.MatchString(line) {
			return "", false
		}
		r, _ := utf8.DecodeRuneInString(words[1])
		return line, unicode.IsUpper(r)
	}
	letters, upper := 0, 0
	for _, r := range line {
		if unicode.IsLetter(r) {
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		}
	}
	return line, letters >= 3 && upper == letters && len(words) <= 12
}

// numbered reports whether w is a section number: "1", "1.", "1.2",
// "1.2.3.", "A.", "IV.".
func numbered(w string) bool {
	w = strings.TrimSuffix(w, ".")
	if w == "" {
		return false
	}
	if len(w) == 1 && w[0] >= 'A' && w[0] <= 'Z' {
		return true
	}
	if strings.Trim(w, "IVX") == "" && len(w) <= 5 {
		return true
	}
	for _, part := range strings.Split(w, ".") {
		if part == "" || len(part) > 3 || strings.Trim(part, "0123456789") != "" {
			return false
		}
	}
	return true
}

// cleanSpace collapses runs of white space (and drops control bytes).
func cleanSpace(s string) string {
	var sb strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError {
			space = sb.Len() > 0
			continue
		}
		if space {
			sb.WriteByte(' ')
			space = false
		}
		sb.WriteRune(r)
	}
	return sb.String()
}
