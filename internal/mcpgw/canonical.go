package mcpgw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/svc-gateway/svc/internal/llm"
)

// Limits on a call's arguments.
const (
	MaxArgumentsBytes = 4 << 20
	MaxArgumentsDepth = 64
)

// ErrArguments is wrapped by Canonical's errors: the arguments are not a
// JSON object svc accepts (the caller's mistake).
var ErrArguments = errors.New("mcpgw: invalid tool arguments")

// Arguments are a call's arguments decoded once, in the forms the gateway
// needs: the canonical JSON (the cache key, the audit hash, what goes
// upstream), the top-level parameters (for allowed_params) and the texts
// the compliance scan reads.
type Arguments struct {
	// Canonical is the arguments' canonical JSON (see Canonical).
	Canonical []byte
	// Params are the top-level parameters as decoded: string, json.Number,
	// bool, nil, map[string]any or []any. Nil when there are none.
	Params map[string]any
	// Texts are the non-empty object keys and string values, in the order
	// of the canonical form, at most maxScanTexts of them.
	Texts []string
}

// DecodeArguments decodes a call's arguments once into their canonical
// form, parameters and texts. Its errors wrap ErrArguments.
func DecodeArguments(args []byte) (*Arguments, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		return &Arguments{Canonical: []byte("{}")}, nil
	}
	if len(args) > MaxArgumentsBytes {
		return nil, fmt.Errorf("%w: over %d bytes", ErrArguments, MaxArgumentsBytes)
	}
	if args[0] != '{' {
		return nil, fmt.Errorf("%w: arguments must be a JSON object", ErrArguments)
	}
	v, ok := fastDecode(args)
	if !ok {
		var err error
		if v, err = slowDecode(args); err != nil {
			return nil, err
		}
	}
	w := canonicalWriter{buf: make([]byte, 0, len(args))}
	if err := w.write(v, 0); err != nil {
		return nil, err
	}
	if len(v) == 0 {
		v = nil
	}
	return &Arguments{Canonical: w.buf, Params: v, Texts: w.texts}, nil
}

// slowDecode decodes an arguments object with encoding/json, numbers as
// json.Number: anything fastDecode leaves (repeated names, invalid UTF-8,
// nesting past MaxArgumentsDepth, a syntax error) is decoded, or refused,
// as it always was.
func slowDecode(args []byte) (map[string]any, error) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v map[string]any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrArguments, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: trailing data after the object", ErrArguments)
	}
	return v, nil
}

// tokens is a pooled jsontext decoder over its input, for ReadWhole. The
// decoder reads a *bytes.Buffer's bytes where they lie (any other reader
// is copied into its own buffer), so values read may point into the input.
type tokens struct {
	buf bytes.Buffer
	dec jsontext.Decoder
}

var tokenPool = sync.Pool{New: func() any { return new(tokens) }}

// ReadWhole is the frame of the one-pass readers here and in package
// upstream: it runs read on a pooled decoder over data (not copied) and
// reports whether read returned true and nothing follows what it read
// (json.Unmarshal refuses trailing data). What read takes from d is valid
// only until its next call on d, and the decoder goes back to the pool
// when read returns: read copies what it keeps.
func ReadWhole(data []byte, read func(d *jsontext.Decoder) bool) bool {
	t := tokenPool.Get().(*tokens)
	t.buf = *bytes.NewBuffer(data)
	t.dec.Reset(&t.buf)
	ok := read(&t.dec)
	if ok {
		_, err := t.dec.ReadToken()
		ok = err == io.EOF
	}
	t.buf = bytes.Buffer{} // back to the pool without its input
	t.dec.Reset(&t.buf)
	tokenPool.Put(t)
	return ok
}

// ReadObject reads the object at d's next value in one pass — '{', its
// members, '}' — for the one-pass readers here and in package upstream.
// For each member it gives member the name as written, quotes and escapes
// included (a name written with escapes equals no plain one), valid only
// until the next call on d; member reads the value. False when the next
// value is not an object, on any error, or when member returns false.
func ReadObject(d *jsontext.Decoder, member func(name []byte) bool) bool {
	if d.PeekKind() != '{' {
		return false
	}
	if _, err := d.ReadToken(); err != nil {
		return false
	}
	for d.PeekKind() == '"' {
		name, err := d.ReadValue()
		if err != nil || !member(name) {
			return false
		}
	}
	tok, err := d.ReadToken()
	return err == nil && tok.Kind() == '}'
}

// fastDecode decodes an arguments object in one pass over its tokens, to
// exactly what slowDecode gives; ok false, for slowDecode to decide, on
// anything it is not sure of: a repeated name, invalid UTF-8 (jsontext
// refuses both), nesting past MaxArgumentsDepth, anything after the
// object, a syntax error.
func fastDecode(args []byte) (v map[string]any, ok bool) {
	var x any
	if !ReadWhole(args, func(d *jsontext.Decoder) bool {
		if d.PeekKind() != '{' {
			return false
		}
		x, ok = readAny(d, 0)
		return ok
	}) {
		return nil, false
	}
	return x.(map[string]any), true
}

// readAny reads one value as encoding/json decodes it into an any with
// UseNumber: map[string]any, []any (empty, not nil), string, json.Number,
// bool or nil.
func readAny(d *jsontext.Decoder, depth int) (any, bool) {
	if depth > MaxArgumentsDepth {
		return nil, false
	}
	switch d.PeekKind() {
	case '{':
		m := make(map[string]any)
		ok := ReadObject(d, func(name []byte) bool {
			key, ok := unquote(name) // before the next read voids name
			if !ok {
				return false
			}
			v, ok := readAny(d, depth+1)
			if ok {
				m[key] = v
			}
			return ok
		})
		return m, ok
	case '[':
		if _, err := d.ReadToken(); err != nil {
			return nil, false
		}
		a := make([]any, 0)
		for k := d.PeekKind(); k != ']' && k != 0; k = d.PeekKind() {
			v, ok := readAny(d, depth+1)
			if !ok {
				return nil, false
			}
			a = append(a, v)
		}
		if tok, err := d.ReadToken(); err != nil || tok.Kind() != ']' {
			return nil, false
		}
		return a, true
	case '"':
		tok, err := d.ReadToken()
		if err != nil {
			return nil, false
		}
		return tok.String(), true
	case '0':
		raw, err := d.ReadValue()
		if err != nil {
			return nil, false
		}
		return json.Number(raw), true
	case 't', 'f':
		tok, err := d.ReadToken()
		if err != nil {
			return nil, false
		}
		return tok.Bool(), true
	case 'n':
		if _, err := d.ReadToken(); err != nil {
			return nil, false
		}
		return nil, true
	}
	return nil, false
}

// unquote is the string a JSON string (as jsontext read it: valid) stands
// for.
func unquote(quoted []byte) (string, bool) {
	if bytes.IndexByte(quoted, '\\') < 0 {
		return string(quoted[1 : len(quoted)-1]), true
	}
	b, err := jsontext.AppendUnquote(nil, quoted)
	return string(b), err == nil
}

// Canonical returns the canonical JSON of a call's arguments: an object
// (null or empty input is {}), keys sorted, no insignificant space, strings
// in Go's JSON escaping, numbers in their shortest exact form (1.0 and 1e0
// are 1; integers keep every digit). Two argument objects that mean the same
// have the same canonical form: it keys the tool-call cache and is what the
// audit entry hashes. Input over MaxArgumentsBytes or nested deeper than
// MaxArgumentsDepth is refused.
func Canonical(args []byte) ([]byte, error) {
	a, err := DecodeArguments(args)
	if err != nil {
		return nil, err
	}
	return a.Canonical, nil
}

// canonicalWriter writes a decoded value's canonical form and gathers its
// texts on the way.
type canonicalWriter struct {
	buf   []byte
	texts []string
}

func (w *canonicalWriter) text(s string) {
	if s != "" && len(w.texts) < maxScanTexts {
		w.texts = append(w.texts, s)
	}
}

func (w *canonicalWriter) write(v any, depth int) error {
	if depth > MaxArgumentsDepth {
		return fmt.Errorf("%w: nested deeper than %d", ErrArguments, MaxArgumentsDepth)
	}
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		w.buf = append(w.buf, '{')
		for i, k := range keys {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			w.buf = llm.AppendJSONString(w.buf, k)
			w.text(k)
			w.buf = append(w.buf, ':')
			if err := w.write(t[k], depth+1); err != nil {
				return err
			}
		}
		w.buf = append(w.buf, '}')
	case []any:
		w.buf = append(w.buf, '[')
		for i, e := range t {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			if err := w.write(e, depth+1); err != nil {
				return err
			}
		}
		w.buf = append(w.buf, ']')
	case string:
		w.buf = llm.AppendJSONString(w.buf, t)
		w.text(t)
	case json.Number:
		w.buf = append(w.buf, canonicalNumber(t)...)
	case bool:
		w.buf = strconv.AppendBool(w.buf, t)
	case nil:
		w.buf = append(w.buf, "null"...)
	}
	return nil
}

// canonicalNumber writes a JSON number in one exact form per value: the
// decimal digits with leading and trailing zeros removed, as an integer
// when its value is one of at most 21 digits, as a plain decimal when its
// point falls within 21 digits, else as d.ddde±N. It never rounds, so two
// different numbers never share a form (the cache key must not collide).
// n is a valid JSON number (json.Decoder only yields those).
func canonicalNumber(n json.Number) string {
	s := string(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	mant, expText, _ := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	exp, err := strconv.Atoi(expText)
	if expText == "" {
		exp, err = 0, nil
	}
	if err != nil || exp > 1e9 || exp < -1e9 {
		return string(n) // an exponent past any float: keep the text
	}
	digits := strings.TrimLeft(intPart+frac, "0")
	exp -= len(frac)
	if digits == "" {
		return "0"
	}
	trimmed := strings.TrimRight(digits, "0")
	exp += len(digits) - len(trimmed)
	digits = trimmed
	sign := ""
	if neg {
		sign = "-"
	}
	switch point := len(digits) + exp; {
	case exp >= 0 && point <= 21:
		return sign + digits + strings.Repeat("0", exp)
	case exp < 0 && point > 0:
		return sign + digits[:point] + "." + digits[point:]
	case exp < 0 && point > -6:
		return sign + "0." + strings.Repeat("0", -point) + digits
	default:
		e := point - 1
		d := digits[:1]
		if len(digits) > 1 {
			d += "." + digits[1:]
		}
		return sign + d + "e" + strconv.Itoa(e)
	}
}
