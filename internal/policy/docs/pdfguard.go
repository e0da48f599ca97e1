package docs

import (
	"bytes"
	"fmt"
	"strconv"
)

// The PDF library sizes tables and loops by numbers read from the file
// (the cross-reference table's object numbers, an xref stream's /Size,
// /Index and /W, a predictor's /Columns, the entry count of a CMap's
// bfchar and bfrange blocks) without a bound: a crafted number makes it
// allocate gigabytes, which kills the process (out of memory is not a
// recoverable panic). pdfGuard refuses such numbers before the library
// reads the file, in the file's text and in every inflated stream.

// maxCMapEntries bounds a CMap block's entry count (the PDF specification
// allows 100).
const maxCMapEntries = 10_000

// maxColumns bounds a PNG predictor's /Columns.
const maxColumns = 1 << 20

// maxXrefWidth bounds each field width of an xref stream's /W.
const maxXrefWidth = 16

// pdfGuard checks the numbers of b; maxObj bounds object numbers.
// xrefTables is whether b is the file itself (cross-reference tables
// are never inside streams).
func pdfGuard(b []byte, maxObj int64, xrefTables bool) error {
	bad := func(what string, n int64) error {
		return extractErr(FormatPDF, ErrUnreadable, fmt.Sprintf("%s %d is out of range", what, n), nil)
	}
	// Numbers that precede a keyword.
	for _, kw := range []string{"beginbfchar", "beginbfrange", "begincidchar", "begincidrange", "beginnotdefchar", "beginnotdefrange", "begincodespacerange"} {
		for rest := b; ; {
			i := bytes.Index(rest, []byte(kw))
			if i < 0 {
				break
			}
			if n, ok := intBefore(rest[:i]); !ok || n > maxCMapEntries {
				return bad(kw+" count", n)
			}
			rest = rest[i+len(kw):]
		}
	}
	// Numbers that follow a key.
	for _, key := range []struct {
		name  string
		max   int64
		array bool
	}{{"/Size", maxObj, false}, {"/Columns", maxColumns, false}, {"/Index", maxObj, true}, {"/W", maxXrefWidth, true}} {
		for rest := b; ; {
			i := bytes.Index(rest, []byte(key.name))
			if i < 0 {
				break
			}
			rest = rest[i+len(key.name):]
			if len(rest) > 0 && !isPDFDelim(rest[0]) {
				continue // /Sizes, /Width
			}
			toks := pdfTokens(rest, 3)
			if key.array {
				if len(toks) == 0 || string(toks[0]) != "[" {
					continue
				}
				toks = pdfTokens(rest, 130)[1:]
			}
			for _, tok := range toks {
				if string(tok) == "]" || !key.array && !isPDFInt(tok) {
					break
				}
				if !isPDFInt(tok) {
					continue
				}
				if n, err := strconv.ParseInt(string(tok), 10, 64); err != nil || n > key.max || n < -key.max {
					return bad(key.name, n)
				}
				if !key.array {
					break
				}
			}
		}
	}
	if !xrefTables {
		return nil
	}
	// Cross-reference tables: "xref" then subsections "start count"
	// followed by count entries of three tokens.
	for rest := b; ; {
		i := bytes.Index(rest, []byte("xref"))
		if i < 0 {
			return nil
		}
		isStart := i >= 5 && string(rest[i-5:i]) == "start"
		rest = rest[i+len("xref"):]
		if isStart {
			continue
		}
		end := bytes.Index(rest, []byte("trailer"))
		if end < 0 {
			end = len(rest)
		}
		toks := bytes.Fields(rest[:end])
		for j := 0; j+1 < len(toks); {
			start, err1 := strconv.ParseInt(string(toks[j]), 10, 64)
			count, err2 := strconv.ParseInt(string(toks[j+1]), 10, 64)
			if err1 != nil || err2 != nil {
				break // not a table; the library will say so
			}
			if start > maxObj || start < 0 {
				return bad("xref object number", start)
			}
			if count < 0 || count > int64(len(toks)) {
				break
			}
			j += 2 + 3*int(count)
		}
	}
}

func isPDFDelim(c byte) bool {
	return bytes.IndexByte([]byte(" \t\r\n\f\x00[]<>()/%"), c) >= 0
}

func isPDFInt(tok []byte) bool {
	if len(tok) > 0 && (tok[0] == '+' || tok[0] == '-') {
		tok = tok[1:]
	}
	if len(tok) == 0 {
		return false
	}
	for _, c := range tok {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// pdfTokens splits the start of b into at most n tokens: "[" and "]"
// alone, other runs of non-delimiters.
func pdfTokens(b []byte, n int) [][]byte {
	var out [][]byte
	for i := 0; i < len(b) && len(out) < n; {
		c := b[i]
		switch {
		case c == '[' || c == ']':
			out = append(out, b[i:i+1])
			i++
		case isPDFDelim(c):
			i++
		default:
			j := i
			for j < len(b) && !isPDFDelim(b[j]) {
				j++
			}
			out = append(out, b[i:j])
			i = j
		}
	}
	return out
}

// intBefore is the integer token that ends b (after trailing white
// space); ok is false when it is not an int64 (a huge number).
func intBefore(b []byte) (int64, bool) {
	b = bytes.TrimRight(b, " \t\r\n\f\x00")
	j := len(b)
	for j > 0 && b[j-1] >= '0' && b[j-1] <= '9' {
		j--
	}
	if j > 0 && (b[j-1] == '-' || b[j-1] == '+') {
		j--
	}
	if j == len(b) {
		return 0, true // no count: the library pops nothing
	}
	n, err := strconv.ParseInt(string(b[j:]), 10, 64)
	return n, err == nil
}
