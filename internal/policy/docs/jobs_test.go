package docs

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/policy"
	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// clock is a settable clock shared by the runners of a test.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func newClock() *clock { return &clock{t: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func newJobs(db *sqlstore.DB, c *clock, id string, mod func(*Options)) *Jobs {
	o := Options{RunnerID: id, Now: c.Now, Lease: time.Minute}
	if mod != nil {
		mod(&o)
	}
	return NewJobs(db, o)
}

func runOnce(t *testing.T, j *Jobs, want bool) {
	t.Helper()
	ok, err := j.RunOnce(t.Context())
	if err != nil || ok != want {
		t.Fatalf("RunOnce = %v, %v; want %v, nil", ok, err, want)
	}
}

func TestJobs(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		t.Run("lifecycle", func(t *testing.T) { testLifecycle(t, db) })
		t.Run("failures", func(t *testing.T) { testFailures(t, db) })
		t.Run("stale claim resumed by another runner", func(t *testing.T) { testStaleClaim(t, db) })
		t.Run("attempts exhausted", func(t *testing.T) { testAttempts(t, db) })
		t.Run("racing runners", func(t *testing.T) { testRace(t, db) })
		t.Run("refiner", func(t *testing.T) { testRefiner(t, db) })
		t.Run("retention", func(t *testing.T) { testRetention(t, db) })
	})
}

// testRetention: ended jobs past Retention are deleted with their
// results; a pending job and a recently ended one stay.
func testRetention(t *testing.T, db *sqlstore.DB) {
	c := newClock()
	j := newJobs(db, c, "r", func(o *Options) { o.Retention = 24 * time.Hour })
	submit := func(name string, data []byte) string {
		job, err := j.Submit(t.Context(), name, data)
		if err != nil {
			t.Fatal(err)
		}
		return job.ID
	}
	drain := func() {
		for {
			ok, err := j.RunOnce(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				return
			}
		}
	}
	oldDone, oldFailed := submit("p.txt", []byte(policyText)), submit("bad.pdf", []byte("%PDF-1.7\nnot really\n"))
	drain()
	c.Advance(23 * time.Hour)
	recent := submit("p.txt", []byte(policyText))
	drain()
	c.Advance(2 * time.Hour)
	pending := submit("p.txt", []byte(policyText))
	if n, err := j.Prune(t.Context()); err != nil || n < 2 {
		t.Fatalf("Prune = %d, %v; want the 2 jobs ended 25 h ago", n, err)
	}
	for _, id := range []string{oldDone, oldFailed} {
		if _, err := j.Get(t.Context(), id); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("job %s ended 25 h ago: Get = %v, want deleted", id, err)
		}
	}
	for _, id := range []string{recent, pending} {
		if _, err := j.Get(t.Context(), id); err != nil {
			t.Errorf("job %s (ended 2 h ago, or pending) was deleted: %v", id, err)
		}
	}
}

func testLifecycle(t *testing.T, db *sqlstore.DB) {
	c := newClock()
	j := newJobs(db, c, "a", nil)
	pdf := makePDF(t, [][]string{strings.Split(policyText, "\n")}, pdfOpts{flate: true})
	job, err := j.Submit(t.Context(), `C:\Users\me\policy.pdf`, pdf)
	if err != nil {
		t.Fatal(err)
	}
	if job.Status != StatusPending || job.Format != FormatPDF || job.Filename != "policy.pdf" || job.Size != int64(len(pdf)) {
		t.Errorf("Submit = %+v, want pending pdf policy.pdf of %d bytes", job, len(pdf))
	}
	if got, err := j.Get(t.Context(), job.ID); err != nil || got.Status != StatusPending || !got.CreatedAt.Equal(c.Now()) {
		t.Errorf("Get = %+v, %v; want pending, created now", got, err)
	}
	if _, err := j.Results(t.Context(), job.ID); !errors.Is(err, ErrNotReady) {
		t.Errorf("Results(pending) = %v, want ErrNotReady", err)
	}
	if _, err := j.Get(t.Context(), "job_nope"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Get(unknown) = %v, want store.ErrNotFound", err)
	}

	// Record the job as the runner moves it along.
	type seen struct {
		status string
		pct    int
	}
	var steps []seen
	record := func() {
		g, err := j.Get(context.Background(), job.ID)
		if err != nil {
			t.Error(err)
		}
		steps = append(steps, seen{g.Status, g.ProgressPct})
	}
	j.process = func(ctx context.Context, jb Job, data []byte, progress func(int) error) (Results, error) {
		record()
		return j.analyse(ctx, jb, data, func(p int) error {
			err := progress(p)
			record()
			return err
		})
	}
	runOnce(t, j, true)
	record()
	want := []seen{{StatusProcessing, 10}, {StatusProcessing, 50}, {StatusProcessing, 90}, {StatusCompleted, 100}}
	if len(steps) != len(want) {
		t.Fatalf("steps %v, want %v", steps, want)
	}
	for i := range want {
		if steps[i] != want[i] {
			t.Errorf("step %d = %v, want %v", i, steps[i], want[i])
		}
	}
	res, err := j.Results(t.Context(), job.ID)
	if err != nil {
		t.Fatal(err)
	}
	if res.JobID != job.ID || res.Filename != "policy.pdf" || res.TotalPolicies != 5 || len(res.SuggestedPolicies) != 5 {
		t.Errorf("Results = %+v, want 5 suggestions for policy.pdf", res)
	}
	var doc []byte
	if err := db.QueryRow(t.Context(), `SELECT document FROM policy_jobs WHERE id = ?`, job.ID).Scan(&doc); err != nil || doc != nil {
		t.Errorf("document after completion = %d bytes, %v; want NULL", len(doc), err)
	}
	runOnce(t, j, false)
}

func testFailures(t *testing.T, db *sqlstore.DB) {
	c := newClock()
	j := newJobs(db, c, "a", nil)
	bomb := zipBomb(t, map[string]bombPart{"word/document.xml": makeBombPart("document", 60<<20)}, 0)
	tests := []struct {
		name, file string
		data       []byte
		status     string
		reason     string
		message    string
	}{
		{"encrypted pdf", "locked.pdf", makePDF(t, [][]string{{"x"}}, pdfOpts{encrypted: true}), StatusFailed, "pdf: the PDF is password-protected", ""},
		{"garbage pdf", "bad.pdf", []byte("%PDF-1.7\nnot really\n"), StatusFailed, "pdf: not a readable PDF", ""},
		{"zip bomb docx", "bomb.docx", bomb, StatusFailed, "docx: more than 100000 paragraphs", ""},
		{"scanned pdf", "scan.pdf", makePDF(t, [][]string{{""}}, pdfOpts{image: true}), StatusCompleted, "", "no text found"},
		{"text without rules", "notes.txt", []byte("Lunch is at noon.\n"), StatusCompleted, "", "no obligations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			job, err := j.Submit(t.Context(), tt.file, tt.data)
			if err != nil {
				t.Fatal(err)
			}
			runOnce(t, j, true)
			got, err := j.Get(t.Context(), job.ID)
			if err != nil {
				t.Fatal(err)
			}
			if got.Status != tt.status || got.Reason != tt.reason || !strings.Contains(got.Message, tt.message) || got.ProgressPct != 100 {
				t.Errorf("job = %+v, want %s, reason %q, message with %q, 100 %%", got, tt.status, tt.reason, tt.message)
			}
			res, err := j.Results(t.Context(), job.ID)
			var nr *NotReadyError
			switch tt.status {
			case StatusFailed:
				if !errors.As(err, &nr) || nr.Status != StatusFailed || nr.Reason != tt.reason {
					t.Errorf("Results(failed) = %v, want a NotReadyError with the reason", err)
				}
			default:
				if err != nil || res.TotalPolicies != 0 || len(res.SuggestedPolicies) != 0 || res.Message == "" {
					t.Errorf("Results = %+v, %v; want zero suggestions and a message", res, err)
				}
			}
		})
	}
	t.Run("refused at submission", func(t *testing.T) {
		for name, tc := range map[string]struct {
			data []byte
			err  error
		}{
			"png":   {[]byte("\x89PNG\r\n\x1a\n\x00"), ErrUnsupportedType},
			"empty": {nil, ErrEmpty},
		} {
			if _, err := j.Submit(t.Context(), name, tc.data); !errors.Is(err, tc.err) {
				t.Errorf("Submit(%s) = %v, want %v", name, err, tc.err)
			}
		}
		small := newJobs(db, c, "b", func(o *Options) { o.MaxBytes = 10 })
		if _, err := small.Submit(t.Context(), "big.txt", []byte("eleven byte")); !errors.Is(err, ErrDocumentTooLarge) {
			t.Errorf("Submit(over MaxBytes) = %v, want ErrDocumentTooLarge", err)
		}
	})
}

// testStaleClaim: runner a claims a job and dies; once its lease lapses,
// runner b takes the job over and completes it, and a late word from a
// changes nothing.
func testStaleClaim(t *testing.T, db *sqlstore.DB) {
	c := newClock()
	a := newJobs(db, c, "a", nil)
	b := newJobs(db, c, "b", nil)
	job, err := a.Submit(t.Context(), "p.txt", []byte(policyText))
	if err != nil {
		t.Fatal(err)
	}
	claimed, ok, err := a.claim(t.Context()) // a claims, then "crashes"
	if err != nil || !ok || claimed.ID != job.ID || claimed.Status != StatusProcessing {
		t.Fatalf("claim = %+v, %v, %v", claimed, ok, err)
	}
	runOnce(t, b, false) // a's lease holds
	c.Advance(59 * time.Second)
	runOnce(t, b, false)
	c.Advance(2 * time.Second)
	runOnce(t, b, true)
	got, err := b.Get(t.Context(), job.ID)
	if err != nil || got.Status != StatusCompleted || got.Attempts != 2 || got.TotalPolicies != 5 {
		t.Fatalf("after b: %+v, %v; want completed on attempt 2 with 5 policies", got, err)
	}
	if err := a.finish(t.Context(), job.ID, StatusFailed, "late", "", nil); err != nil {
		t.Fatal(err)
	}
	if err := a.update(t.Context(), job.ID, 50); !errors.Is(err, errLostClaim) {
		t.Errorf("update by the old runner = %v, want errLostClaim", err)
	}
	if got, _ := b.Get(t.Context(), job.ID); got.Status != StatusCompleted {
		t.Errorf("after a's late finish: %s, want completed", got.Status)
	}
}

func testAttempts(t *testing.T, db *sqlstore.DB) {
	c := newClock()
	mod := func(o *Options) { o.MaxAttempts = 2 }
	a, b, d := newJobs(db, c, "a", mod), newJobs(db, c, "b", mod), newJobs(db, c, "d", mod)
	job, err := a.Submit(t.Context(), "p.txt", []byte(policyText))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Jobs{a, b} { // two runners die holding it
		if _, ok, err := r.claim(t.Context()); !ok || err != nil {
			t.Fatalf("claim = %v, %v", ok, err)
		}
		c.Advance(2 * time.Minute)
	}
	runOnce(t, d, false)
	got, err := d.Get(t.Context(), job.ID)
	if err != nil || got.Status != StatusFailed || got.Reason != "interrupted 2 times; giving up" {
		t.Errorf("job = %+v, %v; want failed after 2 attempts", got, err)
	}
}

func testRace(t *testing.T, db *sqlstore.DB) {
	c := newClock()
	var runs atomic.Int32
	var runners []*Jobs
	for _, id := range []string{"r1", "r2", "r3", "r4"} {
		r := newJobs(db, c, id, nil)
		inner := r.process
		r.process = func(ctx context.Context, j Job, data []byte, p func(int) error) (Results, error) {
			runs.Add(1)
			return inner(ctx, j, data, p)
		}
		runners = append(runners, r)
	}
	if _, err := runners[0].Submit(t.Context(), "p.txt", []byte(policyText)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var won atomic.Int32
	for _, r := range runners {
		wg.Go(func() {
			ok, err := r.RunOnce(t.Context())
			if err != nil {
				t.Error(err)
			}
			if ok {
				won.Add(1)
			}
		})
	}
	wg.Wait()
	if won.Load() != 1 || runs.Load() != 1 {
		t.Errorf("%d runners claimed, %d processed; want 1 and 1", won.Load(), runs.Load())
	}
}

type renamer struct{ err error }

func (r renamer) Refine(_ context.Context, drafts []policy.Suggestion, _ Document) ([]policy.Suggestion, error) {
	if r.err != nil {
		return nil, r.err
	}
	out := append([]policy.Suggestion(nil), drafts...)
	for i := range out {
		out[i].Name = "refined: " + out[i].Name
	}
	return out, nil
}

func testRefiner(t *testing.T, db *sqlstore.DB) {
	c := newClock()
	for _, tt := range []struct {
		name    string
		r       renamer
		prefix  string
		message string
	}{
		{"refines", renamer{}, "refined: ", ""},
		{"fails: drafts stand", renamer{err: errors.New("model down")}, "Customer Data", "refinement failed"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			j := newJobs(db, c, "a", func(o *Options) { o.Refiner = tt.r })
			job, err := j.Submit(t.Context(), "p.txt", []byte(policyText))
			if err != nil {
				t.Fatal(err)
			}
			runOnce(t, j, true)
			res, err := j.Results(t.Context(), job.ID)
			if err != nil || len(res.SuggestedPolicies) == 0 {
				t.Fatalf("Results = %+v, %v", res, err)
			}
			if !strings.HasPrefix(res.SuggestedPolicies[0].Name, tt.prefix) || !strings.Contains(res.Message, tt.message) {
				t.Errorf("first name %q, message %q; want prefix %q, message with %q",
					res.SuggestedPolicies[0].Name, res.Message, tt.prefix, tt.message)
			}
		})
	}
}
