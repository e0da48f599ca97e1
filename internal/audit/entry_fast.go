package audit

import (
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// columnsFast decodes the columns of an entry as RecordFromJSON's decoder
// does, for the entries this version writes (Entry.AppendJSON): names in
// lower case, each once, no escapes, numbers where numbers go. It walks the
// entry once, reading the columns and checking the syntax of the rest, and
// answers ok=false, having decided nothing, for anything else (an escape
// anywhere, a name in another case or repeated, a null column, invalid
// UTF-8 in a column, a syntax error): RecordFromJSON then decodes with the
// general decoder, which gives the same answer for every entry this one
// takes (FuzzColumnsFast). About 40 % of the general decoder's time (see
// BenchmarkRecordFromJSON and docs/benchmarks.md): the in-process bridge
// decodes every entry it writes. The columns' strings
// share js's bytes rather than copying them (about 1 KB an entry less to
// allocate and collect), as the record's Entry shares js: RecordFromJSON's
// caller leaves js unchanged while the record lives.
func columnsFast(js []byte) (c columns, ok bool) {
	p := fastParser{s: unsafe.String(unsafe.SliceData(js), len(js))}
	p.space()
	ok = p.object(levelEntry, 0)
	p.space()
	return p.c, ok && p.i == len(p.s)
}

// fastParser walks a JSON text; a method answering false means "not
// decided here".
type fastParser struct {
	s string
	i int
	c columns // what is read (held here, not pointed to: no allocation)
	// seen marks the column names already read, to refuse a repeat.
	seen uint32
}

// maxFastDepth bounds the nesting of values the fast path skips.
const maxFastDepth = 32

// The objects the fast path reads fields of.
const (
	levelEntry = iota
	levelMetacache
	levelMetrics
	levelCustomMetrics
	levelSkip // any object inside a field that is no column
)

// columnNames are the names of the columns at every level, folded (see
// foldEqual): a name that is no column but folds to one of these is left
// to the general decoder.
var columnNames = []string{
	"requestid", "timestamp", "provider", "model", "tokensused", "cost", "latencyms", "userid",
	"conversationid", "status", "keyid", "metacache", "metrics", "hit", "tokenssaved", "costsaved",
	"prompttokens", "completiontokens", "success", "custommetrics", "apikey",
}

// foldEqual reports whether name equals folded, a lower-case name without
// '_' or '-', when name is compared as the general decoder compares names
// without regard to case: ASCII letters in either case, '_' and '-'
// ignored.
func foldEqual(name, folded string) bool {
	j := 0
	for i := 0; i < len(name); i++ {
		b := name[i]
		switch {
		case b == '_' || b == '-':
			continue
		case 'A' <= b && b <= 'Z':
			b += 'a' - 'A'
		}
		if j >= len(folded) || folded[j] != b {
			return false
		}
		j++
	}
	return j == len(folded)
}

// column marks column bit read, refusing a second time.
func (p *fastParser) column(bit uint32) bool {
	if p.seen&bit != 0 {
		return false
	}
	p.seen |= bit
	return true
}

// field reads the value of the field name of an object at level.
func (p *fastParser) field(level, depth int, name string) bool {
	switch level {
	case levelEntry:
		return p.entryField(name, depth)
	case levelMetacache:
		m := &p.c.Metacache
		switch name {
		case "hit":
			return p.column(1<<13) && p.bool(&m.Hit)
		case "tokens_saved":
			return p.column(1<<14) && p.int64(&m.TokensSaved)
		case "cost_saved":
			return p.column(1<<15) && p.float(&m.CostSaved)
		}
	case levelMetrics:
		m := &p.c.Metrics
		switch name {
		case "prompt_tokens":
			return p.column(1<<16) && p.int64(&m.PromptTokens)
		case "completion_tokens":
			return p.column(1<<17) && p.int64(&m.CompletionTokens)
		case "success":
			return p.column(1<<18) && p.bool(&m.Success)
		case "custom_metrics":
			return p.column(1<<19) && p.object(levelCustomMetrics, depth+1)
		}
	case levelCustomMetrics:
		if name == "api_key" {
			return p.column(1<<20) && p.str(&p.c.Metrics.CustomMetrics.APIKey)
		}
	default:
		return p.skip(depth + 1)
	}
	return p.other(name, depth)
}

// entryField reads the value of the entry's field name.
func (p *fastParser) entryField(name string, depth int) bool {
	c := &p.c
	switch name {
	case "request_id":
		return p.column(1<<0) && p.str(&c.RequestID)
	case "timestamp":
		return p.column(1<<1) && p.str(&c.Timestamp)
	case "provider":
		return p.column(1<<2) && p.str(&c.Provider)
	case "model":
		return p.column(1<<3) && p.str(&c.Model)
	case "tokens_used":
		return p.column(1<<4) && p.int64(&c.TokensUsed)
	case "cost":
		return p.column(1<<5) && p.float(&c.Cost)
	case "latency_ms":
		return p.column(1<<6) && p.int64(&c.LatencyMS)
	case "user_id":
		return p.column(1<<7) && p.str(&c.UserID)
	case "conversation_id":
		return p.column(1<<8) && p.str(&c.ConversationID)
	case "status":
		var v int64
		ok := p.column(1<<9) && p.int64(&v)
		c.Status = int(v)
		return ok
	case "key_id":
		return p.column(1<<10) && p.str(&c.KeyID)
	case "metacache":
		return p.column(1<<11) && p.object(levelMetacache, depth+1)
	case "metrics":
		return p.column(1<<12) && p.object(levelMetrics, depth+1)
	}
	return p.other(name, depth)
}

// other skips the value of a field that is no column, unless its name
// might match a column's without regard to case.
func (p *fastParser) other(name string, depth int) bool {
	switch name {
	case "model_provider", "processing_time_ms", "content_type", "conversation_stage",
		"routing_strategy", "routing_reason", "compliance_status", "compliance_violations",
		"query", "compliance", "total_tokens", "endpoint", "stream", "usage_estimated",
		"error_type", "error", "tool_call", "user":
		// Names AppendJSON writes that fold to no column's.
		return p.skip(depth + 1)
	}
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			// The general decoder folds Unicode too (ſ is s, K is k): a
			// non-ASCII name may match a column there.
			return false
		}
	}
	for _, col := range columnNames {
		if foldEqual(name, col) {
			return false
		}
	}
	return p.skip(depth + 1)
}

// space skips JSON white space.
func (p *fastParser) space() {
	for p.i < len(p.s) && p.s[p.i] <= ' ' {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// lit consumes b, after white space.
func (p *fastParser) lit(b byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == b {
		p.i++
		return true
	}
	return false
}

// object reads an object whose fields are read at level.
func (p *fastParser) object(level, depth int) bool {
	if depth > maxFastDepth || !p.lit('{') {
		return false
	}
	if p.lit('}') {
		return true
	}
	for {
		var name string
		if !p.str(&name) || !p.lit(':') || !p.field(level, depth, name) {
			return false
		}
		if p.lit('}') {
			return true
		}
		if !p.lit(',') {
			return false
		}
	}
}

// str reads a string without escapes, of valid UTF-8.
func (p *fastParser) str(v *string) bool {
	if !p.lit('"') {
		return false
	}
	end := strings.IndexByte(p.s[p.i:], '"')
	if end < 0 {
		return false
	}
	span := p.s[p.i : p.i+end]
	ascii := true
	for i := 0; i < len(span); i++ {
		if b := span[i]; b < 0x20 || b == '\\' {
			return false
		} else if b >= utf8.RuneSelf {
			ascii = false
		}
	}
	if !ascii && !utf8.ValidString(span) {
		return false
	}
	*v, p.i = span, p.i+end+1
	return true
}

// number consumes a JSON number and returns its text.
func (p *fastParser) number() (string, bool) {
	p.space()
	start := p.i
	if p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case p.digits() == 0:
		return "", false
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if p.digits() == 0 {
			return "", false
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if p.digits() == 0 {
			return "", false
		}
	}
	return p.s[start:p.i], true
}

// digits consumes decimal digits and returns how many.
func (p *fastParser) digits() int {
	start := p.i
	for p.i < len(p.s) && '0' <= p.s[p.i] && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i - start
}

// int64 reads an integer (no fraction, no exponent) that fits.
func (p *fastParser) int64(v *int64) bool {
	text, ok := p.number()
	if !ok {
		return false
	}
	n, err := strconv.ParseInt(text, 10, 64)
	*v = n
	return err == nil
}

// float reads a number that fits a float64.
func (p *fastParser) float(v *float64) bool {
	text, ok := p.number()
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(text, 64)
	*v = f
	return err == nil
}

// bool reads true or false.
func (p *fastParser) bool(v *bool) bool {
	p.space()
	switch {
	case strings.HasPrefix(p.s[p.i:], "true"):
		*v, p.i = true, p.i+4
	case strings.HasPrefix(p.s[p.i:], "false"):
		*v, p.i = false, p.i+5
	default:
		return false
	}
	return true
}

// skip consumes any value (strings without escapes), depth levels deep.
func (p *fastParser) skip(depth int) bool {
	if depth > maxFastDepth {
		return false
	}
	p.space()
	if p.i >= len(p.s) {
		return false
	}
	switch b := p.s[p.i]; {
	case b == '"':
		var s string
		return p.strAny(&s)
	case b == '{':
		return p.object(levelSkip, depth)
	case b == '[':
		return p.array(depth)
	case b == 't' || b == 'f':
		var v bool
		return p.bool(&v)
	case b == 'n':
		if strings.HasPrefix(p.s[p.i:], "null") {
			p.i += 4
			return true
		}
		return false
	}
	_, ok := p.number()
	return ok
}

// strAny reads a string without escapes, of any bytes but control
// characters (the general decoder takes invalid UTF-8 where it is not
// read).
func (p *fastParser) strAny(v *string) bool {
	if !p.lit('"') {
		return false
	}
	end := strings.IndexByte(p.s[p.i:], '"')
	if end < 0 {
		return false
	}
	for i := p.i; i < p.i+end; i++ {
		if b := p.s[i]; b == '\\' || b < 0x20 {
			return false
		}
	}
	*v, p.i = p.s[p.i:p.i+end], p.i+end+1
	return true
}

// array consumes an array of any values.
func (p *fastParser) array(depth int) bool {
	if !p.lit('[') {
		return false
	}
	if p.lit(']') {
		return true
	}
	for {
		if !p.skip(depth + 1) {
			return false
		}
		if p.lit(']') {
			return true
		}
		if !p.lit(',') {
			return false
		}
	}
}
