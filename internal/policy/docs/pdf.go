package docs

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ledongthuc/pdf"
)

// maxPageTreeDepth bounds the depth of the page tree walk.
const maxPageTreeDepth = 64

// maxPageTreeNodes bounds the page tree walk (a crafted tree may be cyclic).
const maxPageTreeNodes = 100_000

// extractPDF reads the text of every page with github.com/ledongthuc/pdf,
// after checking that its streams do not inflate past the limits (the
// library bounds object nesting itself). The library reports damage by
// panicking; those panics are recovered as ErrUnreadable.
func extractPDF(ctx context.Context, data []byte, b *builder) (err error) {
	if err := precheckPDF(data, b.lim); err != nil {
		return err
	}
	defer func() {
		if x := recover(); x != nil {
			err = extractErr(FormatPDF, ErrUnreadable, "malformed PDF", fmt.Errorf("%v", x))
		}
	}()
	r, err := pdf.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		encrypted := bytes.Contains(data, []byte("/Encrypt"))
		switch {
		case errors.Is(err, pdf.ErrInvalidPassword):
			return extractErr(FormatPDF, ErrEncrypted, "the PDF is password-protected", nil)
		case encrypted:
			return extractErr(FormatPDF, ErrEncrypted, "the PDF is encrypted with a scheme that cannot be read", err)
		}
		return extractErr(FormatPDF, ErrUnreadable, "not a readable PDF", err)
	}
	pages, err := pdfPages(r.Trailer().Key("Root").Key("Pages"), b.lim.MaxPages)
	if err != nil {
		return err
	}
	fonts := map[string]*pdf.Font{}
	for _, pg := range pages {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, name := range pg.Fonts() {
			if _, ok := fonts[name]; !ok {
				f := pg.Font(name)
				fonts[name] = &f
			}
		}
		text, err := pg.GetPlainText(fonts)
		if err != nil {
			return extractErr(FormatPDF, ErrUnreadable, "a page cannot be read", err)
		}
		b.text(text)
		if b.err != nil {
			return b.err
		}
	}
	return nil
}

// pdfPages walks the page tree depth first, bounded in depth and nodes.
func pdfPages(root pdf.Value, maxPages int) ([]pdf.Page, error) {
	var pages []pdf.Page
	nodes := 0
	var walk func(v pdf.Value, depth int) error
	walk = func(v pdf.Value, depth int) error {
		nodes++
		if depth > maxPageTreeDepth || nodes > maxPageTreeNodes {
			return extractErr(FormatPDF, ErrUnreadable, "the page tree is too deep or cyclic", nil)
		}
		switch v.Key("Type").Name() {
		case "Page":
			if len(pages) >= maxPages {
				return extractErr(FormatPDF, ErrTooLarge, fmt.Sprintf("more than %d pages", maxPages), nil)
			}
			pages = append(pages, pdf.Page{V: v})
		case "Pages":
			kids := v.Key("Kids")
			for i := 0; i < kids.Len(); i++ {
				if err := walk(kids.Index(i), depth+1); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := walk(root, 0)
	return pages, err
}

// precheckPDF refuses a PDF whose Flate streams inflate to more than
// lim.MaxDecompressed in all (a compression bomb): the library inflates
// what it reads without a bound; and one with numbers pdfGuard refuses,
// in the file or in an inflated stream. Streams are found by their keyword; one
// that does not start as zlib data (another filter, or encrypted) is left
// to the library.
func precheckPDF(data []byte, lim Limits) error {
	maxObj := min(int64(len(data))/4+1024, 4<<20)
	if err := pdfGuard(data, maxObj, true); err != nil {
		return err
	}
	var total int64
	rest := data
	var buf bytes.Buffer
	for {
		i := bytes.Index(rest, []byte("stream"))
		if i < 0 {
			return nil
		}
		isEnd := i >= 3 && string(rest[i-3:i]) == "end"
		rest = rest[i+len("stream"):]
		if isEnd {
			continue
		}
		switch {
		case bytes.HasPrefix(rest, []byte("\r\n")):
			rest = rest[2:]
		case bytes.HasPrefix(rest, []byte("\n")), bytes.HasPrefix(rest, []byte("\r")):
			rest = rest[1:]
		default:
			continue
		}
		zr, err := zlib.NewReader(bytes.NewReader(rest))
		if err != nil {
			continue
		}
		// A damaged stream (err) is the library's to report.
		buf.Reset()
		n, _ := io.Copy(&buf, io.LimitReader(zr, lim.MaxDecompressed-total+1))
		total += n
		if total > lim.MaxDecompressed {
			return extractErr(FormatPDF, ErrTooLarge, fmt.Sprintf("its streams inflate to more than %d MiB (a compression bomb?)", lim.MaxDecompressed>>20), nil)
		}
		if err := pdfGuard(buf.Bytes(), maxObj, false); err != nil {
			return err
		}
	}
}
