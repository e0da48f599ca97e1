package verify

import "strings"

// direction tracks which words a text goes from and to: "from Revolut to
// Wise" is not "from Wise to Revolut", nor "convert USD to EUR" "convert EUR
// to USD", though both name the same things.
type direction struct {
	role    string // "from" or "to": the preposition just seen, waiting for its word
	lastKey string // the previous word if a content word: the source in "X to Y"
}

// determiners may stand between a preposition and its word ("to the Louvre").
var determiners = setOf("the a an my your our their his her its this that these those some")

// direct feeds a word to the direction tracker: its lowercase form, its key
// and whether it is a content word (one that may be a source or target).
func (x *extractor) direct(lower, key string, content bool) {
	d := &x.dir
	switch lower {
	case "from":
		d.role, d.lastKey = "from", ""
		return
	case "to", "into", "towards":
		if d.lastKey != "" {
			x.f.Roles = append(x.f.Roles, "from:"+d.lastKey)
		}
		d.role, d.lastKey = "to", ""
		return
	}
	if d.role != "" && determiners[lower] {
		return
	}
	if content {
		if d.role != "" {
			x.f.Roles = append(x.f.Roles, d.role+":"+key)
		}
		d.role, d.lastKey = "", key
		return
	}
	d.role, d.lastKey = "", ""
}

// rolesAgree reports whether no word goes from somewhere in one text and to
// somewhere in the other: for each word both give a role, the roles match.
func rolesAgree(a, b []string) bool {
	for _, ra := range a {
		_, key, _ := strings.Cut(ra, ":")
		var inA, inB []string
		for _, r := range a {
			if strings.HasSuffix(r, ":"+key) {
				inA = append(inA, r)
			}
		}
		for _, r := range b {
			if strings.HasSuffix(r, ":"+key) {
				inB = append(inB, r)
			}
		}
		if len(inB) > 0 && strings.Join(inA, " ") != strings.Join(inB, " ") {
			return false
		}
	}
	return true
}
