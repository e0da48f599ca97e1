package model

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/bits"
	"time"
	"unicode/utf8"

	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// ErrInvalidFeedback is wrapped by Learn's errors about its argument: the
// request was bad, not the service.
var ErrInvalidFeedback = errors.New("model: invalid feedback")

// ErrNoStore is Learn's error on a model made without a database.
var ErrNoStore = errors.New("model: no database: the model cannot learn")

// Bounds on a Feedback's identifiers, in bytes.
const (
	maxScanID = 128
	maxUserID = 256
	maxOrgID  = 256
)

// Per-user cap: a user's earlier events count against a new one when their
// features' SimHashes differ in at most nearDuplicateBits bits (near
// duplicates: the same text, give or take a few words); at most
// capLookback of the user's newest events are compared.
const (
	nearDuplicateBits = 10
	capLookback       = 1000
)

// Feedback is one reviewer's correction of one scan.
type Feedback struct {
	// ScanID identifies the scan; it decides holdout membership (Holdout).
	ScanID string
	// UserID is the reviewer; OrgID their organisation (may be empty).
	UserID, OrgID string
	// Vector is the scan's features (Featurize; or Decode of the stored
	// ones): the text itself is never stored.
	Vector Vector
	// Label is the correct answer: 1 risky, 0 clean (values between are
	// soft labels).
	Label float64
	// Predicted is the risk score the scan was given, 0–1: with Label it
	// tells a false positive (Label < 0.5 <= Predicted) for the status
	// reports.
	Predicted float64
	// Weight is the reviewer's weight, in (0, 1]; 0 means 1. The caller
	// decides it (for instance 1 for an administrator, 0.5 for others).
	Weight float64
}

// Applied is what Learn did.
type Applied struct {
	// Seq is the event's sequence number.
	Seq int64
	// Holdout reports that the event is kept for evaluation and was not
	// trained on.
	Holdout bool
	// Influence is the event's weight after the per-user cap: 0 when the
	// user's budget for this text is spent.
	Influence float64
	// Before and After are this replica's scores of the vector before and
	// after the event was applied (other replicas' concurrent events may
	// have been applied too).
	Before, After float64
	// Version is this replica's version afterwards; below Seq when the
	// local application failed (Run applies it later).
	Version int64
}

// Holdout reports whether feedback on scanID is kept as holdout: a fixed
// fifth of scan ids (FNV-1a of the id, modulo 5), never trained on, on
// which Stats measures the model.
func Holdout(scanID string) bool {
	h := fnv.New64a()
	h.Write([]byte(scanID))
	return h.Sum64()%5 == 0
}

// check validates fb and returns its reviewer weight.
func (fb *Feedback) check() (float64, error) {
	for _, f := range []struct {
		name, v  string
		max      int
		required bool
	}{{"scan_id", fb.ScanID, maxScanID, true}, {"user_id", fb.UserID, maxUserID, true}, {"org_id", fb.OrgID, maxOrgID, false}} {
		switch {
		case f.required && f.v == "":
			return 0, fmt.Errorf("%w: %s is empty", ErrInvalidFeedback, f.name)
		case len(f.v) > f.max:
			return 0, fmt.Errorf("%w: %s is longer than %d bytes", ErrInvalidFeedback, f.name, f.max)
		case !utf8.ValidString(f.v) || containsNUL(f.v):
			return 0, fmt.Errorf("%w: %s is not valid UTF-8 text", ErrInvalidFeedback, f.name)
		}
	}
	if !(fb.Label >= 0 && fb.Label <= 1) {
		return 0, fmt.Errorf("%w: label %v is not in [0, 1]", ErrInvalidFeedback, fb.Label)
	}
	if !(fb.Predicted >= 0 && fb.Predicted <= 1) {
		return 0, fmt.Errorf("%w: predicted %v is not in [0, 1]", ErrInvalidFeedback, fb.Predicted)
	}
	w := fb.Weight
	if w == 0 {
		w = 1
	}
	if !(w > 0 && w <= 1) {
		return 0, fmt.Errorf("%w: weight %v is not in (0, 1]", ErrInvalidFeedback, fb.Weight)
	}
	if err := fb.Vector.Check(); err != nil {
		return 0, fmt.Errorf("%w: %v", ErrInvalidFeedback, err)
	}
	return w, nil
}

func containsNUL(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == 0 {
			return true
		}
	}
	return false
}

// Learn records fb as a feedback event and applies it here; every other
// replica applies it on its next poll (Run).
//
// The event's influence is the reviewer's weight decayed and capped per
// user (per organisation and user id): the user's k-th earlier event on a near-duplicate text (SimHash of
// the features within nearDuplicateBits) gives weight/(1+k), and the
// influences of a user's near-duplicate events sum to at most UserBudget.
// One event moves its own text's logit by LearningRate × influence ×
// (label − score), so one user alone moves a text's logit by less than
// LearningRate × UserBudget (1.8 by default: a text scored 0.86 or more
// stays risky whatever one user says), while a few reviewers together move
// it further. Holdout events (Holdout) are stored but not trained on.
//
// The cap is computed in the inserting transaction, which holds the event
// log's lock, and stored with the event, so replicas replay it as is.
// Learn returns once the event is stored; if applying it here fails, it
// logs and returns the Applied (Version < Seq) with a nil error: Run
// applies it later. Errors about fb wrap ErrInvalidFeedback.
func (m *Model) Learn(ctx context.Context, fb Feedback) (Applied, error) {
	if m.db == nil {
		return Applied{}, ErrNoStore
	}
	weight, err := fb.check()
	if err != nil {
		return Applied{}, err
	}
	enc, err := Encode(fb.Vector)
	if err != nil {
		return Applied{}, fmt.Errorf("%w: %v", ErrInvalidFeedback, err)
	}
	x, err := Decode(enc) // what every replica will apply
	if err != nil {
		return Applied{}, fmt.Errorf("model: learn: %w", err)
	}
	a := Applied{Holdout: Holdout(fb.ScanID), Before: m.Predict(x)}
	sig := simHash(x)
	tx, err := m.db.Begin(ctx)
	if err != nil {
		return Applied{}, fmt.Errorf("model: learn: %w", err)
	}
	defer tx.Rollback() //nolint:errcheck // no-op after Commit
	if err := tx.QueryRow(ctx, `UPDATE compliance_model_head SET seq = seq + 1 WHERE id = 1 RETURNING seq`).Scan(&a.Seq); err != nil {
		return Applied{}, fmt.Errorf("model: learn: %w", err)
	}
	step := 0.0
	if !a.Holdout {
		if a.Influence, err = m.influence(ctx, tx, fb.OrgID, fb.UserID, sig, weight); err != nil {
			return Applied{}, fmt.Errorf("model: learn: %w", err)
		}
		step = float64(m.opts.LearningRate * a.Influence)
	}
	holdout := 0
	if a.Holdout {
		holdout = 1
	}
	if _, err := tx.Exec(ctx, `INSERT INTO compliance_model_events
		(seq, scan_id, user_id, org_id, label, predicted, weight, influence, step, holdout, sig, features, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		a.Seq, fb.ScanID, fb.UserID, fb.OrgID, fb.Label, fb.Predicted, weight, a.Influence, step, holdout,
		int64(sig), enc, sqlstore.Micros(time.Now())); err != nil {
		return Applied{}, fmt.Errorf("model: learn: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return Applied{}, fmt.Errorf("model: learn: %w", err)
	}
	if err := m.sync(ctx); err != nil {
		m.log.Warn("compliance model: feedback stored but not applied here yet", "seq", a.Seq, "err", err)
	}
	a.After, a.Version = m.Predict(x), m.Version()
	return a, nil
}

// influence is the capped weight of a new event of user (org, user) whose
// features have SimHash sig, read within the inserting transaction.
func (m *Model) influence(ctx context.Context, tx *sqlstore.Tx, org, user string, sig uint64, weight float64) (float64, error) {
	rows, err := tx.Query(ctx, `SELECT sig, influence FROM compliance_model_events
		WHERE org_id = ? AND user_id = ? AND holdout = 0 ORDER BY seq DESC LIMIT ?`, org, user, capLookback)
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	k, used := 0, 0.0
	for rows.Next() {
		var s int64
		var inf float64
		if err := rows.Scan(&s, &inf); err != nil {
			return 0, err
		}
		if bits.OnesCount64(uint64(s)^sig) <= nearDuplicateBits {
			k++
			used += inf
		}
	}
	if err := rows.Err(); err != nil {
		return 0, err
	}
	return min(weight/float64(1+k), max(0, m.opts.UserBudget-used)), nil
}

// simHash is the 64-bit SimHash of x: bit b is the sign of the sum of x's
// values, each counted positive or negative by bit b of its index's hash.
// Vectors at a small angle differ in few bits.
func simHash(x Vector) uint64 {
	var acc [64]float64
	for i, idx := range x.Idx {
		h := splitmix64(uint64(idx))
		v := float64(x.Val[i])
		for b := range acc {
			if h&(1<<b) != 0 {
				acc[b] += v
			} else {
				acc[b] -= v
			}
		}
	}
	var sig uint64
	for b, a := range acc {
		if a > 0 {
			sig |= 1 << b
		}
	}
	return sig
}

func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
