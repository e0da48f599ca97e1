package openapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
)

// pathPart is a piece of a path template: literal text (already escaped) or
// a parameter.
type pathPart struct {
	literal string
	param   string
}

// parseTemplate splits a path template ("/pets/{petId}/photo.{format}").
func parseTemplate(path string) ([]pathPart, error) {
	if !strings.HasPrefix(path, "/") {
		return nil, errors.New(`the path does not start with "/"`)
	}
	var parts []pathPart
	for rest := path; rest != ""; {
		open := strings.IndexByte(rest, '{')
		if open < 0 {
			parts = append(parts, pathPart{literal: escapeLiteral(rest)})
			break
		}
		if open > 0 {
			parts = append(parts, pathPart{literal: escapeLiteral(rest[:open])})
		}
		end := strings.IndexByte(rest[open:], '}')
		if end < 0 {
			return nil, errors.New("a path parameter is not closed with }")
		}
		name := rest[open+1 : open+end]
		if name == "" || strings.ContainsAny(name, "{/") {
			return nil, fmt.Errorf("bad path parameter %q", name)
		}
		parts = append(parts, pathPart{param: name})
		rest = rest[open+end+1:]
	}
	return parts, nil
}

func escapeLiteral(s string) string {
	return (&url.URL{Path: s}).EscapedPath()
}

// value is an argument flattened for the parameter styles: a primitive's
// text, an array's items or an object's members (sorted by name); nested
// values are written as JSON text.
type value struct {
	kind  byte // 'p' primitive, 'a' array, 'o' object
	text  string
	items []string
	keys  []string
}

func flatten(v any) (value, error) {
	switch x := v.(type) {
	case []any:
		out := value{kind: 'a'}
		for _, item := range x {
			s, err := text(item)
			if err != nil {
				return value{}, err
			}
			out.items = append(out.items, s)
		}
		return out, nil
	case map[string]any:
		out := value{kind: 'o'}
		for k := range x {
			out.keys = append(out.keys, k)
		}
		sort.Strings(out.keys)
		for _, k := range out.keys {
			s, err := text(x[k])
			if err != nil {
				return value{}, err
			}
			out.items = append(out.items, s)
		}
		return out, nil
	default:
		s, err := text(v)
		return value{kind: 'p', text: s}, err
	}
}

// text is a value's text: a string as is, a number as written, nested
// values as JSON.
func text(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		if x {
			return "true", nil
		}
		return "false", nil
	default:
		b, err := json.Marshal(x)
		return string(b), err
	}
}

// pairs is an object's members as k, v, k, v … or k=v, each escaped.
func (v value) pairs(esc func(string) string, explode bool) []string {
	var out []string
	for i, k := range v.keys {
		if explode {
			out = append(out, esc(k)+"="+esc(v.items[i]))
		} else {
			out = append(out, esc(k), esc(v.items[i]))
		}
	}
	return out
}

func escAll(items []string, esc func(string) string) []string {
	out := make([]string, len(items))
	for i, s := range items {
		out[i] = esc(s)
	}
	return out
}

// pathValue serialises a path parameter (styles simple, label, matrix).
func pathValue(p *param, v value) string {
	esc := url.PathEscape
	var prefix, sep string
	switch p.style {
	case "label":
		prefix, sep = ".", ","
		if p.explode {
			sep = "."
		}
	case "matrix":
		return matrix(p, v)
	default:
		sep = ","
	}
	switch v.kind {
	case 'a':
		return prefix + strings.Join(escAll(v.items, esc), sep)
	case 'o':
		return prefix + strings.Join(v.pairs(esc, p.explode), sep)
	default:
		return prefix + esc(v.text)
	}
}

func matrix(p *param, v value) string {
	esc := url.PathEscape
	name := ";" + esc(p.name)
	switch {
	case v.kind == 'a' && p.explode:
		var sb strings.Builder
		for _, item := range v.items {
			sb.WriteString(name + "=" + esc(item))
		}
		return sb.String()
	case v.kind == 'a':
		return name + "=" + strings.Join(escAll(v.items, esc), ",")
	case v.kind == 'o' && p.explode:
		return ";" + strings.Join(v.pairs(esc, true), ";")
	case v.kind == 'o':
		return name + "=" + strings.Join(v.pairs(esc, false), ",")
	default:
		return name + "=" + esc(v.text)
	}
}

// queryPieces serialises a query parameter into escaped "k=v" pieces
// (styles form, spaceDelimited, pipeDelimited, deepObject).
func queryPieces(p *param, v value) []string {
	esc := url.QueryEscape
	name := esc(p.name)
	switch {
	case v.kind == 'o' && p.style == "deepObject":
		out := make([]string, len(v.keys))
		for i, k := range v.keys {
			out[i] = name + "[" + esc(k) + "]=" + esc(v.items[i])
		}
		return out
	case v.kind == 'o' && p.explode:
		return v.pairs(esc, true)
	case v.kind == 'o':
		return []string{name + "=" + strings.Join(v.pairs(esc, false), delimiter(p.style))}
	case v.kind == 'a' && p.explode:
		out := make([]string, len(v.items))
		for i, item := range v.items {
			out[i] = name + "=" + esc(item)
		}
		return out
	case v.kind == 'a':
		return []string{name + "=" + strings.Join(escAll(v.items, esc), delimiter(p.style))}
	default:
		return []string{name + "=" + esc(v.text)}
	}
}

func delimiter(style string) string {
	switch style {
	case "spaceDelimited":
		return "%20"
	case "pipeDelimited":
		return "|"
	default:
		return ","
	}
}

// headerValue serialises a header parameter (style simple).
func headerValue(p *param, v value) string {
	id := func(s string) string { return s }
	switch v.kind {
	case 'a':
		return strings.Join(v.items, ",")
	case 'o':
		return strings.Join(v.pairs(id, p.explode), ",")
	default:
		return v.text
	}
}

// contentText is a parameter with content's value: JSON text, or a string
// as is for a non-JSON media type.
func contentText(p *param, raw json.RawMessage, v any) (string, error) {
	if s, ok := v.(string); ok && !isJSONMedia(p.content) {
		return s, nil
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return "", err
	}
	return buf.String(), nil
}

func isJSONMedia(mt string) bool {
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// validHeaderName reports whether name is an HTTP token (RFC 9110).
func validHeaderName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}

// validHeaderValue refuses control characters (CR and LF above all).
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}

// refusedHeaders are the request headers a tool call may never set: the
// hop-by-hop ones, identity and credentials, framing, and what proxies use
// to say who the client is. Lower case.
var refusedHeaders = map[string]bool{
	"accept": true, "accept-encoding": true, "authorization": true, "connection": true,
	"content-encoding": true, "content-length": true, "content-type": true, "cookie": true,
	"expect": true, "forwarded": true, "host": true, "keep-alive": true, "te": true,
	"trailer": true, "transfer-encoding": true, "upgrade": true,
	"x-forwarded-for": true, "x-forwarded-host": true, "x-forwarded-proto": true, "x-real-ip": true,
}

// refusedHeader takes a lower-case name.
func refusedHeader(name string) bool {
	return refusedHeaders[name] || strings.HasPrefix(name, "proxy-") || strings.HasPrefix(name, "sec-")
}
