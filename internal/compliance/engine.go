package compliance

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/compliance/detect"
	"github.com/svc-gateway/svc/internal/compliance/injection"
	"github.com/svc-gateway/svc/internal/compliance/pii"
	"github.com/svc-gateway/svc/internal/compliance/secrets"
)

// Engine runs the detector families over content and applies a policy.
// It is safe for concurrent use and holds no per-scan state.
type Engine struct {
	detectors []detect.Detector
}

// MaxContext bounds the context an intelligent scan scores with its
// content.
const MaxContext = 64 << 10

// Names lists the engine's detectors.
func (e *Engine) Names() []string {
	out := make([]string, len(e.detectors))
	for i, d := range e.detectors {
		out[i] = d.Name()
	}
	return out
}

// New returns an engine over the given detectors (pii, secrets,
// injection).
func New(detectors ...detect.Detector) *Engine { return &Engine{detectors: detectors} }

// Findings runs every detector over text and returns the resolved findings
// (no two value findings overlap), sorted by start.
func (e *Engine) Findings(text string) []detect.Finding {
	var fs []detect.Finding
	for _, d := range e.detectors {
		fs = d.Detect(text, fs)
	}
	return detect.Resolve(fs, len(text))
}

// Span is a character range of the scanned content: offsets count Unicode
// code points (as Python's and Presidio's do), end exclusive.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// Violation is one finding a policy acts on.
type Violation struct {
	Type     string  `json:"type"`
	Severity string  `json:"severity"`
	Message  string  `json:"message"`
	Span     Span    `json:"span"`
	Score    float64 `json:"score"`
	Action   string  `json:"action"`
}

// Entity is one detected value: its type, span, confidence and a masked
// form — never the value itself.
type Entity struct {
	Type   string  `json:"type"`
	Start  int     `json:"start"`
	End    int     `json:"end"`
	Score  float64 `json:"score"`
	Masked string  `json:"masked"`
}

// Result is the spec's compliance scan result.
type Result struct {
	ScanID               string      `json:"scan_id"`
	Policy               string      `json:"policy"`
	HasViolations        bool        `json:"has_violations"`
	ComplianceScore      float64     `json:"compliance_score"`
	RiskLevel            string      `json:"risk_level"`
	RecommendedAction    string      `json:"recommended_action"`
	Violations           []Violation `json:"violations"`
	PIIDetected          []Entity    `json:"pii_detected"`
	RedactedContent      *string     `json:"redacted_content"`
	RegulatoryFrameworks []string    `json:"regulatory_frameworks"`

	// Findings are the resolved findings, byte offsets; for callers in
	// process (features, metrics), never encoded.
	Findings []detect.Finding `json:"-"`
	// Action and Level are RecommendedAction and RiskLevel as values.
	Action Action   `json:"-"`
	Level  Severity `json:"-"`
}

// Scan scans text under policy p.
func (e *Engine) Scan(text string, p *Policy) Result {
	return e.Judge(text, e.Findings(text), p)
}

// Judge applies policy p to findings already made on text (as Findings
// returns them).
func (e *Engine) Judge(text string, fs []detect.Finding, p *Policy) Result {
	res := Result{
		Policy: p.Name, ComplianceScore: 1, Findings: fs, Level: Low,
		Violations: []Violation{}, PIIDetected: []Entity{},
		RegulatoryFrameworks: p.Frameworks,
	}
	pos := newRunePos(text)
	worst := Severity(0)
	redact := false
	for _, f := range fs {
		r := p.rule(f.Type)
		span := Span{pos.at(f.Start), pos.at(f.End)}
		if f.Type.Category() != detect.CategoryInjection {
			redact = true
			res.PIIDetected = append(res.PIIDetected, Entity{
				Type: string(f.Type), Start: span.Start, End: span.End, Score: Round3(f.Score),
				Masked: Mask(f.Type, text[f.Start:f.End]),
			})
		}
		if f.Score < r.MinScore || r.Action == Allow {
			continue
		}
		res.Violations = append(res.Violations, Violation{
			Type: strings.ToLower(string(f.Type)), Severity: r.Severity.String(),
			Message: message(f, r), Span: span, Score: Round3(f.Score), Action: r.Action.String(),
		})
		res.ComplianceScore *= 1 - r.Severity.weight()*f.Score
		res.Action = max(res.Action, r.Action)
		worst = max(worst, r.Severity)
	}
	res.HasViolations = len(res.Violations) > 0
	if worst > 0 {
		res.Level = worst
	}
	res.ComplianceScore = Round3(res.ComplianceScore)
	res.RiskLevel, res.RecommendedAction = res.Level.String(), res.Action.String()
	if redact {
		s := detect.Redact(text, fs)
		res.RedactedContent = &s
	}
	return res
}

// message says what a violation is, without its value.
func message(f detect.Finding, r Rule) string {
	what := strings.ToLower(strings.ReplaceAll(string(f.Type), "_", " "))
	switch f.Type.Category() {
	case detect.CategorySecret:
		return fmt.Sprintf("%s detected (%s); %s", what, f.Rule, strings.ToLower(r.Action.String()))
	case detect.CategoryInjection:
		return fmt.Sprintf("%s attempt detected (%s); %s", what, f.Rule, strings.ToLower(r.Action.String()))
	}
	return fmt.Sprintf("%s detected; %s", what, strings.ToLower(r.Action.String()))
}

// Redacted is the answer of Redact.
type Redacted struct {
	Content  string   `json:"redacted_content"`
	Entities []Entity `json:"entities"`
}

// Redact replaces every PII and secret value of text by its typed
// placeholder.
func (e *Engine) Redact(text string) Redacted {
	fs := e.Findings(text)
	pos := newRunePos(text)
	out := Redacted{Content: detect.Redact(text, fs), Entities: []Entity{}}
	for _, f := range fs {
		if f.Type.Category() == detect.CategoryInjection {
			continue
		}
		out.Entities = append(out.Entities, Entity{
			Type: string(f.Type), Start: pos.at(f.Start), End: pos.at(f.End), Score: Round3(f.Score),
			Masked: Mask(f.Type, text[f.Start:f.End]),
		})
	}
	return out
}

// runePos turns increasing byte offsets into code-point offsets in one
// pass over the text.
type runePos struct {
	text        string
	byteAt, cps int
}

func newRunePos(text string) *runePos { return &runePos{text: text} }

// at is the code-point offset of byte offset b; offsets asked in
// decreasing order restart the count.
func (p *runePos) at(b int) int {
	if b < p.byteAt {
		p.byteAt, p.cps = 0, 0
	}
	p.cps += utf8.RuneCountInString(p.text[p.byteAt:b])
	p.byteAt = b
	return p.cps
}

// Round3 rounds a score to three decimals, as every answer shows it.
func Round3(f float64) float64 {
	return float64(int64(f*1000+0.5)) / 1000
}

// DefaultInjection is the engine's prompt-injection detector: the rules
// blended with the learned component, chosen on a public dev set and by a
// rule written down before its one measurement on the fresh held-out set
// (docs/benchmarks.md, issue 13: F1 0.394 against the rules' 0.357, 2 % of
// benign security-adjacent text flagged).
var DefaultInjection = injection.Detector{Learned: true}

// NewDefault returns the engine over the built-in detector families: PII,
// secrets (gitleaks' rules) and prompt injection (DefaultInjection).
func NewDefault() (*Engine, error) {
	sec, err := secrets.New()
	if err != nil {
		return nil, err
	}
	injection.Prepare()
	return New(pii.New(), sec, DefaultInjection), nil
}
