package model

import (
	"context"
	"crypto/sha256"
	"database/sql"
	_ "embed" // the build-time weights
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/compliance/portable"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

//go:generate go run ./gen -data ../quality/testdata -out .

// The initial weights and the held-out set's vectors, written by go
// generate (package gen) from the labelled sets.
var (
	//go:embed weights.bin
	embeddedWeights []byte
	//go:embed heldout.bin
	embeddedHeldout []byte
)

// Embedded returns the embedded weights.bin and heldout.bin, for the test
// that keeps them what training gives today (it lives where the detectors
// they were trained with may be imported).
func Embedded() (weights, heldout []byte) { return embeddedWeights, embeddedHeldout }

// Threshold is the score at and above which a text counts as risky in the
// metrics and the false-positive rates. Policies may pick other cut-offs
// for their risk levels.
const Threshold = 0.5

// Options tunes a Model. The zero value gives the defaults.
type Options struct {
	// PollInterval is how often Run looks for other replicas' feedback.
	// Default 250 ms.
	PollInterval time.Duration
	// SnapshotEvery is how many events apart snapshots are written.
	// Default 200.
	SnapshotEvery int64
	// LearningRate scales a feedback event's step: one event of influence 1
	// moves its own text's logit by LearningRate × (label − score). It is
	// stored with each event (as its step), so replicas with other options
	// still converge. Default 1.2.
	LearningRate float64
	// UserBudget caps one user's total influence over near-duplicate texts
	// (see Learn). Default 1.5.
	UserBudget float64
	// FeatureKeep is how many of the newest events keep their features
	// whatever the snapshots (see the package documentation). Default
	// 10,000.
	FeatureKeep int64
	// HoldoutEval is how many of the newest feedback holdout events Stats
	// evaluates on. Default 1,000.
	HoldoutEval int
	// Explain is how many features Score names. Default 5, at most 32.
	Explain int
	// Logger receives warnings (a failed poll or snapshot). Default
	// slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.PollInterval <= 0 {
		o.PollInterval = 250 * time.Millisecond
	}
	if o.SnapshotEvery <= 0 {
		o.SnapshotEvery = 200
	}
	if !(o.LearningRate > 0) || o.LearningRate > 10 {
		o.LearningRate = 1.2
	}
	if !(o.UserBudget > 0) || o.UserBudget > 100 {
		o.UserBudget = 1.5
	}
	if o.FeatureKeep <= 0 {
		o.FeatureKeep = 10_000
	}
	if o.HoldoutEval <= 0 {
		o.HoldoutEval = 1000
	}
	if o.Explain <= 0 {
		o.Explain = 5
	}
	o.Explain = min(o.Explain, 32)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// snapshotsKept is how many snapshots of the current initial weights are
// kept; otherBaseTTL how long snapshots of other initial weights (an older
// or newer release's) are.
const (
	snapshotsKept = 3
	otherBaseTTL  = 24 * time.Hour
	syncBatch     = 256
)

// Model is the live, shared risk model: the build-time weights plus every
// feedback event in SQL, applied in order. Score and Predict read an
// immutable snapshot of the weights through an atomic pointer and never
// wait for an update; Learn and Run apply events to a copy and swap it in.
// All methods are safe for concurrent use.
type Model struct {
	db   *sqlstore.DB
	opts Options
	log  *slog.Logger
	base *base
	cur  atomic.Pointer[state]

	builtin atomic.Pointer[builtinMetrics] // the last state's built-in metrics

	mu     sync.Mutex // serialises appliers; guards buf and pruned
	buf    Vector     // decode buffer
	pruned int64      // events up to here have had their features pruned
}

// state is one immutable version of the weights.
type state struct {
	w       []float32 // Dim+1, bias last; never modified once stored
	version int64     // the last event applied
	updated time.Time // that event's time; zero when none
}

// base is the decoded build-time model.
type base struct {
	id      string // hex of the weights payload's SHA-256, first 8 bytes
	file    *weightsFile
	heldout []example // text and findings; featurized when measured
}

// builtinMetrics caches the metrics of one state on the built-in held-out
// rows.
type builtinMetrics struct {
	st *state
	m  Metrics
}

// builtinMetrics returns st's metrics on the built-in held-out rows,
// featurizing them (a few tens of milliseconds for two thousand rows) unless
// st was measured last time.
func (m *Model) builtinMetrics(st *state) Metrics {
	if c := m.builtin.Load(); c != nil && c.st == st {
		return c.m
	}
	bm := evaluateRows(st.w, m.base.heldout)
	m.builtin.Store(&builtinMetrics{st: st, m: bm})
	return bm
}

var loadBase = sync.OnceValues(func() (*base, error) {
	f, err := decodeWeights(embeddedWeights)
	if err != nil {
		return nil, fmt.Errorf("model: embedded weights: %w", err)
	}
	hash, held, err := decodeHeldout(embeddedHeldout)
	if err != nil {
		return nil, fmt.Errorf("model: embedded held-out set: %w", err)
	}
	if hash != f.dataHash {
		return nil, errors.New("model: embedded held-out set and weights come from different data: run go generate")
	}
	sum := sha256.Sum256(f.payloadBytes)
	f.payloadBytes = nil
	return &base{id: hex.EncodeToString(sum[:8]), file: f, heldout: held}, nil
})

// New returns the model: the embedded initial weights, then, when db is not
// nil, the newest snapshot in SQL taken from the same initial weights and
// every feedback event after it. With a nil db the model only scores (Learn
// fails). Call Run to follow other replicas' feedback.
func New(ctx context.Context, db *sqlstore.DB, opts Options) (*Model, error) {
	b, err := loadBase()
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	m := &Model{db: db, opts: opts, log: opts.Logger, base: b}
	m.cur.Store(&state{w: b.file.w})
	if db == nil {
		return m, nil
	}
	if err := m.loadSnapshot(ctx); err != nil {
		return nil, err
	}
	if err := m.sync(ctx); err != nil {
		return nil, err
	}
	return m, nil
}

// Version is the last feedback event applied here (0: none).
func (m *Model) Version() int64 { return m.cur.Load().version }

// Contribution is one feature's share of a score.
type Contribution struct {
	// Feature names it: `word "ignore previous"` (a word or word pair),
	// `chars "gnor"` (a character n-gram), `findings SSN` (the count of a
	// finding type), `max score secret` (a category's highest finding
	// score), or `feature #i` when the text is not at hand.
	Feature string
	// Weight is its term of the logit (weight × value): positive pushes
	// towards risky.
	Weight float64
}

// String is the contribution in words: `word "ignore previous" +1.20`.
func (c Contribution) String() string {
	return c.Feature + " " + signed(c.Weight)
}

func signed(x float64) string {
	s := strconv.FormatFloat(x, 'f', 2, 64)
	if x >= 0 {
		return "+" + s
	}
	return s
}

// Predict is v's risk score, 0–1, under the current weights.
func (m *Model) Predict(v Vector) float64 {
	return portable.Sigmoid(logit(m.cur.Load().w, v))
}

// Score is v's risk score, 0–1, under the current weights, and the features
// that drove it most (by absolute share of the logit, largest first, at
// most Options.Explain). A Vector straight from Featurize has its n-grams
// named; a decoded one has not.
func (m *Model) Score(v Vector) (float64, []Contribution) {
	w := m.cur.Load().w
	type term struct {
		idx uint32
		c   float64
	}
	var top [32]term
	k, n := m.opts.Explain, 0
	z := float64(w[Dim])
	for i, idx := range v.Idx {
		c := float64(w[idx]) * float64(v.Val[i])
		z += c
		if c == 0 || (n == k && math.Abs(c) <= math.Abs(top[n-1].c)) {
			continue
		}
		j := min(n, k-1)
		for j > 0 && math.Abs(top[j-1].c) < math.Abs(c) {
			top[j] = top[j-1]
			j--
		}
		top[j] = term{idx, c}
		n = min(n+1, k)
	}
	if n == 0 {
		return portable.Sigmoid(z), nil
	}
	idx := make([]uint32, n)
	for i := range n {
		idx[i] = top[i].idx
	}
	names := featureNames(v, idx)
	out := make([]Contribution, n)
	for i := range n {
		out[i] = Contribution{Feature: names[i], Weight: top[i].c}
	}
	return portable.Sigmoid(z), out
}

// denseScale is how much of a feedback step goes to the detector features
// relative to the n-grams: feedback mostly corrects what is particular to
// the text, and moves the weight of a finding type, which every text with
// such a finding shares, ten times slower.
const denseScale = 0.1

// apply moves w by one feedback event: a normalised logistic step, sized so
// that x's own logit moves by step × (y − p), spread over x's features in
// proportion to their values (detector features scaled by denseScale).
// Every product is rounded before it is added: replicas compute the same
// bits.
func apply(w []float32, x Vector, y, step float64) {
	p := portable.Sigmoid(logit(w, x))
	n2 := 0.0
	for i, idx := range x.Idx {
		v := float64(x.Val[i])
		if idx >= HashedDim {
			n2 += float64(denseScale * float64(v*v))
		} else {
			n2 += v * v // exact: a float32 squared
		}
	}
	if n2 == 0 {
		return
	}
	g := float64(float64(step*(y-p)) / n2)
	for i, idx := range x.Idx {
		d := float64(g * float64(x.Val[i]))
		if idx >= HashedDim {
			d = float64(d * denseScale)
		}
		w[idx] = float32(min(max(float64(w[idx])+float64(float32(d)), -maxWeight), maxWeight))
	}
}

// sync applies, in seq order, every event after the current version, in
// batches: each batch to a copy of the weights, swapped in when done. It
// writes a snapshot when the version crosses a multiple of SnapshotEvery.
func (m *Model) sync(ctx context.Context) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	type event struct {
		seq, created int64
		label, step  float64
		features     []byte
	}
	var evs []event
	for {
		st := m.cur.Load()
		rows, err := m.db.Query(ctx, `SELECT seq, created_at, label, step, CASE WHEN step > 0 THEN features END
			FROM compliance_model_events WHERE seq > ? ORDER BY seq LIMIT ?`, st.version, syncBatch)
		if err != nil {
			return fmt.Errorf("model: read feedback: %w", err)
		}
		evs = evs[:0]
		for rows.Next() {
			var e event
			if err := rows.Scan(&e.seq, &e.created, &e.label, &e.step, &e.features); err != nil {
				rows.Close()
				return fmt.Errorf("model: read feedback: %w", err)
			}
			evs = append(evs, e)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("model: read feedback: %w", err)
		}
		if len(evs) == 0 {
			return nil
		}
		w := slices.Clone(st.w)
		for _, e := range evs {
			if e.step <= 0 || e.features == nil || !(e.label >= 0 && e.label <= 1) || !(e.step <= 100) {
				continue
			}
			if err := decodeInto(&m.buf, e.features); err != nil {
				// The same bytes fail the same way on every replica.
				m.log.Warn("compliance model: skipping a feedback event with malformed features", "seq", e.seq, "err", err)
				continue
			}
			apply(w, m.buf, e.label, e.step)
		}
		last := evs[len(evs)-1]
		next := &state{w: w, version: last.seq, updated: sqlstore.FromMicros(last.created)}
		m.cur.Store(next)
		if st.version/m.opts.SnapshotEvery < next.version/m.opts.SnapshotEvery {
			if err := m.snapshot(ctx, next); err != nil && ctx.Err() == nil {
				m.log.Warn("compliance model: snapshot failed", "version", next.version, "err", err)
			}
		}
		if len(evs) < syncBatch {
			return nil
		}
	}
}

// Run applies other replicas' feedback every PollInterval until ctx ends;
// it returns nil then.
func (m *Model) Run(ctx context.Context) error {
	if m.db == nil {
		<-ctx.Done()
		return nil
	}
	t := time.NewTicker(m.opts.PollInterval)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		err := m.sync(ctx)
		switch {
		case err != nil && ctx.Err() == nil && !failing:
			m.log.Warn("compliance model: cannot read feedback; scoring with the weights at hand", "version", m.Version(), "err", err)
			failing = true
		case err == nil && failing:
			m.log.Info("compliance model: reading feedback again", "version", m.Version())
			failing = false
		}
	}
}

// loadSnapshot starts from the newest readable snapshot of this build's
// initial weights, if any.
func (m *Model) loadSnapshot(ctx context.Context) error {
	rows, err := m.db.Query(ctx, `SELECT version, weights FROM compliance_model_snapshots
		WHERE base = ? ORDER BY version DESC LIMIT ?`, m.base.id, snapshotsKept)
	if err != nil {
		return fmt.Errorf("model: read snapshots: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var version int64
		var blob []byte
		if err := rows.Scan(&version, &blob); err != nil {
			return fmt.Errorf("model: read snapshots: %w", err)
		}
		f, err := decodeWeights(blob)
		if err == nil && (f.version != version || f.dataHash != m.base.file.dataHash) {
			err = errors.New("snapshot does not match its row")
		}
		if err != nil {
			m.log.Warn("compliance model: skipping an unreadable snapshot", "version", version, "err", err)
			continue
		}
		m.cur.Store(&state{w: f.w, version: version})
		m.pruned = 0
		return nil
	}
	return rows.Err()
}

// snapshot stores st unless a replica already did, then applies the
// retention: the newest snapshotsKept snapshots of this base, other bases'
// for otherBaseTTL; features of events no replica can need any more.
func (m *Model) snapshot(ctx context.Context, st *state) error {
	var one int
	err := m.db.QueryRow(ctx, `SELECT 1 FROM compliance_model_snapshots WHERE base = ? AND version = ?`,
		m.base.id, st.version).Scan(&one)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		f := &weightsFile{dataHash: m.base.file.dataHash, version: st.version,
			rows: m.base.file.rows, risky: m.base.file.risky, w: st.w}
		if _, err := m.db.Exec(ctx, `INSERT INTO compliance_model_snapshots (base, version, weights, created_at)
			VALUES (?, ?, ?, ?) ON CONFLICT (base, version) DO NOTHING`,
			m.base.id, st.version, encodeWeights(f), sqlstore.Micros(time.Now())); err != nil {
			return err
		}
	case err != nil:
		return err
	}
	if _, err := m.db.Exec(ctx, `DELETE FROM compliance_model_snapshots WHERE base = ? AND version <
		(SELECT MIN(version) FROM (SELECT version FROM compliance_model_snapshots WHERE base = ? ORDER BY version DESC LIMIT ?) AS kept)`,
		m.base.id, m.base.id, snapshotsKept); err != nil {
		return err
	}
	if _, err := m.db.Exec(ctx, `DELETE FROM compliance_model_snapshots WHERE base <> ? AND created_at < ?`,
		m.base.id, sqlstore.Micros(time.Now().Add(-otherBaseTTL))); err != nil {
		return err
	}
	var oldest int64
	if err := m.db.QueryRow(ctx, `SELECT COALESCE(MIN(version), 0) FROM compliance_model_snapshots WHERE base = ?`,
		m.base.id).Scan(&oldest); err != nil {
		return err
	}
	limit := min(oldest, st.version-m.opts.FeatureKeep)
	if limit > m.pruned {
		if _, err := m.db.Exec(ctx, `UPDATE compliance_model_events SET features = NULL
			WHERE seq > ? AND seq <= ? AND holdout = 0 AND features IS NOT NULL`, m.pruned, limit); err != nil {
			return err
		}
		m.pruned = limit
	}
	_, err = m.db.Exec(ctx, `UPDATE compliance_model_events SET features = NULL
		WHERE holdout = 1 AND features IS NOT NULL AND seq <
		(SELECT seq FROM compliance_model_events WHERE holdout = 1 ORDER BY seq DESC LIMIT 1 OFFSET ?)`,
		m.opts.HoldoutEval-1)
	return err
}
