package docs

import (
	"archive/zip"
	"bytes"
	"compress/zlib"
	"fmt"
	"strings"
	"testing"
)

// pdfOpts shape a PDF written by makePDF.
type pdfOpts struct {
	flate     bool // compress the content streams
	encrypted bool // an /Encrypt dictionary whose empty user password fails
	image     bool // pages draw an image instead of text (a scanned page)
	// cmap, when not "", is the entry count written before beginbfchar
	// in the font's ToUnicode CMap (which maps one code, "A").
	cmap string
}

// pdfEscape escapes a literal string of a content stream.
func pdfEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`)
	return r.Replace(s)
}

// makePDF writes a valid PDF 1.4 by hand: one page per entry of pages,
// each line shown with Tj in Helvetica, and a correct xref table.
func makePDF(t testing.TB, pages [][]string, o pdfOpts) []byte {
	t.Helper()
	var objs []string // objs[i] is object i+1
	add := func(s string) int { objs = append(objs, s); return len(objs) }
	stream := func(dict string, data []byte) string {
		if o.flate {
			var b bytes.Buffer
			zw := zlib.NewWriter(&b)
			zw.Write(data)
			zw.Close()
			data = b.Bytes()
			dict += " /Filter /FlateDecode"
		}
		return fmt.Sprintf("<< %s /Length %d >>\nstream\n%s\nendstream", dict, len(data), data)
	}
	catalog := add("") // filled below
	pagesObj := add("")
	fontDict := "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
	if o.cmap != "" {
		cm := add(stream("", []byte("/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"+
			"1 begincodespacerange <00> <FF> endcodespacerange\n"+
			o.cmap+" beginbfchar <41> <0041> endbfchar\nendcmap CMapName currentdict /CMap defineresource pop end end")))
		fontDict = fmt.Sprintf("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode %d 0 R >>", cm)
	}
	font := add(fontDict)
	image := add(stream("/Type /XObject /Subtype /Image /Width 2 /Height 2 /ColorSpace /DeviceGray /BitsPerComponent 8",
		[]byte{0x00, 0xff, 0x5b, 0x28}))
	var kids []string
	for _, lines := range pages {
		var c strings.Builder
		if o.image {
			c.WriteString("q 612 0 0 792 0 0 cm /Im1 Do Q\n")
		} else {
			c.WriteString("BT /F1 12 Tf 72 720 Td 14 TL\n")
			for _, l := range lines {
				fmt.Fprintf(&c, "(%s) Tj T*\n", pdfEscape(l))
			}
			c.WriteString("ET\n")
		}
		content := add(stream("", []byte(c.String())))
		page := add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Contents %d 0 R "+
			"/Resources << /Font << /F1 %d 0 R >> /XObject << /Im1 %d 0 R >> >> >>", pagesObj, content, font, image))
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
	}
	objs[catalog-1] = fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesObj)
	objs[pagesObj-1] = fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(kids))
	encrypt := 0
	if o.encrypted {
		h := strings.Repeat("ab", 32)
		encrypt = add(fmt.Sprintf("<< /Filter /Standard /V 2 /R 3 /Length 128 /P -3904 /O <%s> /U <%s> >>", h, h))
	}

	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, s := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, s)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	trailer := fmt.Sprintf("/Size %d /Root %d 0 R", len(objs)+1, catalog)
	if encrypt != 0 {
		trailer += fmt.Sprintf(" /Encrypt %d 0 R /ID [<0123456789abcdef0123456789abcdef> <0123456789abcdef0123456789abcdef>]", encrypt)
	}
	fmt.Fprintf(&b, "trailer\n<< %s >>\nstartxref\n%d\n%%%%EOF\n", trailer, xref)
	return b.Bytes()
}

// docxPara is a paragraph of makeDOCX: text with an optional style id.
type docxPara struct {
	style string
	text  string
	table [][]string // a table instead of a paragraph
}

const docxNS = `xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"`

func docxXMLEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func docxP(style, text string) string {
	var b strings.Builder
	b.WriteString("<w:p>")
	if style != "" {
		fmt.Fprintf(&b, `<w:pPr><w:pStyle w:val="%s"/></w:pPr>`, style)
	}
	// Split the text over two runs, as Word does.
	half := len(text) / 2
	for half > 0 && half < len(text) && text[half] != ' ' {
		half++
	}
	for _, run := range []string{text[:half], text[half:]} {
		if run != "" {
			fmt.Fprintf(&b, `<w:r><w:t xml:space="preserve">%s</w:t></w:r>`, docxXMLEscape(run))
		}
	}
	b.WriteString("</w:p>")
	return b.String()
}

func docxBody(paras []docxPara) string {
	var b strings.Builder
	for _, p := range paras {
		if p.table != nil {
			b.WriteString("<w:tbl><w:tblPr/>")
			for _, row := range p.table {
				b.WriteString("<w:tr>")
				for _, cell := range row {
					b.WriteString("<w:tc><w:tcPr/>" + docxP("", cell) + "</w:tc>")
				}
				b.WriteString("</w:tr>")
			}
			b.WriteString("</w:tbl>")
			continue
		}
		b.WriteString(docxP(p.style, p.text))
	}
	return b.String()
}

// makeDOCX writes a Word document with archive/zip: the body, a styles
// part (style "Kop1" is a localised heading 1), a header and a footer.
func makeDOCX(t testing.TB, body []docxPara, header, footer string) []byte {
	t.Helper()
	files := []struct{ name, data string }{
		{"[Content_Types].xml", `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>`},
		{"word/styles.xml", `<?xml version="1.0"?><w:styles ` + docxNS + `>` +
			`<w:style w:type="paragraph" w:styleId="Normal"><w:name w:val="Normal"/></w:style>` +
			`<w:style w:type="paragraph" w:styleId="Kop1"><w:name w:val="heading 1"/></w:style></w:styles>`},
		{"word/document.xml", `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document ` + docxNS +
			`><w:body>` + docxBody(body) + `<w:sectPr/></w:body></w:document>`},
	}
	if header != "" {
		files = append(files, struct{ name, data string }{"word/header1.xml",
			`<?xml version="1.0"?><w:hdr ` + docxNS + `>` + docxP("", header) + `</w:hdr>`})
	}
	if footer != "" {
		files = append(files, struct{ name, data string }{"word/footer1.xml",
			`<?xml version="1.0"?><w:ftr ` + docxNS + `>` + docxP("", footer) + `</w:ftr>`})
	}
	var b bytes.Buffer
	zw := zip.NewWriter(&b)
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(f.data)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// policyText is the data-handling policy the tests draft from.
const policyText = `# Acme Data Handling Policy

1. SCOPE
This policy applies to all employees who use AI assistants. It supports our GDPR obligations.

2. Customer Data
Employees must not enter social security numbers or credit card numbers into AI tools. Customer e-mail addresses must be masked before they are shared with an external model.

3. Credentials
Passwords, API keys and other credentials shall never be pasted into prompts.

4. Incidents
Staff should report any output that contains personal data to the security team.

5. Good Practice
Teams should consider reviewing prompts where possible.
`
