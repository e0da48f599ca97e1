package model

import (
	"context"
	"fmt"
	"time"

	"github.com/svc-gateway/svc/internal/compliance/portable"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// Metrics are a classifier's counts and rates at Threshold on a labelled
// set (risky = positive). Rates with a zero denominator are 0.
type Metrics struct {
	N, TP, FP, TN, FN               int
	Accuracy, Precision, Recall, F1 float64
}

// confusion counts predictions against labels.
type confusion struct{ tp, fp, tn, fn int }

func (c *confusion) add(predicted, actual bool) {
	switch {
	case predicted && actual:
		c.tp++
	case predicted:
		c.fp++
	case actual:
		c.fn++
	default:
		c.tn++
	}
}

func (c confusion) metrics() Metrics {
	m := Metrics{N: c.tp + c.fp + c.tn + c.fn, TP: c.tp, FP: c.fp, TN: c.tn, FN: c.fn}
	m.Accuracy = ratio(c.tp+c.tn, m.N)
	m.Precision = ratio(c.tp, c.tp+c.fp)
	m.Recall = ratio(c.tp, c.tp+c.fn)
	if m.Precision+m.Recall > 0 {
		m.F1 = 2 * m.Precision * m.Recall / (m.Precision + m.Recall)
	}
	return m
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Stats describes the model for GET /v1/compliance/ml/stats.
type Stats struct {
	// Version is the last feedback event applied here; UpdatedAt that
	// event's time (zero when none).
	Version   int64
	UpdatedAt time.Time
	// Base identifies the build-time weights; DataHash is the SHA-256 (hex)
	// of the labelled data they were trained on.
	Base, DataHash string
	// TrainingRows, TrainingRisky count the build-time training rows (and
	// the risky ones); HeldoutRows the built-in held-out rows.
	TrainingRows, TrainingRisky, HeldoutRows int
	// Builtin is the current weights' quality on the built-in held-out
	// split (computed now: feedback may have moved it since the build).
	Builtin Metrics
	// Feedback is the current weights' quality on the newest HoldoutEval
	// feedback holdout events (those never trained on), the reviewer's
	// label as the truth.
	Feedback Metrics
	// FeedbackEvents counts all feedback events; TrainedEvents those trained
	// on with a non-zero influence; HoldoutEvents the holdout ones.
	FeedbackEvents, TrainedEvents, HoldoutEvents int64
}

// Stats measures the current weights on the built-in held-out split and on
// the feedback holdout, and counts the feedback.
func (m *Model) Stats(ctx context.Context) (Stats, error) {
	st := m.cur.Load()
	b := m.base
	s := Stats{
		Version: st.version, UpdatedAt: st.updated,
		Base: b.id, DataHash: fmt.Sprintf("%x", b.file.dataHash),
		TrainingRows: int(b.file.rows), TrainingRisky: int(b.file.risky), HeldoutRows: len(b.heldout),
		Builtin: m.builtinMetrics(st),
	}
	if m.db == nil {
		return s, nil
	}
	if err := m.db.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(CASE WHEN step > 0 THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(holdout), 0) FROM compliance_model_events`).Scan(&s.FeedbackEvents, &s.TrainedEvents, &s.HoldoutEvents); err != nil {
		return Stats{}, fmt.Errorf("model: stats: %w", err)
	}
	rows, err := m.db.Query(ctx, `SELECT label, features FROM compliance_model_events
		WHERE holdout = 1 AND features IS NOT NULL ORDER BY seq DESC LIMIT ?`, m.opts.HoldoutEval)
	if err != nil {
		return Stats{}, fmt.Errorf("model: stats: %w", err)
	}
	defer rows.Close()
	var c confusion
	var v Vector
	for rows.Next() {
		var label float64
		var features []byte
		if err := rows.Scan(&label, &features); err != nil {
			return Stats{}, fmt.Errorf("model: stats: %w", err)
		}
		if decodeInto(&v, features) != nil {
			continue
		}
		c.add(portable.Sigmoid(logit(st.w, v)) >= Threshold, label >= Threshold)
	}
	if err := rows.Err(); err != nil {
		return Stats{}, fmt.Errorf("model: stats: %w", err)
	}
	s.Feedback = c.metrics()
	return s, nil
}

// UserStatus is one reviewer's feedback, for
// GET /v1/compliance/learning/status/{user_id}.
type UserStatus struct {
	UserID string
	// Feedback counts the user's events (every organisation);
	// FalsePositives those that marked a false positive (label < 0.5 on a
	// scan scored >= 0.5), FalsePositiveRate their share.
	Feedback, FalsePositives int64
	FalsePositiveRate        float64
	// LastUpdate is the time of the user's newest event (zero: none).
	LastUpdate time.Time
}

// fpCase counts an event that marked a false positive.
const fpCase = `CASE WHEN label < 0.5 AND predicted >= 0.5 THEN 1 ELSE 0 END`

// UserStatus reports userID's feedback.
func (m *Model) UserStatus(ctx context.Context, userID string) (UserStatus, error) {
	u := UserStatus{UserID: userID}
	if m.db == nil {
		return u, nil
	}
	var last int64
	if err := m.db.QueryRow(ctx, `SELECT COUNT(*), COALESCE(SUM(`+fpCase+`), 0), COALESCE(MAX(created_at), 0)
		FROM compliance_model_events WHERE user_id = ?`, userID).Scan(&u.Feedback, &u.FalsePositives, &last); err != nil {
		return UserStatus{}, fmt.Errorf("model: user status: %w", err)
	}
	u.FalsePositiveRate = ratio(int(u.FalsePositives), int(u.Feedback))
	if last != 0 {
		u.LastUpdate = sqlstore.FromMicros(last)
	}
	return u, nil
}

// OrgSummary is one organisation's share of the feedback.
type OrgSummary struct {
	OrgID                    string
	Feedback, FalsePositives int64
	Users                    int64
	FalsePositiveRate        float64
	LastUpdate               time.Time
}

// Summary is the organisation-wide learning summary, for
// GET /v1/compliance/learning/summary.
type Summary struct {
	// Feedback counts all events, Users the distinct reviewers,
	// FalsePositives the events that marked a false positive.
	Feedback, Users, FalsePositives int64
	FalsePositiveRate               float64
	// LastUpdate is the newest event's time (zero: none).
	LastUpdate time.Time
	// Version is the model version applied here, UpdatedAt its event's time.
	Version   int64
	UpdatedAt time.Time
	// Orgs are the maxSummaryOrgs organisations with the most feedback,
	// most first (the organisation "" holds feedback without one).
	Orgs []OrgSummary
}

// maxSummaryOrgs bounds Summary.Orgs.
const maxSummaryOrgs = 100

// Summary reports the feedback of every user and organisation.
func (m *Model) Summary(ctx context.Context) (Summary, error) {
	st := m.cur.Load()
	s := Summary{Version: st.version, UpdatedAt: st.updated}
	if m.db == nil {
		return s, nil
	}
	var last int64
	if err := m.db.QueryRow(ctx, `SELECT COUNT(*), COUNT(DISTINCT user_id), COALESCE(SUM(`+fpCase+`), 0),
		COALESCE(MAX(created_at), 0) FROM compliance_model_events`).Scan(&s.Feedback, &s.Users, &s.FalsePositives, &last); err != nil {
		return Summary{}, fmt.Errorf("model: summary: %w", err)
	}
	s.FalsePositiveRate = ratio(int(s.FalsePositives), int(s.Feedback))
	if last != 0 {
		s.LastUpdate = sqlstore.FromMicros(last)
	}
	rows, err := m.db.Query(ctx, `SELECT org_id, COUNT(*), COUNT(DISTINCT user_id), COALESCE(SUM(`+fpCase+`), 0), MAX(created_at)
		FROM compliance_model_events GROUP BY org_id ORDER BY COUNT(*) DESC, org_id LIMIT ?`, maxSummaryOrgs)
	if err != nil {
		return Summary{}, fmt.Errorf("model: summary: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var o OrgSummary
		if err := rows.Scan(&o.OrgID, &o.Feedback, &o.Users, &o.FalsePositives, &last); err != nil {
			return Summary{}, fmt.Errorf("model: summary: %w", err)
		}
		o.FalsePositiveRate = ratio(int(o.FalsePositives), int(o.Feedback))
		o.LastUpdate = sqlstore.FromMicros(last)
		s.Orgs = append(s.Orgs, o)
	}
	if err := rows.Err(); err != nil {
		return Summary{}, fmt.Errorf("model: summary: %w", err)
	}
	return s, nil
}
