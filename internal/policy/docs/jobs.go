package docs

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/svc-gateway/svc/internal/policy"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// Job statuses (the spec's document job states).
const (
	StatusPending    = "pending"
	StatusProcessing = "processing"
	StatusCompleted  = "completed"
	StatusFailed     = "failed"
)

// MaxDocumentBytes is the largest document accepted (50 MB).
const MaxDocumentBytes = 50 << 20

// Sentinel errors of Jobs.
var (
	// ErrNotReady: the job has not completed (Results); the API answers 409.
	ErrNotReady = errors.New("docs: job not completed")
	// ErrEmpty: an empty document.
	ErrEmpty = errors.New("docs: empty document")
	// ErrDocumentTooLarge: a document over Options.MaxBytes (413).
	ErrDocumentTooLarge = errors.New("docs: document over the size limit")
)

// NotReadyError is ErrNotReady with the job's state.
type NotReadyError struct {
	Status string
	Reason string // why it failed, when Status is failed
}

// Error says the job's state.
func (e *NotReadyError) Error() string {
	if e.Reason != "" {
		return "docs: job " + e.Status + ": " + e.Reason
	}
	return "docs: job " + e.Status + ", not completed"
}

// Unwrap is ErrNotReady.
func (e *NotReadyError) Unwrap() error { return ErrNotReady }

// Job is a document job (the spec's Document job resource).
type Job struct {
	ID            string    `json:"id"`
	Filename      string    `json:"filename"`
	Format        Format    `json:"type"`
	Size          int64     `json:"size"`
	Status        string    `json:"status"`
	ProgressPct   int       `json:"progress_pct"`
	Reason        string    `json:"reason,omitempty"`  // why it failed
	Message       string    `json:"message,omitempty"` // a note on the outcome
	TotalPolicies int       `json:"total_policies"`
	Attempts      int       `json:"attempts"`
	CreatedAt     time.Time `json:"created_at"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// Results are a completed job's suggestions (the spec's document job
// results).
type Results struct {
	JobID             string              `json:"job_id"`
	Filename          string              `json:"filename"`
	TotalPolicies     int                 `json:"total_policies"`
	SuggestedPolicies []policy.Suggestion `json:"suggested_policies"`
	Message           string              `json:"message,omitempty"`
}

// Refiner improves the rule-based drafts, e.g. with a model; its error
// leaves the drafts standing.
type Refiner interface {
	Refine(ctx context.Context, drafts []policy.Suggestion, doc Document) ([]policy.Suggestion, error)
}

// Options configure Jobs; zero fields take the defaults.
type Options struct {
	// RunnerID names this runner in claims (default: a random id).
	RunnerID string
	// Lease is how long a claim holds without renewal (default 2 min); a
	// runner renews it every Lease/3 while it works.
	Lease time.Duration
	// Poll is how often Run looks for jobs submitted on other replicas
	// (default 2 s).
	Poll time.Duration
	// MaxAttempts is how many claims a job gets before an interrupted job
	// is failed (default 3).
	MaxAttempts int
	// MaxBytes is the largest document (default MaxDocumentBytes).
	MaxBytes int64
	// Retention is how long an ended job (completed or failed) and its
	// results are kept after it ended (default DefaultRetention); Run
	// deletes older ones.
	Retention time.Duration
	// Limits bound extraction (default DefaultLimits).
	Limits Limits
	// Refiner, when set, refines the drafts.
	Refiner Refiner
	// Now is the clock (default time.Now).
	Now func() time.Time
	// Logger (default slog.Default()).
	Logger *slog.Logger
}

// Jobs runs document jobs recorded in SQL: Submit stores one, Run (on any
// replica) claims and processes them. Safe for concurrent use.
type Jobs struct {
	db   *sqlstore.DB
	opts Options
	wake chan struct{}
	// process is the work of a claimed job (replaced in tests).
	process func(ctx context.Context, j Job, data []byte, progress func(int) error) (Results, error)
	mu      sync.Mutex
}

// NewJobs returns the job runner over db (migration 00011 applied).
func NewJobs(db *sqlstore.DB, opts Options) *Jobs {
	if opts.RunnerID == "" {
		opts.RunnerID = "runner_" + randomHex(6)
	}
	if opts.Lease <= 0 {
		opts.Lease = 2 * time.Minute
	}
	if opts.Poll <= 0 {
		opts.Poll = 2 * time.Second
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 3
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = MaxDocumentBytes
	}
	if opts.Retention <= 0 {
		opts.Retention = DefaultRetention
	}
	if opts.Limits == (Limits{}) {
		opts.Limits = DefaultLimits
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	j := &Jobs{db: db, opts: opts, wake: make(chan struct{}, 1)}
	j.process = j.analyse
	return j
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// cleanFilename keeps the base name, valid UTF-8 without control
// characters, at most 255 bytes.
func cleanFilename(name string) string {
	name = strings.ToValidUTF8(name, "")
	name = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return -1
		}
		return r
	}, name)
	name = path.Base(strings.ReplaceAll(name, `\`, "/"))
	if name == "." || name == "/" {
		name = ""
	}
	return truncate(name, 255)
}

// Submit records a pending job for data and returns it at once; Run
// processes it. The type is read from data: ErrUnsupportedType (wrapped in
// an *ExtractError), ErrEmpty, ErrDocumentTooLarge.
func (j *Jobs) Submit(ctx context.Context, filename string, data []byte) (Job, error) {
	if len(data) == 0 {
		return Job{}, ErrEmpty
	}
	if int64(len(data)) > j.opts.MaxBytes {
		return Job{}, ErrDocumentTooLarge
	}
	f, err := DetectFormat(data)
	if err != nil {
		return Job{}, err
	}
	now := j.opts.Now().UTC().Truncate(time.Microsecond)
	job := Job{
		ID: "job_" + randomHex(12), Filename: cleanFilename(filename), Format: f, Size: int64(len(data)),
		Status: StatusPending, CreatedAt: now, UpdatedAt: now,
	}
	_, err = j.db.Exec(ctx, `INSERT INTO policy_jobs (id, filename, format, size, status, progress_pct,
		reason, message, created_at, updated_at, claimed_by, claimed_until, attempts, total_policies, results, document)
		VALUES (?, ?, ?, ?, ?, 0, '', '', ?, ?, '', 0, 0, 0, NULL, ?)`,
		job.ID, job.Filename, string(f), job.Size, StatusPending, sqlstore.Micros(now), sqlstore.Micros(now), data)
	if err != nil {
		return Job{}, fmt.Errorf("docs: submit: %w", err)
	}
	select {
	case j.wake <- struct{}{}:
	default:
	}
	return job, nil
}

const jobColumns = `id, filename, format, size, status, progress_pct, reason, message,
	created_at, updated_at, attempts, total_policies`

func scanJob(row interface{ Scan(...any) error }) (Job, error) {
	var (
		job              Job
		format           string
		created, updated int64
	)
	err := row.Scan(&job.ID, &job.Filename, &format, &job.Size, &job.Status, &job.ProgressPct,
		&job.Reason, &job.Message, &created, &updated, &job.Attempts, &job.TotalPolicies)
	if errors.Is(err, sql.ErrNoRows) {
		return Job{}, store.ErrNotFound
	}
	if err != nil {
		return Job{}, err
	}
	job.Format = Format(format)
	job.CreatedAt, job.UpdatedAt = sqlstore.FromMicros(created), sqlstore.FromMicros(updated)
	return job, nil
}

// Get returns the job with id, or store.ErrNotFound.
func (j *Jobs) Get(ctx context.Context, id string) (Job, error) {
	job, err := scanJob(j.db.QueryRow(ctx, `SELECT `+jobColumns+` FROM policy_jobs WHERE id = ?`, id))
	if err != nil {
		return Job{}, fmt.Errorf("docs: job %q: %w", id, err)
	}
	return job, nil
}

// Results returns a completed job's suggestions; store.ErrNotFound, or a
// *NotReadyError (ErrNotReady) while it is not completed.
func (j *Jobs) Results(ctx context.Context, id string) (Results, error) {
	var raw sql.NullString
	row := j.db.QueryRow(ctx, `SELECT `+jobColumns+`, results FROM policy_jobs WHERE id = ?`, id)
	job, err := scanJob(scanner(func(dest ...any) error { return row.Scan(append(dest, &raw)...) }))
	if err != nil {
		return Results{}, fmt.Errorf("docs: job %q: %w", id, err)
	}
	if job.Status != StatusCompleted {
		return Results{}, &NotReadyError{Status: job.Status, Reason: job.Reason}
	}
	res := Results{JobID: job.ID, Filename: job.Filename, TotalPolicies: job.TotalPolicies,
		SuggestedPolicies: []policy.Suggestion{}, Message: job.Message}
	if raw.Valid {
		if err := json.Unmarshal([]byte(raw.String), &res.SuggestedPolicies); err != nil {
			return Results{}, fmt.Errorf("docs: job %q: results: %w", id, err)
		}
	}
	return res, nil
}

// scanner adapts a Scan function to scanJob.
type scanner func(dest ...any) error

// Scan calls s.
func (s scanner) Scan(dest ...any) error { return s(dest...) }

// DefaultRetention is how long ended jobs are kept by default.
const DefaultRetention = 30 * 24 * time.Hour

// pruneEvery is how often Run deletes ended jobs past Retention.
const pruneEvery = time.Hour

// Run claims and processes jobs until ctx ends: pending ones, and ones
// whose claim lapsed (their runner died). It wakes on Submit and every
// Poll, and deletes ended jobs past Retention every hour. It returns ctx's
// error.
func (j *Jobs) Run(ctx context.Context) error {
	t := time.NewTicker(j.opts.Poll)
	defer t.Stop()
	var pruned time.Time
	for {
		if now := j.opts.Now(); now.Sub(pruned) >= pruneEvery {
			pruned = now
			if n, err := j.Prune(ctx); err != nil {
				j.opts.Logger.Warn("policy document jobs: prune", "err", err)
			} else if n > 0 {
				j.opts.Logger.Info("policy document jobs: deleted ended jobs past retention", "jobs", n)
			}
		}
		for {
			ok, err := j.RunOnce(ctx)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err != nil {
				j.opts.Logger.Warn("policy document job", "err", err)
				break
			}
			if !ok {
				break
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-j.wake:
		case <-t.C:
		}
	}
}

// Prune deletes the jobs that ended (completed or failed) more than
// Retention ago, with their results; pending and running jobs stay. It
// returns how many it deleted.
func (j *Jobs) Prune(ctx context.Context) (int64, error) {
	cutoff := sqlstore.Micros(j.opts.Now().Add(-j.opts.Retention))
	res, err := j.db.Exec(ctx, `DELETE FROM policy_jobs WHERE status IN (?, ?) AND updated_at < ?`,
		StatusCompleted, StatusFailed, cutoff)
	if err != nil {
		return 0, fmt.Errorf("docs: prune jobs: %w", err)
	}
	return res.RowsAffected()
}

// RunOnce claims one job and processes it; ok is false when there was
// none to claim. Jobs interrupted MaxAttempts times are failed first.
func (j *Jobs) RunOnce(ctx context.Context) (ok bool, err error) {
	j.mu.Lock() // one job at a time per runner: documents are large
	defer j.mu.Unlock()
	now := sqlstore.Micros(j.opts.Now())
	if _, err := j.db.Exec(ctx, `UPDATE policy_jobs SET status = ?, reason = ?, updated_at = ?, document = NULL,
		claimed_by = '', claimed_until = 0
		WHERE status = ? AND claimed_until < ? AND attempts >= ?`,
		StatusFailed, fmt.Sprintf("interrupted %d times; giving up", j.opts.MaxAttempts), now,
		StatusProcessing, now, j.opts.MaxAttempts); err != nil {
		return false, fmt.Errorf("docs: fail abandoned jobs: %w", err)
	}
	job, claimed, err := j.claim(ctx)
	if err != nil || !claimed {
		return false, err
	}
	return true, j.work(ctx, job)
}

// claim takes the oldest claimable job with a compare-and-set UPDATE: of
// runners racing for a job, on any replica, one updates its row.
func (j *Jobs) claim(ctx context.Context) (Job, bool, error) {
	now := j.opts.Now()
	rows, err := j.db.Query(ctx, `SELECT id FROM policy_jobs
		WHERE status = ? OR (status = ? AND claimed_until < ?)
		ORDER BY created_at, id LIMIT 8`, StatusPending, StatusProcessing, sqlstore.Micros(now))
	if err != nil {
		return Job{}, false, fmt.Errorf("docs: claim: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return Job{}, false, fmt.Errorf("docs: claim: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return Job{}, false, fmt.Errorf("docs: claim: %w", err)
	}
	for _, id := range ids {
		res, err := j.db.Exec(ctx, `UPDATE policy_jobs
			SET status = ?, claimed_by = ?, claimed_until = ?, attempts = attempts + 1, updated_at = ?,
				progress_pct = 10
			WHERE id = ? AND (status = ? OR (status = ? AND claimed_until < ?)) AND attempts < ?`,
			StatusProcessing, j.opts.RunnerID, sqlstore.Micros(now.Add(j.opts.Lease)), sqlstore.Micros(now),
			id, StatusPending, StatusProcessing, sqlstore.Micros(now), j.opts.MaxAttempts)
		if err != nil {
			return Job{}, false, fmt.Errorf("docs: claim %q: %w", id, err)
		}
		if n, err := res.RowsAffected(); err != nil || n != 1 {
			continue // another runner took it
		}
		job, err := j.Get(ctx, id)
		return job, err == nil, err
	}
	return Job{}, false, nil
}

// errLostClaim: another runner took the job over (our lease lapsed).
var errLostClaim = errors.New("docs: claim lost")

// update writes progress (and renews the lease) while this runner holds
// the claim.
func (j *Jobs) update(ctx context.Context, id string, pct int) error {
	now := j.opts.Now()
	res, err := j.db.Exec(ctx, `UPDATE policy_jobs SET progress_pct = ?, claimed_until = ?, updated_at = ?
		WHERE id = ? AND status = ? AND claimed_by = ?`,
		pct, sqlstore.Micros(now.Add(j.opts.Lease)), sqlstore.Micros(now), id, StatusProcessing, j.opts.RunnerID)
	if err != nil {
		return fmt.Errorf("docs: job %q progress: %w", id, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return errLostClaim
	}
	return nil
}

// work processes a claimed job and records its outcome.
func (j *Jobs) work(ctx context.Context, job Job) error {
	var data []byte
	if err := j.db.QueryRow(ctx, `SELECT document FROM policy_jobs WHERE id = ?`, job.ID).Scan(&data); err != nil {
		return fmt.Errorf("docs: job %q: document: %w", job.ID, err)
	}
	// Renew the lease while working, so a long extraction is not taken
	// for a crash.
	hctx, stop := context.WithCancel(ctx)
	defer stop()
	go func() {
		t := time.NewTicker(j.opts.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-hctx.Done():
				return
			case <-t.C:
				if err := j.renew(hctx, job.ID); errors.Is(err, errLostClaim) {
					stop()
					return
				}
			}
		}
	}()
	progress := func(pct int) error {
		if err := hctx.Err(); err != nil {
			return errLostClaim
		}
		return j.update(hctx, job.ID, pct)
	}
	res, err := j.safeProcess(hctx, job, data, progress)
	switch {
	case errors.Is(err, errLostClaim):
		return nil // the job is another runner's now
	case ctx.Err() != nil:
		return ctx.Err() // shutting down: the lease lapses, another runner resumes
	case err != nil:
		return j.finish(ctx, job.ID, StatusFailed, failReason(err), "", nil)
	}
	return j.finish(ctx, job.ID, StatusCompleted, "", res.Message, res.SuggestedPolicies)
}

// safeProcess runs process, a panic becoming an error (the job fails
// instead of the process dying).
func (j *Jobs) safeProcess(ctx context.Context, job Job, data []byte, progress func(int) error) (res Results, err error) {
	defer func() {
		if x := recover(); x != nil {
			j.opts.Logger.Error("policy document job panicked", "job", job.ID, "panic", x)
			err = fmt.Errorf("docs: job %q: panic: %v", job.ID, x)
		}
	}()
	return j.process(ctx, job, data, progress)
}

// renew extends the lease without touching the progress.
func (j *Jobs) renew(ctx context.Context, id string) error {
	now := j.opts.Now()
	res, err := j.db.Exec(ctx, `UPDATE policy_jobs SET claimed_until = ?
		WHERE id = ? AND status = ? AND claimed_by = ?`,
		sqlstore.Micros(now.Add(j.opts.Lease)), id, StatusProcessing, j.opts.RunnerID)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return errLostClaim
	}
	return nil
}

// failReason is the reason a failed job shows.
func failReason(err error) string {
	var ee *ExtractError
	if errors.As(err, &ee) {
		if ee.Format != "" {
			return string(ee.Format) + ": " + ee.Reason
		}
		return ee.Reason
	}
	return "processing failed"
}

// finish records a job's outcome, if this runner still holds it, and drops
// the document.
func (j *Jobs) finish(ctx context.Context, id, status, reason, message string, sugs []policy.Suggestion) error {
	var results any // NULL unless completed
	pct := 100
	if status == StatusCompleted {
		b, err := json.Marshal(sugs)
		if err != nil {
			return fmt.Errorf("docs: job %q results: %w", id, err)
		}
		results = string(b)
	}
	_, err := j.db.Exec(ctx, `UPDATE policy_jobs SET status = ?, progress_pct = ?, reason = ?, message = ?,
		results = ?, total_policies = ?, document = NULL, updated_at = ?, claimed_until = 0
		WHERE id = ? AND status = ? AND claimed_by = ?`,
		status, pct, reason, message, results, len(sugs), sqlstore.Micros(j.opts.Now()),
		id, StatusProcessing, j.opts.RunnerID)
	if err != nil {
		return fmt.Errorf("docs: job %q: finish: %w", id, err)
	}
	return nil
}

// analyse is a job's work: extraction (progress 50), the obligations and
// the refiner (90), done (100, by finish).
func (j *Jobs) analyse(ctx context.Context, job Job, data []byte, progress func(int) error) (Results, error) {
	doc, err := ExtractLimits(ctx, data, j.opts.Limits)
	if err != nil {
		return Results{}, err
	}
	if err := progress(50); err != nil {
		return Results{}, err
	}
	res := Results{JobID: job.ID, Filename: job.Filename}
	if doc.Empty() {
		res.SuggestedPolicies = []policy.Suggestion{}
		res.Message = "no text found in the document (a scanned image? run it through OCR first)"
		return res, nil
	}
	sugs := Suggest(doc)
	if j.opts.Refiner != nil && len(sugs) > 0 {
		refined, err := j.opts.Refiner.Refine(ctx, sugs, doc)
		switch {
		case ctx.Err() != nil:
			return Results{}, ctx.Err()
		case err != nil:
			j.opts.Logger.Warn("policy document job: refinement failed; rule-based drafts stand", "job", job.ID, "err", err)
			res.Message = "refinement failed; rule-based drafts"
		default:
			sugs = refined
		}
	}
	if err := progress(90); err != nil {
		return Results{}, err
	}
	res.SuggestedPolicies = sugs
	if len(sugs) == 0 {
		res.Message = "no obligations (must, shall, is prohibited, …) found in the document"
	}
	return res, nil
}
