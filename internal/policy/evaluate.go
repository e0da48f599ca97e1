package policy

import (
	"context"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/cache/embed"
	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/compliance/detect"
	"github.com/svc-gateway/svc/internal/wordvec"
)

// ActionNone is a Decision's action when no policy matched.
const ActionNone Action = "none"

// TopicThreshold is the cosine similarity, under wordvec (the default topic
// embedder), from which a window of text matches a topic. It was chosen on the tune half of
// testdata/topics.jsonl (TestTopicThreshold reports both halves' figures).
const TopicThreshold = 0.54

// Violation types besides the detector types.
const (
	ViolationKeyword = "keyword"
	ViolationTopic   = "topic"
)

// Placeholder replaces a keyword or topic span in redacted text.
const Placeholder = "[REDACTED]"

// redactedType is the detect.Type whose placeholder is Placeholder.
const redactedType = detect.Matched

// Bounds of one evaluation.
const (
	// maxWindows bounds the windows of text matched against topics: the
	// text past them (about 150 KB of prose) is not matched by meaning.
	maxWindows = 1024
	// windowWords bounds the words of one window.
	windowWords = 40
	// maxCompiled bounds the compiled policies an Evaluator keeps.
	maxCompiled = 4096
)

// TopicEmbedder turns texts into unit-length vectors (wordvec.Embedder,
// embed.Local and every embed.Embedder are ones).
type TopicEmbedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// Target is who a request comes from and where it goes: what a policy's
// applicable_providers, applicable_models and metadata are matched with.
type Target struct {
	Provider    string
	Model       string
	SourceIP    netip.Addr // the zero Addr when unknown
	Groups      []string
	Departments []string
	Application string // the x-svc-application header
}

// Input is one evaluation: a text, its side, and the caller's policies.
type Input struct {
	Text string
	// Phase is the side Text is: ScopePrompt or ScopeAnswer (ScopeBoth
	// applies every policy).
	Phase Scope
	// Policies are the caller's active policies in preset order.
	Policies []Policy
	Target   Target
	// Findings are the engine's findings of Text (Engine.Findings), when
	// the caller already has them; Scanned says they were given (an empty
	// list then means none). Otherwise Evaluate scans Text itself, once,
	// if a policy names detectors.
	Findings []detect.Finding
	Scanned  bool
}

// Violation is one match of one policy.
type Violation struct {
	PolicyID   string `json:"policy_id"`
	PolicyName string `json:"policy_name"`
	// Type is the detector type ("SSN"), ViolationKeyword or
	// ViolationTopic.
	Type     string          `json:"type"`
	Severity string          `json:"severity"`
	Span     compliance.Span `json:"span"` // code points, end exclusive
	Action   Action          `json:"action"`
	// Score is the finding's confidence or the topic's similarity (1 for a
	// keyword).
	Score float64 `json:"score"`
	// Detail is the keyword or topic matched; empty for a detector (never
	// the value).
	Detail string `json:"detail,omitempty"`
	// Start and End are Span in bytes of the text.
	Start int `json:"-"`
	End   int `json:"-"`
}

// Decision is the outcome of an evaluation.
type Decision struct {
	// Action is the strongest action of the violations: block > redact >
	// flag > none.
	Action     Action      `json:"action"`
	Violations []Violation `json:"violations"`
	// BlockedBy is the first violation, in policy order, that blocks: the
	// one a 403 names.
	BlockedBy *Violation `json:"blocked_by,omitempty"`
	// Redacted is the text with the redacting policies' spans replaced
	// (typed placeholders, Placeholder for keywords and topics), set when
	// Action is redact.
	Redacted      string   `json:"redacted,omitempty"`
	RedactedTypes []string `json:"redacted_types,omitempty"`
	// Score is the compliance score, 0–1 (1: nothing found).
	Score float64 `json:"compliance_score"`
	// Frameworks are the regulatory frameworks of the policies applied.
	Frameworks      []string `json:"regulatory_frameworks"`
	PoliciesApplied int      `json:"policies_applied"`
	// Err is set when a check could not run (the topic embedder failed):
	// the decision is then incomplete and the caller applies
	// POLICY_FAIL_OPEN.
	Err error `json:"-"`
}

// Evaluator applies policies to texts. It is safe for concurrent use.
type Evaluator struct {
	engine    *compliance.Engine
	emb       TopicEmbedder
	threshold float64

	mu       sync.RWMutex
	compiled map[string]*compiled // by content
}

// compiled is a policy content's checks, ready to run.
type compiled struct {
	checks   Checks
	det      map[detect.Type]bool
	keywords []string // folded
	topics   [][]float32
}

// NewEvaluator returns an evaluator running engine's detectors and
// matching topics with emb (wordvec.New() when nil) from
// TopicThreshold. A nil engine finds no detector types.
func NewEvaluator(engine *compliance.Engine, emb TopicEmbedder) *Evaluator {
	if emb == nil {
		emb = wordvec.New()
	}
	return &Evaluator{engine: engine, emb: emb, threshold: TopicThreshold, compiled: map[string]*compiled{}}
}

// WithTopicThreshold sets the similarity from which a topic matches (for an
// embedder other than wordvec, whose scale differs); call it before
// the first Evaluate.
func (e *Evaluator) WithTopicThreshold(t float64) *Evaluator {
	e.threshold = t
	return e
}

// Checks returns what content compiles to (cached).
func (e *Evaluator) Checks(ctx context.Context, content string) (Checks, error) {
	c, err := e.compile(ctx, content)
	if c == nil {
		return Compile(content), err
	}
	return c.checks, err
}

// compile returns content's compiled checks, from the cache or compiled
// and stored; the topic vectors are embedded once. On an embedder error it
// returns the checks without topic vectors, uncached.
func (e *Evaluator) compile(ctx context.Context, content string) (*compiled, error) {
	e.mu.RLock()
	c := e.compiled[content]
	e.mu.RUnlock()
	if c != nil {
		return c, nil
	}
	ch := Compile(content)
	c = &compiled{checks: ch, det: map[detect.Type]bool{}}
	for _, t := range ch.Detectors {
		c.det[t] = true
	}
	for _, k := range ch.Keywords {
		c.keywords = append(c.keywords, fold(k))
	}
	if len(ch.Topics) > 0 {
		vs, err := e.emb.Embed(ctx, ch.Topics)
		if err == nil && len(vs) != len(ch.Topics) {
			err = errEmbedCount
		}
		if err != nil {
			return c, err
		}
		c.topics = vs
	}
	e.mu.Lock()
	if len(e.compiled) >= maxCompiled {
		clear(e.compiled) // policies change rarely: refill from the next calls
	}
	e.compiled[content] = c
	e.mu.Unlock()
	return c, nil
}

type evalError string

func (e evalError) Error() string { return string(e) }

const errEmbedCount evalError = "policy: the topic embedder returned a different number of vectors than texts"

// rank orders actions: none < flag < redact < block.
func rank(a Action) int {
	switch a {
	case ActionFlag:
		return 1
	case ActionRedact:
		return 2
	case ActionBlock:
		return 3
	}
	return 0
}

// severityWeight is how much one violation at full confidence takes from
// the compliance score (as the compliance engine weighs them).
func severityWeight(s string) float64 {
	switch strings.ToLower(s) {
	case "critical":
		return 0.9
	case "high":
		return 0.6
	case "low":
		return 0.1
	}
	return 0.3
}

// Evaluate applies in's policies to in.Text: each policy that applies to
// the target and the phase, in order, contributes its detector findings
// (from one scan shared by all), keyword hits and topic matches.
func (e *Evaluator) Evaluate(ctx context.Context, in Input) Decision {
	ev := evaluation{
		e:        e,
		text:     in.Text,
		findings: in.Findings,
		scanned:  in.Scanned,
		d:        Decision{Action: ActionNone, Score: 1, Violations: []Violation{}, Frameworks: []string{}},
	}
	for i := range in.Policies {
		p := &in.Policies[i]
		if !applies(p, in.Target) {
			continue
		}
		c, err := e.compile(ctx, p.Content)
		ev.fail(err)
		if !phaseMatches(c.checks.AppliesTo, in.Phase) {
			continue
		}
		ev.apply(ctx, p, c)
	}
	return ev.finish()
}

// evaluation is the state of one Evaluate call: the decision being built,
// the spans to redact, and what is computed of the text at most once, when
// the first policy needing it runs (the scan for detectors, the folded text
// for keywords, the embedded windows for topics).
type evaluation struct {
	e    *Evaluator
	text string
	d    Decision

	findings []detect.Finding // the engine's findings of text, once scanned
	scanned  bool
	folded   string // fold(text), once a policy has keywords

	windows     []span      // text's windows, once a policy has topics
	windowVecs  [][]float32 // their vectors (none when the embedder failed)
	topicsReady bool

	redactSpans []detect.Finding
}

// policyRun is one policy being applied: what its violations are stamped
// with.
type policyRun struct {
	p   *Policy
	c   *compiled
	act Action // the policy's action
	sev string // the policy's severity, medium when unset
}

// fail records err as the decision's error unless one is recorded already.
func (ev *evaluation) fail(err error) {
	if err != nil && ev.d.Err == nil {
		ev.d.Err = err
	}
}

// apply counts policy p (compiled to c) as applied, adds its violations
// (detectors, keywords, topics, in that order) and ranks them.
func (ev *evaluation) apply(ctx context.Context, p *Policy, c *compiled) {
	ev.d.PoliciesApplied++
	if f := strings.TrimSpace(p.RegulatoryFramework); f != "" && !slices.Contains(ev.d.Frameworks, f) {
		ev.d.Frameworks = append(ev.d.Frameworks, f)
	}
	r := policyRun{p: p, c: c, act: c.checks.Action, sev: p.Severity}
	if r.sev == "" {
		r.sev = "medium"
	}
	first := len(ev.d.Violations)
	if len(c.det) > 0 {
		ev.detectors(&r)
	}
	if len(c.keywords) > 0 {
		ev.keywords(&r)
	}
	if len(c.topics) > 0 {
		ev.topics(ctx, &r)
	}
	ev.rankFrom(first)
}

// add stamps v with r's policy, severity and (unless v has its own) action,
// appends it and takes its weight from the compliance score.
func (ev *evaluation) add(r *policyRun, v Violation) {
	v.PolicyID, v.PolicyName, v.Severity = r.p.ID, r.p.Name, r.sev
	if v.Action == "" {
		v.Action = r.act
	}
	ev.d.Violations = append(ev.d.Violations, v)
	ev.d.Score *= 1 - severityWeight(r.sev)*v.Score
}

// redactSpan marks the keyword or topic span s for redaction when r
// redacts.
func (ev *evaluation) redactSpan(r *policyRun, s span) {
	if r.act == ActionRedact {
		ev.redactSpans = append(ev.redactSpans, detect.Finding{Type: redactedType, Start: s.start, End: s.end, Score: 1})
	}
}

// scan sets the engine's findings of the text, once, unless the caller
// gave them.
func (ev *evaluation) scan() {
	if ev.scanned {
		return
	}
	if ev.e.engine != nil {
		ev.findings = ev.e.engine.Findings(ev.text)
	}
	ev.scanned = true
}

// detectors adds the findings of r's detector types from r's minimum
// score on. Under redact, an injection finding only flags (an instruction
// is no value to replace); the others are marked for redaction.
func (ev *evaluation) detectors(r *policyRun) {
	ev.scan()
	c := r.c
	for _, f := range ev.findings {
		if !c.det[f.Type] || f.Score < c.checks.MinScore || f.Start < 0 || f.End > len(ev.text) || f.Start >= f.End {
			continue
		}
		v := Violation{Type: string(f.Type), Score: round3(f.Score), Start: f.Start, End: f.End}
		if r.act == ActionRedact {
			if f.Type.Category() == detect.CategoryInjection {
				v.Action = ActionFlag
			} else {
				ev.redactSpans = append(ev.redactSpans, f)
			}
		}
		ev.add(r, v)
	}
}

// keywords adds r's keyword hits, on word boundaries, case-insensitively
// (on the text folded once).
func (ev *evaluation) keywords(r *policyRun) {
	if ev.folded == "" {
		ev.folded = fold(ev.text)
	}
	for j, k := range r.c.keywords {
		for _, s := range keywordHits(ev.folded, k) {
			ev.add(r, Violation{Type: ViolationKeyword, Score: 1, Detail: r.c.checks.Keywords[j], Start: s.start, End: s.end})
			ev.redactSpan(r, s)
		}
	}
}

// topics adds r's topics matched by meaning: each topic's nearest window,
// when as similar as the threshold.
func (ev *evaluation) topics(ctx context.Context, r *policyRun) {
	ev.embedWindows(ctx)
	for j, tv := range r.c.topics {
		at, best := nearest(tv, ev.windowVecs)
		if at >= 0 && float64(best) >= ev.e.threshold {
			w := ev.windows[at]
			ev.add(r, Violation{Type: ViolationTopic, Score: round3(float64(best)), Detail: r.c.checks.Topics[j], Start: w.start, End: w.end})
			ev.redactSpan(r, w)
		}
	}
}

// embedWindows splits the text into windows and embeds them, once. An
// embedder error is recorded and leaves no vectors: no topic matches then.
func (ev *evaluation) embedWindows(ctx context.Context) {
	if ev.topicsReady {
		return
	}
	ev.topicsReady = true
	ev.windows = splitWindows(ev.text)
	texts := make([]string, len(ev.windows))
	for j, w := range ev.windows {
		texts[j] = ev.text[w.start:w.end]
	}
	vs, err := ev.e.emb.Embed(ctx, texts)
	if err == nil && len(vs) != len(texts) {
		err = errEmbedCount
	}
	if err != nil {
		ev.fail(err)
		return
	}
	ev.windowVecs = vs
}

// nearest returns the index of the vector of vs most similar to v and its
// similarity; -1 when vs is empty.
func nearest(v []float32, vs [][]float32) (int, float32) {
	best, at := float32(-1), -1
	for k, w := range vs {
		if s := embed.Cosine(v, w); s > best {
			best, at = s, k
		}
	}
	return at, best
}

// rankFrom raises the decision's action to the strongest of the violations
// from index first on, and makes the first of them that blocks BlockedBy
// unless a violation blocked already.
func (ev *evaluation) rankFrom(first int) {
	for j := first; j < len(ev.d.Violations); j++ {
		v := ev.d.Violations[j]
		if rank(v.Action) > rank(ev.d.Action) {
			ev.d.Action = v.Action
		}
		if v.Action == ActionBlock && ev.d.BlockedBy == nil {
			ev.d.BlockedBy = &v
		}
	}
}

// finish returns the decision with code-point spans, a rounded score and,
// when it redacts, the redacted text and the placeholders' types.
func (ev *evaluation) finish() Decision {
	d := &ev.d
	codePointSpans(ev.text, d.Violations, d.BlockedBy)
	d.Score = round3(d.Score)
	if d.Action == ActionRedact {
		merged := mergeSpans(ev.redactSpans)
		d.Redacted = detect.Redact(ev.text, merged)
		for _, f := range merged {
			if t := string(f.Type); !slices.Contains(d.RedactedTypes, t) {
				d.RedactedTypes = append(d.RedactedTypes, t)
			}
		}
		slices.Sort(d.RedactedTypes)
	}
	return *d
}

// applies reports whether p targets t: its providers and models, and every
// targeting list of its metadata that is not empty.
func applies(p *Policy, t Target) bool {
	if !matchList(p.ApplicableProviders, func(s string) bool { return strings.EqualFold(s, t.Provider) }) {
		return false
	}
	if !matchList(p.ApplicableModels, func(s string) bool { return modelMatches(s, t.Model, t.Provider) }) {
		return false
	}
	m := &p.Metadata
	if len(m.SourceIPs) > 0 && !ipIn(t.SourceIP, m.SourceIPs) {
		return false
	}
	if len(m.ADGroups) > 0 && !intersects(m.ADGroups, t.Groups) {
		return false
	}
	if len(m.Departments) > 0 && !intersects(m.Departments, t.Departments) {
		return false
	}
	if len(m.Applications) > 0 && !intersects(m.Applications, []string{t.Application}) {
		return false
	}
	return true
}

// matchList: an empty list or one holding All matches anything.
func matchList(list []string, match func(string) bool) bool {
	if len(list) == 0 {
		return true
	}
	for _, s := range list {
		if strings.EqualFold(strings.TrimSpace(s), All) || match(strings.TrimSpace(s)) {
			return true
		}
	}
	return false
}

// modelMatches compares a policy's model with the request's, ignoring a
// provider prefix on either side ("gpt-4o" matches "openai/gpt-4o").
func modelMatches(want, model, provider string) bool {
	if model == "" {
		return false
	}
	if strings.EqualFold(want, model) {
		return true
	}
	w, m := strings.ToLower(want), strings.ToLower(model)
	if provider != "" && w == strings.ToLower(provider)+"/"+m {
		return true
	}
	return strings.HasSuffix(w, "/"+m) || strings.HasSuffix(m, "/"+w)
}

// ipIn reports whether addr is in one of the CIDRs or addresses of list
// (malformed entries match nothing).
func ipIn(addr netip.Addr, list []string) bool {
	if !addr.IsValid() {
		return false
	}
	addr = addr.Unmap()
	for _, s := range list {
		s = strings.TrimSpace(s)
		if pfx, err := netip.ParsePrefix(s); err == nil {
			if pfx.Masked().Contains(addr) || pfx.Addr().Is4In6() && netip.PrefixFrom(pfx.Addr().Unmap(), max(pfx.Bits()-96, 0)).Masked().Contains(addr) {
				return true
			}
			continue
		}
		if a, err := netip.ParseAddr(s); err == nil && a.Unmap() == addr {
			return true
		}
	}
	return false
}

func intersects(a, b []string) bool {
	for _, x := range a {
		for _, y := range b {
			if y != "" && strings.EqualFold(strings.TrimSpace(x), strings.TrimSpace(y)) {
				return true
			}
		}
	}
	return false
}

// phaseMatches reports whether a policy applying to scope runs on phase.
func phaseMatches(scope, phase Scope) bool {
	return scope == ScopeBoth || scope == "" || phase == ScopeBoth || phase == "" || scope == phase
}

type span struct{ start, end int }

// fold lower-cases s rune by rune, keeping every rune whose lower case has
// another length in UTF-8, so byte offsets into the result are offsets
// into s.
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s) // same length; no copy when already lower case
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if l := unicode.ToLower(r); r != utf8.RuneError && utf8.RuneLen(l) == n {
			b = utf8.AppendRune(b, l)
		} else {
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

// isWord reports whether r is part of a word.
func isWord(r rune) bool { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }

// keywordHits are the spans of k in text (both folded) that begin and end
// on word boundaries (where k's own edge is a word character).
func keywordHits(text, k string) []span {
	if k == "" {
		return nil
	}
	first, _ := utf8.DecodeRuneInString(k)
	last, _ := utf8.DecodeLastRuneInString(k)
	var out []span
	for at := 0; at <= len(text)-len(k); {
		i := strings.Index(text[at:], k)
		if i < 0 {
			break
		}
		s, e := at+i, at+i+len(k)
		before, _ := utf8.DecodeLastRuneInString(text[:s])
		after, _ := utf8.DecodeRuneInString(text[e:])
		if (!isWord(first) || s == 0 || !isWord(before)) && (!isWord(last) || e == len(text) || !isWord(after)) {
			out = append(out, span{s, e})
			at = e
			continue
		}
		_, n := utf8.DecodeRuneInString(text[s:])
		at = s + n
	}
	return out
}

// splitWindows cuts text into sentences (at . ! ? ; and line ends) of at
// most windowWords words; a sentence of fewer than three words joins the
// next. At most maxWindows windows.
func splitWindows(text string) []span {
	var out []span
	start, words, inWord := -1, 0, false
	flush := func(end int) {
		if start >= 0 && words > 0 {
			out = append(out, span{start, end})
		}
		start, words, inWord = -1, 0, false
	}
	for i, r := range text {
		if len(out) >= maxWindows {
			break
		}
		w := isWord(r)
		if w && start < 0 {
			start = i
		}
		if w && !inWord {
			words++
			if words > windowWords {
				flush(i)
				start, words = i, 1
			}
		}
		inWord = w
		switch r {
		case '.', '!', '?', ';', '\n':
			if words >= 3 || r == '\n' && words > 0 && nextBlank(text, i) {
				flush(i + 1)
			}
		}
	}
	if len(out) < maxWindows {
		flush(len(text))
	}
	return out
}

// nextBlank reports whether the line ending at i is followed by a blank
// line or the end of text (a paragraph ends).
func nextBlank(text string, i int) bool {
	rest := strings.TrimLeft(text[i+1:], " \t\r")
	return rest == "" || rest[0] == '\n'
}

// mergeSpans orders redaction spans and merges those that overlap into one
// (typed as the longest of them), so that no part of a value stays
// visible.
func mergeSpans(fs []detect.Finding) []detect.Finding {
	if len(fs) == 0 {
		return nil
	}
	slices.SortFunc(fs, func(a, b detect.Finding) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return b.End - a.End
	})
	out := []detect.Finding{fs[0]}
	longest := fs[0].End - fs[0].Start
	for _, f := range fs[1:] {
		last := &out[len(out)-1]
		if f.Start < last.End {
			if f.End-f.Start > longest {
				last.Type, longest = f.Type, f.End-f.Start
			}
			last.End = max(last.End, f.End)
			continue
		}
		out = append(out, f)
		longest = f.End - f.Start
	}
	return out
}

// codePointSpans sets each violation's Span from its byte offsets.
func codePointSpans(text string, vs []Violation, extra *Violation) {
	ascii := true
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	at := func(b int) int {
		if ascii {
			return b
		}
		return utf8.RuneCountInString(text[:b])
	}
	for i := range vs {
		vs[i].Span = compliance.Span{Start: at(vs[i].Start), End: at(vs[i].End)}
	}
	if extra != nil {
		extra.Span = compliance.Span{Start: at(extra.Start), End: at(extra.End)}
	}
}

func round3(f float64) float64 { return float64(int64(f*1000+0.5)) / 1000 }
