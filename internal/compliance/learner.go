package compliance

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/svc-gateway/svc/internal/compliance/detect"
	"github.com/svc-gateway/svc/internal/compliance/model"
)

// Learner is the learning side of compliance: the intelligent scan (the
// risk model over the text and the detectors' findings), feedback that
// moves the model, and the reports on both.
type Learner struct {
	engine  *Engine
	model   *model.Model
	records *Records
	policy  *Policy
}

// NewLearner returns a learner over the engine (its detectors and the
// enterprise_standard policy's violations), the shared model and the scan
// records feedback looks scans up in.
func NewLearner(e *Engine, m *model.Model, r *Records) *Learner {
	return &Learner{engine: e, model: m, records: r, policy: Policies[DefaultPolicy]}
}

// Model is the learner's model.
func (l *Learner) Model() *model.Model { return l.model }

// Intelligent is the spec's ML scan result.
type Intelligent struct {
	ScanID            string      `json:"scan_id"`
	RiskScore         float64     `json:"risk_score"`
	RiskLevel         string      `json:"risk_level"`
	RecommendedAction string      `json:"recommended_action"`
	Violations        []Violation `json:"violations"`
	Explanation       string      `json:"explanation"`
	Factors           []Factor    `json:"factors"`
	ModelVersion      int64       `json:"model_version"`

	Level    Severity         `json:"-"`
	Action   Action           `json:"-"`
	Findings []detect.Finding `json:"-"`
	// Features are the scan's encoded features, for its record.
	Features []byte `json:"-"`
}

// Factor is one feature's share of a risk score.
type Factor struct {
	Feature string  `json:"feature"`
	Weight  float64 `json:"weight"`
}

// Risk thresholds of the intelligent scan: a score from FlagAt is flagged,
// from BlockAt blocked.
const (
	FlagAt  = model.Threshold
	BlockAt = 0.8
)

// LevelOf is a risk score's level: low under 0.3, medium under FlagAt,
// high under BlockAt, critical from it.
func LevelOf(score float64) (Severity, Action) {
	switch {
	case score >= BlockAt:
		return Critical, Block
	case score >= FlagAt:
		return High, Flag
	case score >= 0.3:
		return Medium, Allow
	}
	return Low, Allow
}

// Scan scores text (and, when given, the context it comes with: the text
// before it, a system prompt) with the model.
func (l *Learner) Scan(text, context string) Intelligent {
	fs := l.engine.Findings(text)
	judged := l.engine.Judge(text, fs, l.policy)
	scored, scoredFs := text, fs
	if context != "" {
		scored = context + "\n\n" + text
		scoredFs = append(l.engine.Findings(context), shift(fs, len(context)+2)...)
	}
	v := model.Featurize(scored, scoredFs)
	p, contribs := l.model.Score(v)
	level, act := LevelOf(p)
	out := Intelligent{RiskScore: Round3(p), RiskLevel: level.String(), RecommendedAction: act.String(),
		Violations: judged.Violations, Level: level, Action: act, Findings: fs, ModelVersion: l.model.Version(),
		Factors: make([]Factor, 0, len(contribs))}
	for _, c := range contribs {
		out.Factors = append(out.Factors, Factor{Feature: c.Feature, Weight: Round3(c.Weight)})
	}
	out.Explanation = explain(out, contribs)
	out.Features, _ = model.Encode(v)
	return out
}

// Features are text's features as a scan record keeps them (model.Encode
// of model.Featurize): what feedback teaches the model with, never the text.
func Features(text string, fs []detect.Finding) []byte {
	b, _ := model.Encode(model.Featurize(text, fs))
	return b
}

func shift(fs []detect.Finding, by int) []detect.Finding {
	out := make([]detect.Finding, len(fs))
	for i, f := range fs {
		f.Start += by
		f.End += by
		out[i] = f
	}
	return out
}

// explain says in words what drove the score.
func explain(r Intelligent, cs []model.Contribution) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Risk %.2f (%s): %s.", r.RiskScore, r.RiskLevel, map[Action]string{
		Allow: "allowed", Flag: "flagged for review", Block: "blocked",
	}[r.Action])
	var up, down []string
	for _, c := range cs {
		if c.Weight > 0 {
			up = append(up, c.String())
		} else if c.Weight < 0 {
			down = append(down, c.String())
		}
	}
	if len(up) > 0 {
		b.WriteString(" Raised by " + strings.Join(up, ", ") + ".")
	}
	if len(down) > 0 {
		b.WriteString(" Lowered by " + strings.Join(down, ", ") + ".")
	}
	if len(r.Violations) > 0 {
		types := make([]string, 0, len(r.Violations))
		for _, v := range r.Violations {
			types = append(types, v.Type)
		}
		b.WriteString(" Detectors found: " + strings.Join(types, ", ") + ".")
	}
	return b.String()
}

// Feedback is a reviewer's correction of one scan, in either of the spec's
// forms: an action (and risk level), or a false-positive verdict.
type Feedback struct {
	ScanID string
	UserID string
	// Action, when set, is the correct action (Flag and Block: risky).
	Action *Action
	// Level, when set without Action, decides alone (high, critical: risky).
	Level *Severity
	// FalsePositive, when set, says the scan's verdict was wrong (true:
	// clean) or right (false: risky).
	FalsePositive *bool
	Weight        float64
}

// ErrNoFeatures is Learn's error for a scan kept without its features.
var ErrNoFeatures = errors.New("compliance: the scan's features were not kept")

// Label is the feedback's verdict: 1 risky, 0 clean; false when it gives
// none.
func (f Feedback) Label() (float64, bool) {
	switch {
	case f.FalsePositive != nil:
		if *f.FalsePositive {
			return 0, true
		}
		return 1, true
	case f.Action != nil:
		if *f.Action >= Flag {
			return 1, true
		}
		return 0, true
	case f.Level != nil:
		if *f.Level >= High {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

// Learn applies f to the model: the scan's record (ErrScanNotFound when
// none) gives the features and the organisation.
func (l *Learner) Learn(ctx context.Context, f Feedback) (model.Applied, error) {
	label, ok := f.Label()
	if !ok {
		return model.Applied{}, fmt.Errorf("%w: no verdict", model.ErrInvalidFeedback)
	}
	rec, err := l.records.Get(ctx, f.ScanID)
	if err != nil {
		return model.Applied{}, err
	}
	if len(rec.Features) == 0 {
		return model.Applied{}, ErrNoFeatures
	}
	v, err := model.Decode(rec.Features)
	if err != nil {
		return model.Applied{}, fmt.Errorf("decode the features of %s: %w", f.ScanID, err)
	}
	predicted := rec.RiskScore
	if rec.Kind != "intelligent" {
		// A policy scan's verdict is its action: flagged or not.
		predicted = 0
		if rec.Action >= Flag {
			predicted = 1
		}
	}
	return l.model.Learn(ctx, model.Feedback{ScanID: f.ScanID, UserID: f.UserID, OrgID: rec.OrgID, Vector: v,
		Label: label, Predicted: predicted, Weight: f.Weight})
}
