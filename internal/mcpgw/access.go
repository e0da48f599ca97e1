package mcpgw

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
)

// AllowedParams is the per-tool parameter allow-list of a registration:
// tool → its permitted parameters. A tool with an entry may be called only
// with the parameters listed; a parameter with a pattern only with values
// that match it whole (strings as they are; numbers and booleans as their
// JSON text; objects and arrays never match a pattern). A tool without an
// entry takes any parameters.
//
// JSON accepts either form per tool: a list of names (any value), or an
// object of name → pattern ("" for any value).
type AllowedParams map[string]ParamRules

// ParamRules maps a parameter to its value pattern ("" for any value).
type ParamRules map[string]string

// UnmarshalJSON takes ["a","b"] or {"a":"^x$","b":""}.
func (p *ParamRules) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '[' {
		var names []string
		if err := json.Unmarshal(b, &names); err != nil {
			return err
		}
		m := make(ParamRules, len(names))
		for _, n := range names {
			m[n] = ""
		}
		*p = m
		return nil
	}
	var m map[string]string
	if err := json.Unmarshal(b, &m); err != nil {
		return fmt.Errorf("a list of parameter names or an object of name to pattern: %w", err)
	}
	*p = m
	return nil
}

// compile checks the rules' sizes and patterns.
func (p ParamRules) compile() error {
	if len(p) > MaxListLen {
		return fmt.Errorf("at most %d parameters", MaxListLen)
	}
	for name, pat := range p {
		if name == "" || len(name) > MaxNameLen || len(pat) > MaxPatternLen {
			return fmt.Errorf("parameter names 1–%d characters, patterns at most %d", MaxNameLen, MaxPatternLen)
		}
		if _, err := compilePattern(pat); err != nil {
			return fmt.Errorf("parameter %q: invalid pattern: %v", name, err)
		}
	}
	return nil
}

// patterns caches compiled, whole-value anchored patterns.
var patterns = newPatternCache(4096)

func compilePattern(pat string) (*regexp.Regexp, error) {
	if pat == "" {
		return nil, nil
	}
	return patterns.get(pat)
}

// Denied says why a call is refused by the registration's access control.
// The message is safe for the caller: it names the tool and parameter, never
// a value.
type Denied struct {
	Tool   string
	Param  string
	Reason string
}

func (d *Denied) Error() string {
	if d.Param != "" {
		return fmt.Sprintf("tool %q: parameter %q %s", d.Tool, d.Param, d.Reason)
	}
	return fmt.Sprintf("tool %q %s", d.Tool, d.Reason)
}

// Visible reports whether the caller may see (and so call) tool at all:
// never a disallowed tool; an allowed list admits only its tools and those
// granted to the caller by an approved access request.
func (s *Server) Visible(tool string, granted bool) bool {
	if slices.Contains(s.DisallowedTools, tool) {
		return false
	}
	return len(s.AllowedTools) == 0 || granted || slices.Contains(s.AllowedTools, tool)
}

// Permits checks one call: the tool's visibility, then its arguments
// against allowed_params. args are the call's top-level parameters as
// DecodeArguments gives them (Arguments.Params).
func (s *Server) Permits(tool string, args map[string]any, granted bool) error {
	if slices.Contains(s.DisallowedTools, tool) {
		return &Denied{Tool: tool, Reason: "is disallowed on this server"}
	}
	if !s.Visible(tool, granted) {
		return &Denied{Tool: tool, Reason: "is not in this server's allowed tools for the caller"}
	}
	rules, ok := s.AllowedParams[tool]
	if !ok || len(args) == 0 {
		return nil
	}
	names := make([]string, 0, len(args))
	for name := range args {
		names = append(names, name)
	}
	slices.Sort(names) // the first refused parameter is the same every time
	for _, name := range names {
		pat, listed := rules[name]
		if !listed {
			return &Denied{Tool: tool, Param: name, Reason: "is not an allowed parameter"}
		}
		if !valueMatches(pat, args[name]) {
			return &Denied{Tool: tool, Param: name, Reason: "has a value its pattern does not allow"}
		}
	}
	return nil
}

// valueMatches matches a decoded value against a parameter's pattern:
// strings as they are, numbers as their canonical JSON text, booleans and
// null as their JSON; objects and arrays never match a pattern.
func valueMatches(pat string, v any) bool {
	re, err := compilePattern(pat)
	if err != nil {
		return false // validated at registration; a bad pattern never admits
	}
	if re == nil {
		return true
	}
	switch t := v.(type) {
	case string:
		return re.MatchString(t)
	case json.Number:
		return re.MatchString(canonicalNumber(t))
	case bool:
		return re.MatchString(strconv.FormatBool(t))
	case nil:
		return re.MatchString("null")
	}
	return false
}
