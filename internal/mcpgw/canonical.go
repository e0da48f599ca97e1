package mcpgw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Limits on a call's arguments.
const (
	MaxArgumentsBytes = 4 << 20
	MaxArgumentsDepth = 64
)

// ErrArguments is wrapped by Canonical's errors: the arguments are not a
// JSON object svc accepts (the caller's mistake).
var ErrArguments = errors.New("mcpgw: invalid tool arguments")

// Canonical returns the canonical JSON of a call's arguments: an object
// (null or empty input is {}), keys sorted, no insignificant space, strings
// in Go's JSON escaping, numbers in their shortest exact form (1.0 and 1e0
// are 1; integers keep every digit). Two argument objects that mean the same
// have the same canonical form: it keys the tool-call cache and is what the
// audit entry hashes. Input over MaxArgumentsBytes or nested deeper than
// MaxArgumentsDepth is refused.
func Canonical(args []byte) ([]byte, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		return []byte("{}"), nil
	}
	if len(args) > MaxArgumentsBytes {
		return nil, fmt.Errorf("%w: over %d bytes", ErrArguments, MaxArgumentsBytes)
	}
	if args[0] != '{' {
		return nil, fmt.Errorf("%w: arguments must be a JSON object", ErrArguments)
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrArguments, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: trailing data after the object", ErrArguments)
	}
	var buf bytes.Buffer
	buf.Grow(len(args))
	if err := writeCanonical(&buf, v, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeCanonical(buf *bytes.Buffer, v any, depth int) error {
	if depth > MaxArgumentsDepth {
		return fmt.Errorf("%w: nested deeper than %d", ErrArguments, MaxArgumentsDepth)
	}
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			if err := writeCanonical(buf, t[k], depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case []any:
		buf.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, e, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case string:
		writeString(buf, t)
	case json.Number:
		buf.WriteString(canonicalNumber(t))
	case bool:
		buf.WriteString(strconv.FormatBool(t))
	case nil:
		buf.WriteString("null")
	}
	return nil
}

func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always encodes
	buf.Write(b)
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
