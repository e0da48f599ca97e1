package mcpgw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// The implementations DecodeArguments replaced, decoding the arguments
// three times: its results must not differ from theirs.

func referenceCanonical(args []byte) ([]byte, error) {
	args = bytes.TrimSpace(args)
	if len(args) == 0 || string(args) == "null" {
		return []byte("{}"), nil
	}
	if len(args) > MaxArgumentsBytes || args[0] != '{' {
		return nil, ErrArguments
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrArguments, err)
	}
	if _, err := dec.Token(); err != io.EOF { // (dec.More let "]" or "}" after the object pass)
		return nil, ErrArguments
	}
	var buf bytes.Buffer
	if err := referenceWrite(&buf, v, 0); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func referenceWrite(buf *bytes.Buffer, v any, depth int) error {
	if depth > MaxArgumentsDepth {
		return ErrArguments
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
			b, _ := json.Marshal(k)
			buf.Write(b)
			buf.WriteByte(':')
			if err := referenceWrite(buf, t[k], depth+1); err != nil {
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
			if err := referenceWrite(buf, e, depth+1); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case string:
		b, _ := json.Marshal(t)
		buf.Write(b)
	case json.Number:
		buf.WriteString(canonicalNumber(t))
	case bool:
		fmt.Fprint(buf, t)
	case nil:
		buf.WriteString("null")
	}
	return nil
}

// referenceMatches is the allowed_params value check on the canonical
// JSON of one parameter.
func referenceMatches(pat string, raw json.RawMessage) bool {
	re, err := compilePattern(pat)
	if err != nil {
		return false
	}
	if re == nil {
		return true
	}
	switch raw[0] {
	case '{', '[':
		return false
	case '"':
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return false
		}
		return re.MatchString(s)
	}
	return re.Match(raw)
}

// sameAsReference checks DecodeArguments against the three passes it
// replaced: the canonical form, the scanned texts, and the allowed_params
// verdict of every parameter under a few patterns.
func sameAsReference(t *testing.T, in []byte) {
	t.Helper()
	want, werr := referenceCanonical(in)
	got, gerr := DecodeArguments(in)
	if (werr == nil) != (gerr == nil) {
		t.Fatalf("%q: error %v, reference %v", in, gerr, werr)
	}
	if werr != nil {
		if !errors.Is(gerr, ErrArguments) {
			t.Fatalf("%q: error %v does not wrap ErrArguments", in, gerr)
		}
		return
	}
	if !bytes.Equal(got.Canonical, want) {
		t.Fatalf("%q: canonical %s, reference %s", in, got.Canonical, want)
	}
	if texts := argumentTexts(want); !slices.Equal(got.Texts, texts) {
		t.Fatalf("%q: texts %q, reference %q", in, got.Texts, texts)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(want, &raw); err != nil {
		t.Fatal(err)
	}
	if len(raw) != len(got.Params) {
		t.Fatalf("%q: %d params, reference %d", in, len(got.Params), len(raw))
	}
	for name, r := range raw {
		v, ok := got.Params[name]
		if !ok {
			t.Fatalf("%q: param %q missing", in, name)
		}
		for _, pat := range []string{"", ".*", "[a-z]+", "1", "1.5", "true", "null", "-?[0-9.e]+"} {
			if a, b := valueMatches(pat, v), referenceMatches(pat, r); a != b {
				t.Fatalf("%q: param %q under %q: %v, reference %v", in, name, pat, a, b)
			}
		}
	}
}

var argumentSamples = []string{
	``, `null`, `{}`, ` {"b":1,"a":2} `, `{"a":{"z":[1,2.0,3e0],"y":"x"}}`, `{"n":1.50,"m":-0.0,"e":1E+2}`,
	`{"s":"\u00e9<>&","t":"tab\there","u":"\ud800","q":"say \"hi\"","k":""}`, `{"":"empty key","x":true,"y":false,"z":null}`,
	`{"dup":1,"dup":"last"}`, `{"html":"<b>bold</b> & more","<k>":1,"lt":"a<b","amp":"a&b"}`, `{"arr":[{"b":"x","a":["y",{"c":"z"}]}],"deep":{"a":{"b":{"c":"d"}}}}`,
	`[]`, `"x"`, `{"a":`, `{} {}`, `{"a":1}x`, strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70),
}

func TestDecodeArgumentsMatchesReference(t *testing.T) {
	for _, s := range argumentSamples {
		sameAsReference(t, []byte(s))
	}
	sameAsReference(t, arguments4KB())
	// Past maxScanTexts strings, both stop at the same one.
	var many []string
	for i := range maxScanTexts + 50 {
		many = append(many, fmt.Sprint("s", i))
	}
	b, _ := json.Marshal(map[string]any{"many": many})
	sameAsReference(t, b)
	if a, _ := DecodeArguments(b); len(a.Texts) != maxScanTexts {
		t.Errorf("%d texts, want the bound %d", len(a.Texts), maxScanTexts)
	}
}

func FuzzDecodeArguments(f *testing.F) {
	for _, s := range argumentSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		sameAsReference(t, in)
		sameAsSlow(t, in)
	})
}

// sameAsSlow checks that what fastDecode takes, it decodes exactly as
// encoding/json (slowDecode) does.
func sameAsSlow(t *testing.T, in []byte) {
	t.Helper()
	in = bytes.TrimSpace(in)
	got, ok := fastDecode(in)
	if !ok {
		return
	}
	want, err := slowDecode(in)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("%q: fast %#v, encoding/json %#v (%v)", in, got, want, err)
	}
}

// TestFastDecode: the token reader takes ordinary arguments and leaves to
// encoding/json what it might decode otherwise.
func TestFastDecode(t *testing.T) {
	for _, c := range []struct {
		in   string
		fast bool
	}{
		{`{"text":"x","n":[1,-2.5e3,{"a":null,"b":true,"c":false}],"e":[],"o":{}}`, true},
		{string(arguments4KB()), true},
		{`{"k\u00e9y":1,"q\"k":{"\n":2},"\u003c":"<"}`, true}, // names with escapes
		{`{"dup":1,"dup":"last"}`, false},
		{`{"a":1,"\u0061":2}`, false}, // repeated, once escaped
		{"{\"bad\":\"\xff\"}", false},
		{`{"u":"\ud800"}`, false},
		{`{"a":1} {}`, false},
		{`{"a":1}]`, false},
		{strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70), false},
	} {
		if _, ok := fastDecode([]byte(c.in)); ok != c.fast {
			t.Errorf("%q: taken %v, want %v", c.in, ok, c.fast)
		}
		sameAsSlow(t, []byte(c.in))
		sameAsReference(t, []byte(c.in))
	}
}
