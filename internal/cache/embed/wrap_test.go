package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fake is an Embedder that records its calls. Its vector for a text has a 1
// at position len(text) % dim. It blocks each call until release is closed,
// when release is set, and fails with err when err is set.
type fake struct {
	dim     int
	mu      sync.Mutex
	calls   [][]string
	release chan struct{}
	err     error
	started chan struct{} // receives once per call, when set
	stopped chan struct{} // receives when a blocked call's context ends, when set
}

func (f *fake) Name() string { return "fake" }
func (f *fake) Dim() int     { return f.dim }

func (f *fake) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	f.mu.Lock()
	f.calls = append(f.calls, slices.Clone(texts))
	f.mu.Unlock()
	if f.started != nil {
		f.started <- struct{}{}
	}
	if f.release != nil {
		select {
		case <-f.release:
		case <-ctx.Done():
			if f.stopped != nil {
				f.stopped <- struct{}{}
			}
			return nil, ctx.Err()
		}
	}
	if f.err != nil {
		return nil, f.err
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = make([]float32, f.dim)
		out[i][len(t)%f.dim] = 1
	}
	return out, nil
}

func (f *fake) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.calls)
}

func (f *fake) texts() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var all []string
	for _, c := range f.calls {
		all = append(all, c...)
	}
	return all
}

func TestFuncNormalises(t *testing.T) {
	e := Func("provider/model", 3, func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range texts {
			out[i] = []float32{3, 4, float32(i)}
		}
		out[len(out)-1] = []float32{0, 0, 0}
		return out, nil
	})
	if e.Name() != "provider/model" || e.Dim() != 3 {
		t.Fatalf("Name, Dim = %q, %d; want provider/model, 3", e.Name(), e.Dim())
	}
	vs, err := e.Embed(context.Background(), []string{"a", "b", "c"})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs[:2] {
		if n := norm(v); math.Abs(n-1) > 1e-6 {
			t.Errorf("|vector %d| = %v, want 1", i, n)
		}
	}
	if got := vs[0]; math.Abs(float64(got[0])-0.6) > 1e-6 || math.Abs(float64(got[1])-0.8) > 1e-6 {
		t.Errorf("vector 0 = %v, want [0.6 0.8 0]", got)
	}
	if n := norm(vs[2]); n != 0 {
		t.Errorf("|zero vector| = %v after normalising, want 0", n)
	}
}

func TestFuncErrors(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		f    func(context.Context, []string) ([][]float32, error)
		want error
	}{
		{"error", func(context.Context, []string) ([][]float32, error) { return nil, boom }, boom},
		{"count", func(context.Context, []string) ([][]float32, error) { return [][]float32{{1, 0}}, nil }, nil},
		{"dim", func(_ context.Context, t []string) ([][]float32, error) { return [][]float32{{1}, {1}}, nil }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Func("m", 2, tc.f).Embed(context.Background(), []string{"a", "b"})
			if err == nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("Embed error = %v, want %v", err, cmpErr(tc.want))
			}
		})
	}
}

func cmpErr(err error) string {
	if err == nil {
		return "an error"
	}
	return err.Error()
}

func TestMemoCachesAndEvicts(t *testing.T) {
	f := &fake{dim: 8}
	m := Memo(f, 2)
	ctx := context.Background()
	if m.Name() != "fake" || m.Dim() != 8 {
		t.Fatalf("Name, Dim = %q, %d; want fake, 8", m.Name(), m.Dim())
	}
	mustEmbed(t, m, "a", "bb")
	mustEmbed(t, m, "a", "bb") // both cached
	if got := f.texts(); !slices.Equal(got, []string{"a", "bb"}) {
		t.Fatalf("inner saw %q, want [a bb]", got)
	}
	mustEmbed(t, m, "ccc") // evicts a, the least recently used
	mustEmbed(t, m, "bb")  // still cached
	mustEmbed(t, m, "a")   // recomputed
	if got := f.texts(); !slices.Equal(got, []string{"a", "bb", "ccc", "a"}) {
		t.Fatalf("inner saw %q, want [a bb ccc a]", got)
	}
	// Callers may modify what they get without harming the memo.
	v, _ := m.Embed(ctx, []string{"bb"})
	v[0][2] = 42
	w := mustEmbed(t, m, "bb")
	if w[0][2] != 1 {
		t.Errorf("memoised vector changed to %v by a caller", w[0])
	}
}

func mustEmbed(t *testing.T, e Embedder, texts ...string) [][]float32 {
	t.Helper()
	vs, err := e.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("got %d vectors for %d texts", len(vs), len(texts))
	}
	for i, txt := range texts {
		if vs[i][len(txt)%len(vs[i])] != 1 {
			t.Fatalf("vector for %q = %v, not its own", txt, vs[i])
		}
	}
	return vs
}

func TestMemoComputesConcurrentMissesOnce(t *testing.T) {
	f := &fake{dim: 8, release: make(chan struct{}), started: make(chan struct{}, 16)}
	m := Memo(f, 10)
	var wg sync.WaitGroup
	for range 5 {
		wg.Go(func() { mustEmbed(t, m, "same text") })
	}
	<-f.started
	time.Sleep(20 * time.Millisecond) // let the others find the call in flight
	close(f.release)
	wg.Wait()
	if n := f.callCount(); n != 1 {
		t.Errorf("inner called %d times for one text, want 1", n)
	}
}

func TestMemoWaiterRetriesAfterFailure(t *testing.T) {
	f := &fake{dim: 8, release: make(chan struct{}), started: make(chan struct{}, 16)}
	m := Memo(f, 10)
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := m.Embed(ctx, []string{"text"})
		first <- err
	}()
	<-f.started
	second := make(chan error, 1)
	go func() {
		_, err := m.Embed(context.Background(), []string{"text"})
		second <- err
	}()
	time.Sleep(20 * time.Millisecond) // the second waits on the first's call
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Fatalf("first caller's error = %v, want context.Canceled", err)
	}
	<-f.started // the second computes it itself
	close(f.release)
	if err := <-second; err != nil {
		t.Errorf("second caller's error = %v, want nil", err)
	}
}

func TestMemoPropagatesErrors(t *testing.T) {
	boom := errors.New("boom")
	m := Memo(&fake{dim: 4, err: boom}, 4)
	if _, err := m.Embed(context.Background(), []string{"x"}); !errors.Is(err, boom) {
		t.Errorf("Embed error = %v, want %v", err, boom)
	}
}

func TestMemoDuplicateTextsInOneCall(t *testing.T) {
	f := &fake{dim: 8}
	m := Memo(f, 4)
	mustEmbed(t, m, "x", "yy", "x")
	if got := f.texts(); !slices.Equal(got, []string{"x", "yy"}) {
		t.Errorf("inner saw %q, want [x yy]", got)
	}
}

func TestBatchJoinsConcurrentCalls(t *testing.T) {
	f := &fake{dim: 16}
	b := Batch(f, 64, 20*time.Millisecond)
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() { mustEmbed(t, b, fmt.Sprint(i), fmt.Sprint(i*1000)) })
	}
	wg.Wait()
	if n := f.callCount(); n >= 10 {
		t.Errorf("inner called %d times for 10 concurrent callers, want fewer", n)
	}
	if got := len(f.texts()); got != 20 {
		t.Errorf("inner saw %d texts, want 20", got)
	}
}

func TestBatchRespectsMaxBatch(t *testing.T) {
	f := &fake{dim: 16}
	b := Batch(f, 4, 20*time.Millisecond)
	var wg sync.WaitGroup
	for i := range 9 {
		wg.Go(func() { mustEmbed(t, b, fmt.Sprint(i)) })
	}
	mustEmbed(t, b, "a", "bb", "ccc", "dddd", "eeeee", "ffffff") // larger than a batch
	wg.Wait()
	f.mu.Lock()
	defer f.mu.Unlock()
	total := 0
	for _, c := range f.calls {
		if len(c) > 4 {
			t.Errorf("inner call of %d texts, want ≤ 4", len(c))
		}
		total += len(c)
	}
	if total != 15 {
		t.Errorf("inner saw %d texts, want 15", total)
	}
}

func TestBatchCancelDoesNotFailOthers(t *testing.T) {
	f := &fake{dim: 16, release: make(chan struct{}), started: make(chan struct{}, 4)}
	b := Batch(f, 2, time.Hour) // sent when both callers have joined, however late the second

	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error, 2)
	go func() { _, err := b.Embed(ctx, []string{"cancelled"}); errs <- err }()
	var ok atomic.Bool
	go func() {
		vs, err := b.Embed(context.Background(), []string{"kept"})
		ok.Store(err == nil && len(vs) == 1 && vs[0][len("kept")] == 1)
		errs <- err
	}()
	<-f.started // both in one call by now
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller's error = %v, want context.Canceled", err)
	}
	close(f.release)
	if err := <-errs; err != nil || !ok.Load() {
		t.Errorf("other caller: error %v, right vector %v; want nil, true", err, ok.Load())
	}
	if n := f.callCount(); n != 1 {
		t.Errorf("inner called %d times, want 1", n)
	}
}

func TestBatchCancelsCallWhenAllCallersLeave(t *testing.T) {
	f := &fake{dim: 16, release: make(chan struct{}), started: make(chan struct{}, 4), stopped: make(chan struct{}, 4)}
	b := Batch(f, 64, time.Millisecond)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := b.Embed(ctx, []string{"x"}); done <- err }()
	<-f.started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("error = %v, want context.Canceled", err)
	}
	select {
	case <-f.stopped:
	case <-time.After(5 * time.Second):
		t.Fatal("inner call's context not cancelled after its only caller left")
	}
	close(f.release)
	mustEmbed(t, b, "y") // and the batcher still works
}

func TestBatchPropagatesErrors(t *testing.T) {
	boom := errors.New("boom")
	b := Batch(&fake{dim: 4, err: boom}, 8, 5*time.Millisecond)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			if _, err := b.Embed(context.Background(), []string{"x"}); !errors.Is(err, boom) {
				t.Errorf("Embed error = %v, want %v", err, boom)
			}
		})
	}
	wg.Wait()
}

func TestBatchOfMemoOfLocal(t *testing.T) {
	l := NewLocal()
	e := Batch(Memo(l, 100), 16, time.Millisecond)
	if e.Name() != LocalName || e.Dim() != LocalDim {
		t.Fatalf("Name, Dim = %q, %d; want %q, %d", e.Name(), e.Dim(), LocalName, LocalDim)
	}
	vs, err := e.Embed(context.Background(), []string{"How do I reset my password?"})
	if err != nil {
		t.Fatal(err)
	}
	if got := Cosine(vs[0], l.EmbedOne("How do I reset my password?")); math.Abs(float64(got)-1) > 1e-5 {
		t.Errorf("wrapped · direct = %v, want 1", got)
	}
}

func TestFuncLearnsUnknownDim(t *testing.T) {
	n := 3
	e := Func("provider/model", 0, func(_ context.Context, texts []string) ([][]float32, error) {
		out := make([][]float32, len(texts))
		for i := range out {
			out[i] = make([]float32, n)
			out[i][0] = 2
		}
		return out, nil
	})
	if d := e.Dim(); d != 0 {
		t.Fatalf("Dim before any call = %d, want 0", d)
	}
	vs, err := e.Embed(context.Background(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if d := e.Dim(); d != 3 || vs[0][0] != 1 {
		t.Fatalf("Dim = %d, vector %v; want 3, [1 0 0]", d, vs[0])
	}
	n = 4
	if _, err := e.Embed(context.Background(), []string{"c"}); err == nil {
		t.Error("Embed of a 4-dimensional vector after 3-dimensional ones succeeded, want an error")
	}
}
