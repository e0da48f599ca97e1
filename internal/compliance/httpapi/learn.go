package httpapi

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/compliance/model"
)

// intelligentRequest is POST /v1/compliance/intelligent-scan's body.
type intelligentRequest struct {
	Content *string `json:"content"`
	UserID  string  `json:"user_id"`
	OrgID   string  `json:"org_id"`
	// Context is what the content comes with (a system prompt, the turns
	// before): a string, or any JSON value scored as its text.
	Context json.RawMessage `json:"context"`
}

func (a *API) learner() (*compliance.Learner, error) {
	if a.d.Learner == nil {
		return nil, apierr.New(apierr.Unavailable, "model_unavailable", "the risk model is not loaded in this process")
	}
	return a.d.Learner, nil
}

func (a *API) intelligentScan(w http.ResponseWriter, r *http.Request) error {
	var req intelligentRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	text, err := content(req.Content)
	if err != nil {
		return err
	}
	if err := checkIDs(req.UserID, req.OrgID); err != nil {
		return err
	}
	ctxText, err := contextText(req.Context)
	if err != nil {
		return err
	}
	l, err := a.learner()
	if err != nil {
		return err
	}
	start := time.Now()
	res := l.Scan(text, ctxText)
	res.ScanID = newScanID()
	a.observe("intelligent", start, res.Action, res.Level, compliance.Result{Findings: res.Findings})
	if a.d.Records != nil {
		a.d.Records.Add(compliance.ScanRecord{ScanID: res.ScanID, Kind: "intelligent", UserID: req.UserID,
			OrgID: orgOf(r.Context(), req.OrgID), Policy: "intelligent", Caller: callerOf(r.Context()), At: a.d.Now(),
			RiskScore: res.RiskScore, Level: res.Level, Action: res.Action, Types: violationTypes(res.Violations),
			Features: res.Features})
	}
	return writeJSON(w, http.StatusOK, res)
}

// contextText is the intelligent scan's context as text: a JSON string's
// value, any other JSON value's text, nothing for null.
func contextText(raw json.RawMessage) (string, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return "", nil
	}
	if s[0] == '"' {
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return "", apierr.BadParam("context", "context must be a string or a JSON value")
		}
		s = v
	}
	if len(s) > compliance.MaxContext {
		return "", apierr.Newf(apierr.TooLarge, "context_too_large", "context exceeds %d bytes", compliance.MaxContext)
	}
	return s, nil
}

// feedbackRequest is POST /v1/compliance/feedback's body, either form.
type feedbackRequest struct {
	ScanID           string  `json:"scan_id"`
	CorrectAction    *string `json:"correct_action"`
	CorrectRiskLevel *string `json:"correct_risk_level"`
	IsFalsePositive  *bool   `json:"is_false_positive"`
	UserID           string  `json:"user_id"`
	Notes            string  `json:"notes"`
}

// feedbackAnswer acknowledges feedback with what it did.
type feedbackAnswer struct {
	Success      bool    `json:"success"`
	ScanID       string  `json:"scan_id"`
	Label        string  `json:"label"`
	Holdout      bool    `json:"holdout"`
	Influence    float64 `json:"influence"`
	ScoreBefore  float64 `json:"score_before"`
	ScoreAfter   float64 `json:"score_after"`
	ModelVersion int64   `json:"model_version"`
	Message      string  `json:"message"`
}

func (a *API) feedback(w http.ResponseWriter, r *http.Request) error {
	var req feedbackRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	f, err := req.parse()
	if err != nil {
		return err
	}
	l, err := a.learner()
	if err != nil {
		return err
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	applied, err := l.Learn(ctx, f)
	switch {
	case errors.Is(err, compliance.ErrScanNotFound):
		return apierr.Newf(apierr.NotFound, "scan_not_found", "no scan %q (scans are kept %s)", req.ScanID, "for the scan retention")
	case errors.Is(err, compliance.ErrNoFeatures):
		return apierr.New(apierr.Conflict, "scan_not_learnable", "the scan's features were not kept; it cannot teach the model")
	case errors.Is(err, model.ErrInvalidFeedback):
		return apierr.Wrap(apierr.InvalidRequest, "invalid_feedback", "the feedback is not valid", err)
	case err != nil:
		return apierr.Wrap(apierr.Unavailable, "store_unavailable", "the feedback could not be stored", err)
	}
	label, _ := f.Label()
	ans := feedbackAnswer{Success: true, ScanID: f.ScanID, Label: map[bool]string{true: "risky", false: "clean"}[label >= 0.5],
		Holdout: applied.Holdout, Influence: compliance.Round3(applied.Influence), ScoreBefore: compliance.Round3(applied.Before),
		ScoreAfter: compliance.Round3(applied.After), ModelVersion: applied.Version}
	switch {
	case applied.Holdout:
		ans.Message = "recorded for evaluation (this scan is in the holdout share, never trained on)"
	case applied.Influence == 0:
		ans.Message = "recorded; this reviewer's influence on this content is used up, so the model did not move"
	default:
		ans.Message = "recorded and applied to the model"
	}
	return writeJSON(w, http.StatusOK, ans)
}

// parse validates the body into the learner's Feedback.
func (req feedbackRequest) parse() (compliance.Feedback, error) {
	f := compliance.Feedback{ScanID: req.ScanID, UserID: req.UserID, FalsePositive: req.IsFalsePositive, Weight: 1}
	if req.ScanID == "" {
		return f, apierr.BadParam("scan_id", "scan_id is required")
	}
	if err := ident("scan_id", req.ScanID); err != nil {
		return f, err
	}
	if err := ident("user_id", req.UserID); err != nil {
		return f, err
	}
	if len(req.Notes) > 16<<10 {
		return f, apierr.BadParam("notes", "notes must be at most %d bytes", 16<<10)
	}
	if req.CorrectAction != nil {
		act, ok := compliance.ParseAction(*req.CorrectAction)
		if !ok {
			return f, apierr.BadParam("correct_action", "correct_action must be Allow, Flag or Block")
		}
		f.Action = &act
	}
	if req.CorrectRiskLevel != nil {
		lvl, ok := compliance.ParseRiskLevel(*req.CorrectRiskLevel)
		if !ok {
			return f, apierr.BadParam("correct_risk_level", "correct_risk_level must be low, medium, high or critical")
		}
		f.Level = &lvl
	}
	if f.Action == nil && f.FalsePositive == nil && f.Level == nil {
		return f, apierr.BadParam("correct_action", "give correct_action (and correct_risk_level), or is_false_positive")
	}
	if f.UserID == "" {
		f.UserID = "admin"
	}
	return f, nil
}

func (a *API) learningStatus(w http.ResponseWriter, r *http.Request) error {
	user := r.PathValue("user_id")
	if err := ident("user_id", user); err != nil {
		return err
	}
	l, err := a.learner()
	if err != nil {
		return err
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	st, err := l.Model().UserStatus(ctx, user)
	if err != nil {
		return apierr.Wrap(apierr.Unavailable, "store_unavailable", "the learning status could not be read", err)
	}
	return writeJSON(w, http.StatusOK, map[string]any{
		"user_id": user, "feedback_count": st.Feedback, "false_positives": st.FalsePositives,
		"false_positive_rate": compliance.Round3(st.FalsePositiveRate), "last_update": timeOrNil(st.LastUpdate),
	})
}

func (a *API) learningSummary(w http.ResponseWriter, r *http.Request) error {
	l, err := a.learner()
	if err != nil {
		return err
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	s, err := l.Model().Summary(ctx)
	if err != nil {
		return apierr.Wrap(apierr.Unavailable, "store_unavailable", "the learning summary could not be read", err)
	}
	orgs := make([]map[string]any, 0, len(s.Orgs))
	for _, o := range s.Orgs {
		orgs = append(orgs, map[string]any{"org_id": o.OrgID, "feedback_count": o.Feedback, "users": o.Users,
			"false_positives": o.FalsePositives, "false_positive_rate": compliance.Round3(o.FalsePositiveRate), "last_update": timeOrNil(o.LastUpdate)})
	}
	return writeJSON(w, http.StatusOK, map[string]any{
		"total_feedback": s.Feedback, "users": s.Users, "false_positives": s.FalsePositives,
		"false_positive_rate": compliance.Round3(s.FalsePositiveRate), "last_update": timeOrNil(s.LastUpdate),
		"model_version": s.Version, "model_updated_at": timeOrNil(s.UpdatedAt), "organizations": orgs,
	})
}

func (a *API) mlStats(w http.ResponseWriter, r *http.Request) error {
	l, err := a.learner()
	if err != nil {
		return err
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	s, err := l.Model().Stats(ctx)
	if err != nil {
		return apierr.Wrap(apierr.Unavailable, "store_unavailable", "the model statistics could not be read", err)
	}
	return writeJSON(w, http.StatusOK, map[string]any{
		"model_version": s.Version, "updated_at": timeOrNil(s.UpdatedAt),
		"accuracy": compliance.Round3(s.Builtin.Accuracy), "precision": compliance.Round3(s.Builtin.Precision),
		"recall": compliance.Round3(s.Builtin.Recall), "f1": compliance.Round3(s.Builtin.F1),
		"builtin_heldout":  metricsJSON(s.Builtin),
		"feedback_holdout": metricsJSON(s.Feedback),
		"training_data": map[string]any{"rows": s.TrainingRows, "risky": s.TrainingRisky, "heldout_rows": s.HeldoutRows,
			"data_sha256": s.DataHash, "base": s.Base},
		"feedback":  map[string]any{"events": s.FeedbackEvents, "trained": s.TrainedEvents, "holdout": s.HoldoutEvents},
		"threshold": model.Threshold,
	})
}

func (a *API) intelligentHealth(w http.ResponseWriter, r *http.Request) error {
	if a.d.Learner == nil {
		return writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "model_loaded": false})
	}
	m := a.d.Learner.Model()
	return writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "model_loaded": true,
		"model_version": m.Version(), "policies": compliance.PolicyNames(), "detectors": a.d.Engine.Names()})
}

func metricsJSON(m model.Metrics) map[string]any {
	return map[string]any{"rows": m.N, "accuracy": compliance.Round3(m.Accuracy), "precision": compliance.Round3(m.Precision),
		"recall": compliance.Round3(m.Recall), "f1": compliance.Round3(m.F1), "tp": m.TP, "fp": m.FP, "tn": m.TN, "fn": m.FN}
}

func timeOrNil(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UTC()
}
