package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// args are a call's arguments by group, each value still raw JSON.
type args struct {
	groups map[string]map[string]json.RawMessage // "path", "query", "header"
	body   json.RawMessage                       // nil when absent or null
}

var groups = []string{"path", "query", "header"}

// decodeArgs reads a call's arguments: a JSON object with the members
// path, query, header (objects) and body, each optional. Member names match
// exactly.
func decodeArgs(raw []byte) (args, error) {
	a := args{groups: map[string]map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(raw)) == 0 || isNull(raw) {
		return a, nil
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return a, errors.New("the arguments must be a JSON object")
	}
	names := make([]string, 0, len(top))
	for k := range top {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := top[k]
		switch k {
		case "body":
			if !isNull(v) {
				a.body = v
			}
		case "path", "query", "header":
			if isNull(v) {
				continue
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(v, &m); err != nil {
				return a, fmt.Errorf("argument %q must be an object of parameters", k)
			}
			a.groups[k] = m
		default:
			return a, fmt.Errorf("unknown argument %q: arguments go in path, query, header and body", k)
		}
	}
	return a, nil
}

func isNull(raw []byte) bool { return string(bytes.TrimSpace(raw)) == "null" }

// request builds the HTTP request of one call. Its errors are for the
// model: they name the argument at fault.
func (c *caller) request(ctx context.Context, b *binding, a args) (*http.Request, error) {
	vals, err := values(b, a)
	if err != nil {
		return nil, err
	}
	path, err := expandPath(b, vals["path"])
	if err != nil {
		return nil, err
	}
	u := *c.base
	u.RawPath = strings.TrimSuffix(c.base.EscapedPath(), "/") + path
	if u.Path, err = url.PathUnescape(u.RawPath); err != nil {
		return nil, errors.New("the path cannot be built from these arguments")
	}
	var pieces []string
	if c.base.RawQuery != "" {
		pieces = append(pieces, c.base.RawQuery)
	}
	for _, p := range b.params["query"] {
		if arg, ok := vals["query"][p.name]; ok {
			pieces = append(pieces, queryPieces(p, arg)...)
		}
	}
	u.RawQuery = strings.Join(pieces, "&")

	var body io.Reader
	if a.body != nil {
		if b.body == nil {
			return nil, errors.New(`argument "body": this operation takes no JSON body`)
		}
		body = bytes.NewReader(a.body)
	} else if b.body != nil && b.body.required {
		return nil, errors.New(`missing required argument "body"`)
	}
	req, err := http.NewRequestWithContext(ctx, b.method, u.String(), body)
	if err != nil {
		return nil, errors.New("the request cannot be built from these arguments")
	}
	req.Header.Set("Accept", "application/json, */*;q=0.8")
	if body != nil {
		req.Header.Set("Content-Type", b.body.mediaType)
	}
	for _, p := range b.params["header"] {
		if arg, ok := vals["header"][p.name]; ok {
			v := headerValue(p, arg)
			if !validHeaderValue(v) {
				return nil, fmt.Errorf("header parameter %q holds control characters", p.name)
			}
			req.Header.Set(p.name, v)
		}
	}
	return req, nil
}

// values checks the grouped arguments against the binding (unknown,
// refused, repeated and missing ones are errors) and flattens them, keyed by
// the parameters' declared names. Header names match case-insensitively.
func values(b *binding, a args) (map[string]map[string]value, error) {
	out := map[string]map[string]value{}
	var missing []string
	for _, g := range groups {
		fold := func(name string) string { return name }
		if g == "header" {
			fold = strings.ToLower
		}
		known := map[string]*param{}
		for _, p := range b.params[g] {
			known[fold(p.name)] = p
		}
		given := a.groups[g]
		names := make([]string, 0, len(given))
		for name := range given {
			names = append(names, name)
		}
		sort.Strings(names)
		out[g] = map[string]value{}
		seen := map[string]bool{}
		for _, name := range names {
			p := known[fold(name)]
			if p == nil {
				if g == "header" && refusedHeader(strings.ToLower(name)) {
					return nil, fmt.Errorf("header %q may not be set by a tool call", name)
				}
				return nil, fmt.Errorf("unknown argument %s.%s", g, name)
			}
			if seen[p.name] {
				return nil, fmt.Errorf("argument %s.%s is given twice", g, p.name)
			}
			seen[p.name] = true
			v, present, err := argValue(p, given[name])
			if err != nil {
				return nil, err
			}
			if present {
				out[g][p.name] = v
			}
		}
		for _, p := range b.params[g] {
			if _, ok := out[g][p.name]; !ok && p.required {
				missing = append(missing, g+"."+p.name)
			}
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("missing required argument(s): %s", strings.Join(missing, ", "))
	}
	return out, nil
}

// argValue decodes one parameter's argument; null counts as absent.
func argValue(p *param, raw json.RawMessage) (value, bool, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return value{}, false, fmt.Errorf("argument %s.%s is not valid JSON", p.in, p.name)
	}
	if v == nil {
		return value{}, false, nil
	}
	if p.content != "" {
		s, err := contentText(p, raw, v)
		if err != nil {
			return value{}, false, fmt.Errorf("argument %s.%s cannot be written as %s", p.in, p.name, p.content)
		}
		return value{kind: 'p', text: s}, true, nil
	}
	fv, err := flatten(v)
	if err != nil {
		return value{}, false, fmt.Errorf("argument %s.%s cannot be serialised", p.in, p.name)
	}
	return fv, true, nil
}

// expandPath fills the path template; an empty value, or one that would
// make a "." or ".." segment, is refused.
func expandPath(b *binding, vals map[string]value) (string, error) {
	var sb strings.Builder
	byName := map[string]*param{}
	for _, p := range b.params["path"] {
		byName[p.name] = p
	}
	for _, part := range b.path {
		if part.param == "" {
			sb.WriteString(part.literal)
			continue
		}
		p, v := byName[part.param], vals[part.param]
		if p == nil {
			return "", fmt.Errorf("path parameter %q is not declared by the operation", part.param)
		}
		s := pathValue(p, v)
		if s == "" {
			return "", fmt.Errorf("argument path.%s is empty", part.param)
		}
		sb.WriteString(s)
	}
	path := sb.String()
	for _, seg := range strings.Split(path, "/") {
		if seg == "." || seg == ".." {
			return "", errors.New(`the path arguments may not make a "." or ".." path segment`)
		}
	}
	return path, nil
}

// result turns the upstream answer into the tool's result.
func (c *caller) result(resp *http.Response) (*mcp.CallToolResult, error) {
	body, readErr := io.ReadAll(io.LimitReader(resp.Body, c.max+1))
	over := int64(len(body)) > c.max
	if over {
		body = body[:c.max]
	}
	failed := resp.StatusCode >= 400
	res := &mcp.CallToolResult{IsError: failed}
	text := bodyText(body, over || readErr != nil, resp.Header.Get("Content-Type"))
	switch {
	case failed:
		text = "HTTP " + resp.Status + "\n" + text
	case len(body) == 0 && readErr == nil:
		text = "HTTP " + resp.Status + " (no body)"
	}
	switch {
	case over:
		text += fmt.Sprintf("\n[truncated: the response is longer than %d bytes]", c.max)
	case readErr != nil:
		text += "\n[truncated: reading the response failed]"
	case isJSONObject(body):
		res.StructuredContent = json.RawMessage(body)
	}
	res.Content = []mcp.Content{&mcp.TextContent{Text: text}}
	return res, nil
}

// bodyText is the body as text, cut on a rune boundary when truncated; a
// body that is not UTF-8 text is described, not shown.
func bodyText(body []byte, truncated bool, contentType string) string {
	if truncated {
		for i := 0; i < utf8.UTFMax && len(body) > 0; i++ {
			if r, size := utf8.DecodeLastRune(body); r != utf8.RuneError || size != 1 {
				break
			}
			body = body[:len(body)-1]
		}
	}
	if !utf8.Valid(body) {
		if contentType == "" {
			contentType = "unknown type"
		}
		return fmt.Sprintf("[binary response body: %d bytes of %s, not shown]", len(body), oneLine(contentType))
	}
	return string(body)
}

func isJSONObject(body []byte) bool {
	t := bytes.TrimSpace(body)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}
