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
	// read records every name looked up, so unknown names can be refused.
	read map[string]bool
}

// lookup reads name from the source and records that it was asked for.
func (p *parser) lookup(name string) (string, bool) {
	if p.read != nil {
		p.read[name] = true
	}
	return p.src.Lookup(name)
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
	if v, ok := p.lookup(name); ok && strings.TrimSpace(v) != "" {
		return strings.TrimSpace(v)
	}
	return def
}

func (p *parser) intRange(name string, def, lo, hi int) int {
	v, ok := p.lookup(name)
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
	v, ok := p.lookup(name)
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
	v, ok := p.lookup(name)
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
	v, ok := p.lookup(name)
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

// components reads SERVICE_TYPE: all (the built components), or a
// comma-separated list of component names or their aliases.
func (p *parser) components(name string, built []string) []string {
	isBuilt := map[string]bool{}
	for _, b := range built {
		isBuilt[b] = true
	}
	byWord := map[string]string{}
	for _, spec := range Components {
		byWord[spec.Name] = spec.Name
		for _, a := range spec.Aliases {
			byWord[a] = spec.Name
		}
	}
	seen := map[string]bool{}
	var out []string
	add := func(c string) {
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	for _, w := range strings.Split(strings.ToLower(p.str(name, "all")), ",") {
		w = strings.TrimSpace(w)
		c, known := byWord[w]
		switch {
		case w == "":
		case w == "all":
			for _, spec := range Components {
				if isBuilt[spec.Name] {
					add(spec.Name)
				}
			}
		case known && isBuilt[c]:
			add(c)
		case known:
			p.bad(name, fmt.Sprintf("component %q is not available in this build (available: %s)", w, strings.Join(built, ", ")))
		default:
			p.bad(name, fmt.Sprintf("unknown component %q (use all, or a list of %s)", w, strings.Join(built, ", ")))
		}
	}
	if len(out) == 0 && len(p.problems) == 0 {
		p.bad(name, "names no component")
	}
	// Start in the spec's order, whatever the order of the list.
	sort.SliceStable(out, func(i, j int) bool { return specIndex(out[i]) < specIndex(out[j]) })
	return out
}

func specIndex(name string) int {
	for i, s := range Components {
		if s.Name == name {
			return i
		}
	}
	return len(Components)
}

var providerSuffixes = []string{"_API_KEY", "_API_BASE", "_API_VERSION", "_ENABLED", "_REGION", "_PROJECT", "_LOCATION", "_RESPONSES_API"}

// isProviderSetting reports whether name is a <PROVIDER>_* setting.
func isProviderSetting(name string) bool {
	for _, suf := range providerSuffixes {
		if prefix, ok := strings.CutSuffix(name, suf); ok && prefix != "" && !reservedPrefix(prefix) {
			return true
		}
	}
	return false
}

func reservedPrefix(prefix string) bool {
	return prefix == "ADMIN" || prefix == "SVC" || prefix == "AWS" || strings.HasPrefix(prefix, "SVC_")
}

// suggest names the known setting closest to name, as " (did you mean X?)",
// or "" when none is close.
func (p *parser) suggest(name string) string {
	best, bestD := "", 3
	for known := range p.read {
		if d := distance(name, known); d < bestD {
			best, bestD = known, d
		}
	}
	if best == "" {
		return ""
	}
	return " (did you mean " + best + "?)"
}

// distance is the Levenshtein distance of a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// providers collects <PROVIDER>_* settings for every provider named in src.
// Names already read as svc's own settings (SEMANTIC_CACHE_ENABLED,
// AWS_DEFAULT_REGION) are not a provider's: it must run after them.
func (p *parser) providers() map[string]ProviderSettings {
	out := map[string]ProviderSettings{}
	for _, n := range p.src.Names() {
		if p.read[n] {
			continue
		}
		for _, suf := range providerSuffixes {
			prefix, ok := strings.CutSuffix(n, suf)
			if !ok || prefix == "" || reservedPrefix(prefix) {
				continue
			}
			name := strings.ToLower(prefix)
			ps := out[name]
			v, _ := p.lookup(n)
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
			case "_ENABLED", "_RESPONSES_API":
				b, err := parseBool(v)
				if err != nil {
					p.bad(n, fmt.Sprintf("must be true or false, got %q", v))
				}
				if suf == "_ENABLED" {
					ps.Enabled = &b
				} else {
					ps.ResponsesAPI = &b
				}
			}
			out[name] = ps
		}
	}
	return out
}
