package config

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
)

// parser reads typed settings from a Source, collecting every problem.
type parser struct {
	src      Source
	problems []string
}

// Error lists every bad setting.
type Error struct{ Problems []string }

func (e *Error) Error() string {
	return "invalid settings:\n  " + strings.Join(e.Problems, "\n  ")
}

func (p *parser) bad(name, msg string) { p.problems = append(p.problems, name+": "+msg) }

func (p *parser) err() error {
	if len(p.problems) == 0 {
		return nil
	}
	sort.Strings(p.problems)
	return &Error{Problems: p.problems}
}

func (p *parser) str(name, def string) string {
	if v, ok := p.src.Lookup(name); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return def
}

func (p *parser) intRange(name string, def, lo, hi int) int {
	v, ok := p.src.Lookup(name)
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < lo || n > hi {
		p.bad(name, fmt.Sprintf("must be an integer from %d to %d, got %q", lo, hi, v))
		return def
	}
	return n
}

func (p *parser) port(name string, def int) int { return p.intRange(name, def, 0, 65535) }

func (p *parser) duration(name string, def, min time.Duration) time.Duration {
	v, ok := p.src.Lookup(name)
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	v = strings.TrimSpace(v)
	d, err := time.ParseDuration(v)
	if err != nil {
		// A bare number is seconds.
		secs, err2 := strconv.ParseFloat(v, 64)
		if err2 != nil {
			p.bad(name, fmt.Sprintf("must be a duration such as 30s or 2h, got %q", v))
			return def
		}
		d = time.Duration(secs * float64(time.Second))
	}
	if d < min {
		p.bad(name, fmt.Sprintf("must be at least %s, got %q", min, v))
		return def
	}
	return d
}

func (p *parser) boolean(name string, def bool) bool {
	v, ok := p.src.Lookup(name)
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	b, err := parseBool(v)
	if err != nil {
		p.bad(name, fmt.Sprintf("must be true or false, got %q", v))
		return def
	}
	return b
}

func (p *parser) floatRange(name string, def, lo, hi float64) float64 {
	v, ok := p.src.Lookup(name)
	if !ok || strings.TrimSpace(v) == "" {
		return def
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || f < lo || f > hi {
		p.bad(name, fmt.Sprintf("must be a number from %g to %g, got %q", lo, hi, v))
		return def
	}
	return f
}

func (p *parser) list(name string) []string {
	var out []string
	for _, s := range strings.Split(p.str(name, ""), ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (p *parser) oneOf(name, def string, allowed ...string) string {
	v := strings.ToLower(p.str(name, def))
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	p.bad(name, fmt.Sprintf("must be one of %s, got %q", strings.Join(allowed, ", "), v))
	return def
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off", "":
		return false, nil
	}
	return false, errors.New("not a boolean")
}

// componentAliases maps accepted SERVICE_TYPE words to component names.
var componentAliases = map[string]string{
	"proxy": Proxy, "api-server": Management, "api_server": Management, "management": Management,
}

// planned are components of the spec that this build does not have yet.
var planned = map[string]bool{"compliance": true, "policy-perfect": true, "bridge": true, "frontend": true}

func (p *parser) components(name string) []string {
	v := strings.ToLower(p.str(name, "all"))
	if v == "all" {
		return append([]string(nil), Built...)
	}
	seen := map[string]bool{}
	var out []string
	for _, w := range strings.Split(v, ",") {
		w = strings.TrimSpace(w)
		if w == "" {
			continue
		}
		c, ok := componentAliases[w]
		switch {
		case ok:
		case w == "all":
			c = ""
			for _, b := range Built {
				if !seen[b] {
					seen[b] = true
					out = append(out, b)
				}
			}
			continue
		case planned[w]:
			p.bad(name, fmt.Sprintf("component %q is not available in this build (available: %s)", w, strings.Join(Built, ", ")))
			continue
		default:
			p.bad(name, fmt.Sprintf("unknown component %q (use all, or a list of %s)", w, strings.Join(Built, ", ")))
			continue
		}
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	if len(out) == 0 && len(p.problems) == 0 {
		p.bad(name, "names no component")
	}
	return out
}

var providerSuffixes = []string{"_API_KEY", "_API_BASE", "_API_VERSION", "_ENABLED", "_REGION", "_PROJECT", "_LOCATION"}

// providers collects <PROVIDER>_* settings for every provider named in src.
func (p *parser) providers() map[string]ProviderSettings {
	out := map[string]ProviderSettings{}
	for _, n := range p.src.Names() {
		for _, suf := range providerSuffixes {
			prefix, ok := strings.CutSuffix(n, suf)
			if !ok || prefix == "" || prefix == "ADMIN" || prefix == "SVC" || prefix == "AWS" || strings.HasPrefix(prefix, "SVC_") {
				continue
			}
			name := strings.ToLower(prefix)
			ps := out[name]
			v, _ := p.src.Lookup(n)
			v = strings.TrimSpace(v)
			switch suf {
			case "_API_KEY":
				ps.APIKey = v
			case "_API_BASE":
				if v != "" && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
					p.bad(n, "must be an http:// or https:// URL")
				}
				ps.APIBase = strings.TrimRight(v, "/")
			case "_API_VERSION":
				ps.APIVersion = v
			case "_REGION":
				ps.Region = v
			case "_PROJECT":
				ps.Project = v
			case "_LOCATION":
				ps.Location = v
			case "_ENABLED":
				b, err := parseBool(v)
				if err != nil {
					p.bad(n, fmt.Sprintf("must be true or false, got %q", v))
				}
				ps.Enabled = &b
			}
			out[name] = ps
		}
	}
	return out
}
