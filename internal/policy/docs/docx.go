package docs

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strconv"
	"strings"
)

// WordprocessingML's main namespace.
const wNS = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"

// isDOCX reports whether data is a zip archive holding word/document.xml.
func isDOCX(data []byte) bool {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return false
	}
	for _, f := range zr.File {
		if f.Name == "word/document.xml" {
			return true
		}
	}
	return false
}

// inflateBudget counts the bytes inflated from an archive against the
// total and per-part limits.
type inflateBudget struct {
	f         Format
	total     int64
	max, part int64
}

// limitedReader fails with ErrTooLarge once more than its part's or the
// archive's budget was read.
type limitedReader struct {
	r    io.Reader
	n    int64 // read from this part
	b    *inflateBudget
	name string
}

// Read reads from the part, counting against the budget.
func (l *limitedReader) Read(p []byte) (int, error) {
	n, err := l.r.Read(p)
	l.n += int64(n)
	l.b.total += int64(n)
	if l.n > l.b.part {
		return n, extractErr(l.b.f, ErrTooLarge, fmt.Sprintf("%s inflates to more than %d MiB (a zip bomb?)", l.name, l.b.part>>20), nil)
	}
	if l.b.total > l.b.max {
		return n, extractErr(l.b.f, ErrTooLarge, fmt.Sprintf("the archive inflates to more than %d MiB (a zip bomb?)", l.b.max>>20), nil)
	}
	return n, err
}

// extractDOCX reads a Word document: the headers, the body (paragraphs,
// headings by style, tables row by row), then the footers.
func extractDOCX(ctx context.Context, data []byte, b *builder) error {
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return extractErr(FormatDOCX, ErrUnreadable, "not a valid zip archive", err)
	}
	if len(zr.File) > b.lim.MaxZipFiles {
		return extractErr(FormatDOCX, ErrTooLarge, fmt.Sprintf("the archive holds more than %d files", b.lim.MaxZipFiles), nil)
	}
	wp := findWordParts(zr.File)
	if wp.doc == nil {
		return extractErr(FormatDOCX, ErrUnsupportedType, "no word/document.xml", nil)
	}
	budget := &inflateBudget{f: FormatDOCX, max: b.lim.MaxDecompressed, part: b.lim.MaxPartDecompressed}
	headingStyles := map[string]bool{}
	if wp.styles != nil {
		if err := readStyles(wp.styles, budget, headingStyles); err != nil {
			return err
		}
	}
	p := &wordParser{b: b, headings: headingStyles, seen: map[string]bool{}}
	parts := []struct {
		files   []*zip.File
		section string
	}{{wp.headers, "Header"}, {[]*zip.File{wp.doc}, ""}, {wp.footers, "Footer"}}
	for _, part := range parts {
		for _, f := range part.files {
			if err := ctx.Err(); err != nil {
				return err
			}
			// Headers and footers repeat on every page: each text once,
			// under its section's heading.
			p.dedupe, p.pendingHeading = part.section != "", part.section
			if err := p.parse(f, budget); err != nil {
				return err
			}
		}
	}
	return nil
}

// wordParts are the parts of a Word archive extractDOCX reads.
type wordParts struct {
	doc, styles      *zip.File
	headers, footers []*zip.File // in number order: header1.xml, header2.xml, …
}

// findWordParts picks the document, styles, header and footer parts out
// of the archive's files.
func findWordParts(files []*zip.File) wordParts {
	var wp wordParts
	for _, f := range files {
		dir, name := path.Split(f.Name)
		if dir != "word/" {
			continue
		}
		switch {
		case name == "document.xml":
			wp.doc = f
		case name == "styles.xml":
			wp.styles = f
		case strings.HasPrefix(name, "header") && strings.HasSuffix(name, ".xml"):
			wp.headers = append(wp.headers, f)
		case strings.HasPrefix(name, "footer") && strings.HasSuffix(name, ".xml"):
			wp.footers = append(wp.footers, f)
		}
	}
	byNumber := func(fs []*zip.File) {
		sort.SliceStable(fs, func(i, j int) bool { return partNumber(fs[i].Name) < partNumber(fs[j].Name) })
	}
	byNumber(wp.headers)
	byNumber(wp.footers)
	return wp
}

// partNumber is the number in "word/header2.xml" (0 if none).
func partNumber(name string) int {
	base := strings.TrimSuffix(path.Base(name), ".xml")
	base = strings.TrimLeft(base, "abcdefghijklmnopqrstuvwxyz")
	n, _ := strconv.Atoi(base)
	return n
}

func openPart(f *zip.File, budget *inflateBudget) (io.ReadCloser, *limitedReader, error) {
	if int64(f.UncompressedSize64) > budget.part || f.UncompressedSize64 > 1<<62 {
		return nil, nil, extractErr(FormatDOCX, ErrTooLarge, fmt.Sprintf("%s declares more than %d MiB", f.Name, budget.part>>20), nil)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, nil, extractErr(FormatDOCX, ErrUnreadable, "cannot open "+f.Name, err)
	}
	return rc, &limitedReader{r: rc, b: budget, name: f.Name}, nil
}

// decodeErr turns an error of the XML decoder into an *ExtractError (a
// limit's own error passes through).
func decodeErr(name string, err error) error {
	var ee *ExtractError
	if errors.As(err, &ee) {
		return ee
	}
	return extractErr(FormatDOCX, ErrUnreadable, "malformed "+name, err)
}

// readStyles collects the ids of paragraph styles named "heading N" or
// "Title" (ids are localised: "Heading1", "berschrift1", …).
func readStyles(f *zip.File, budget *inflateBudget, out map[string]bool) error {
	rc, lr, err := openPart(f, budget)
	if err != nil {
		return err
	}
	defer rc.Close()
	dec := xml.NewDecoder(lr)
	var id string
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return decodeErr(f.Name, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Space != wNS {
			continue
		}
		switch se.Name.Local {
		case "style":
			id = attr(se, "styleId")
		case "name":
			v := strings.ToLower(attr(se, "val"))
			if id != "" && (v == "title" || strings.HasPrefix(v, "heading ")) {
				out[id] = true
			}
		case "outlineLvl":
			if id != "" {
				if n, err := strconv.Atoi(attr(se, "val")); err == nil && n < 9 {
					out[id] = true
				}
			}
		}
	}
}

func attr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// wordParser walks one WordprocessingML part as tokens (bounded memory:
// the text of one paragraph or table row at a time).
type wordParser struct {
	b        *builder
	headings map[string]bool // heading style ids
	// dedupe drops paragraphs seen before (headers repeat per section).
	dedupe         bool
	seen           map[string]bool
	pendingHeading string
}

// tableLevel is one open w:tbl: the cells of its current row.
type tableLevel struct {
	cells []string
	cell  strings.Builder
}

// partState is the walk of one part: its open tables, innermost last,
// and the paragraph being read.
type partState struct {
	tables    []*tableLevel
	para      strings.Builder
	inPara    bool // inside a w:p
	inText    bool // inside a w:t, whose character data is text
	isHeading bool // the paragraph has a heading style or an outline level
}

// parse walks part f token by token, emitting its paragraphs and table
// rows to the builder. The part's inflated bytes count against budget;
// the walk stops at the first limit passed, the first malformed token or
// the builder's first error.
func (p *wordParser) parse(f *zip.File, budget *inflateBudget) error {
	rc, lr, err := openPart(f, budget)
	if err != nil {
		return err
	}
	defer rc.Close()
	dec := xml.NewDecoder(lr)
	var s partState
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return decodeErr(f.Name, err)
		}
		if p.b.err != nil {
			return p.b.err
		}
		if err := p.token(&s, tok); err != nil {
			return err
		}
	}
}

// token handles one token of the part: the start or end of a w: element,
// or character data (elements of other namespaces are skipped).
func (p *wordParser) token(s *partState, tok xml.Token) error {
	switch t := tok.(type) {
	case xml.StartElement:
		if t.Name.Space == wNS {
			p.startElement(s, t)
		}
	case xml.CharData:
		return p.charData(s, t)
	case xml.EndElement:
		if t.Name.Space == wNS {
			return p.endElement(s, t.Name.Local)
		}
	}
	return nil
}

// startElement opens a paragraph, marks it a heading (by style or outline
// level), enters a w:t, writes a tab or break as a space, or opens a
// table, a row or a cell.
func (p *wordParser) startElement(s *partState, t xml.StartElement) {
	switch t.Name.Local {
	case "p":
		s.inPara, s.isHeading = true, false
		s.para.Reset()
	case "pStyle":
		s.isHeading = s.isHeading || p.headings[attr(t, "val")] || strings.HasPrefix(strings.ToLower(attr(t, "val")), "heading")
	case "outlineLvl":
		s.isHeading = true
	case "t":
		s.inText = true
	case "tab", "br", "cr":
		s.para.WriteByte(' ')
	case "tbl":
		s.tables = append(s.tables, &tableLevel{})
	case "tr":
		if n := len(s.tables); n > 0 {
			s.tables[n-1].cells = s.tables[n-1].cells[:0]
		}
	case "tc":
		if n := len(s.tables); n > 0 {
			s.tables[n-1].cell.Reset()
		}
	}
}

// charData adds the text of a w:t inside a paragraph to the paragraph,
// failing with ErrTooLarge if it would pass the text limit.
func (p *wordParser) charData(s *partState, t xml.CharData) error {
	if s.inText && s.inPara {
		if s.para.Len()+len(t) > p.b.lim.MaxText {
			return extractErr(FormatDOCX, ErrTooLarge, "a paragraph longer than the text limit", nil)
		}
		s.para.Write(t)
	}
	return nil
}

// endElement closes a w:t, a paragraph, a cell (failing with ErrTooLarge
// once its row holds more cells than the paragraph limit), a row or a
// table.
func (p *wordParser) endElement(s *partState, local string) error {
	switch local {
	case "t":
		s.inText = false
	case "p":
		return p.endParagraph(s)
	case "tc":
		if n := len(s.tables); n > 0 {
			tl := s.tables[n-1]
			tl.cells = append(tl.cells, cleanSpace(tl.cell.String()))
			if len(tl.cells) > p.b.lim.MaxParagraphs {
				return extractErr(FormatDOCX, ErrTooLarge, "a table row with too many cells", nil)
			}
		}
	case "tr":
		return p.endRow(s)
	case "tbl":
		if n := len(s.tables); n > 0 {
			s.tables = s.tables[:n-1]
		}
	}
	return nil
}

// endParagraph ends the paragraph: in a table its text joins the
// innermost cell's (failing with ErrTooLarge once the cell passes the
// text limit); outside, it is emitted, as a heading if styled as one.
func (p *wordParser) endParagraph(s *partState) error {
	s.inPara = false
	text := cleanSpace(s.para.String())
	if n := len(s.tables); n > 0 {
		return p.addToCell(&s.tables[n-1].cell, text)
	}
	p.emit(text, s.isHeading)
	return nil
}

// endRow ends a table row: its non-empty cells joined are one paragraph
// of an outermost table, or text of the enclosing cell in a nested one
// (failing with ErrTooLarge once that cell passes the text limit, as a
// paragraph's end does).
func (p *wordParser) endRow(s *partState) error {
	n := len(s.tables)
	if n == 0 {
		return nil
	}
	row := joinCells(s.tables[n-1].cells)
	if n == 1 {
		p.emit(row, false)
		return nil
	}
	// A nested table's row is text of the enclosing cell.
	return p.addToCell(&s.tables[n-2].cell, row)
}

// addToCell adds text to a cell's, a space between them, failing with
// ErrTooLarge once the cell passes the text limit.
func (p *wordParser) addToCell(c *strings.Builder, text string) error {
	if c.Len() > 0 && text != "" {
		c.WriteByte(' ')
	}
	c.WriteString(text)
	if c.Len() > p.b.lim.MaxText {
		return extractErr(FormatDOCX, ErrTooLarge, "a table cell longer than the text limit", nil)
	}
	return nil
}

// joinCells is a table row as one paragraph: its non-empty cells joined
// by " | ".
func joinCells(cells []string) string {
	var parts []string
	for _, c := range cells {
		if c != "" {
			parts = append(parts, c)
		}
	}
	return strings.Join(parts, " | ")
}

func (p *wordParser) emit(text string, heading bool) {
	if text == "" {
		return
	}
	if p.dedupe {
		if p.seen[text] {
			return
		}
		p.seen[text] = true
	}
	if p.pendingHeading != "" {
		p.b.heading(p.pendingHeading)
		p.pendingHeading = ""
	}
	if heading {
		p.b.heading(text)
		return
	}
	p.b.para(text)
}
