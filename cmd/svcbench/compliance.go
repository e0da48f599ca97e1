package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/compliance/httpapi"
	"github.com/svc-gateway/svc/internal/compliance/model"
	"github.com/svc-gateway/svc/internal/compliance/quality"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
)

// complianceOptions are `svcbench compliance`'s flags.
type complianceOptions struct {
	n           int
	concurrency int
	duration    time.Duration
	size        int
	json        bool
}

// complianceReport is what `svcbench compliance` measured.
type complianceReport struct {
	PromptBytes int            `json:"prompt_bytes"`
	Prompts     int            `json:"prompts"`
	OneCore     []opLatency    `json:"one_core"`
	Component   componentThrpt `json:"component"`
}

// opLatency is one engine operation timed alone on one core.
type opLatency struct {
	Op          string  `json:"op"`
	N           int     `json:"n"`
	P50us       float64 `json:"p50_us"`
	P99us       float64 `json:"p99_us"`
	MaxUs       float64 `json:"max_us"`
	AllocsPerOp float64 `json:"allocs_per_op"`
	BytesPerOp  float64 `json:"bytes_per_op"`
}

// componentThrpt is the compliance component's HTTP throughput.
type componentThrpt struct {
	Concurrency int     `json:"concurrency"`
	Requests    int     `json:"requests"`
	Errors      int     `json:"errors"`
	PerSecond   float64 `json:"requests_per_second"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	Cores       int     `json:"cores"`
}

// runCompliance is `svcbench compliance`: the engine's scan, redaction and
// intelligent scan timed one at a time on one core (GOMAXPROCS 1) over
// prompts of -size bytes built from the quality tune sets, then the
// component's POST /v1/compliance/scan under -c concurrent clients.
func runCompliance(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("svcbench compliance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := complianceOptions{}
	fs.IntVar(&o.n, "n", 3000, "operations timed per engine operation")
	fs.IntVar(&o.concurrency, "c", 16, "concurrent clients of the component")
	fs.DurationVar(&o.duration, "duration", 5*time.Second, "how long the component is loaded")
	fs.IntVar(&o.size, "size", 4096, "prompt size in bytes")
	fs.BoolVar(&o.json, "json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "svcbench compliance:", err)
		}
		return 2
	}
	if o.n < 1 || o.concurrency < 1 || o.size < 64 || o.size > httpapi.MaxContent {
		fmt.Fprintln(stderr, "svcbench compliance: -n and -c must be positive, -size 64 to 1 MiB")
		return 2
	}
	rep, err := benchCompliance(ctx, o)
	if err != nil {
		fmt.Fprintln(stderr, "svcbench compliance:", err)
		return 1
	}
	return emit(stdout, stderr, o.json, rep, func(w io.Writer) error { writeComplianceTable(w, rep); return nil }, rep.Component.Errors)
}

func benchCompliance(ctx context.Context, o complianceOptions) (*complianceReport, error) {
	prompts, err := compliancePrompts(o.size)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "svcbench-compliance-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	db, err := sqlstore.Open(ctx, "sqlite://"+filepath.Join(dir, "svc.db"))
	if err != nil {
		return nil, err
	}
	defer db.Close()
	eng, err := compliance.NewDefault()
	if err != nil {
		return nil, err
	}
	m, err := model.New(ctx, db, model.Options{})
	if err != nil {
		return nil, err
	}
	recs := compliance.NewRecords(db, compliance.RecordsOptions{})
	learner := compliance.NewLearner(eng, m, recs)
	rep := &complianceReport{PromptBytes: o.size, Prompts: len(prompts)}
	policy := compliance.Policies[compliance.DefaultPolicy]
	ops := []struct {
		name string
		f    func(string)
	}{
		{"scan", func(s string) { eng.Scan(s, policy) }},
		{"redact", func(s string) { eng.Redact(s) }},
		{"intelligent-scan", func(s string) { learner.Scan(s, "") }},
	}
	prev := runtime.GOMAXPROCS(1)
	for _, op := range ops {
		rep.OneCore = append(rep.OneCore, timeOp(op.name, op.f, prompts, o.n))
	}
	runtime.GOMAXPROCS(prev)
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = recs.Run(rctx) }()
	rep.Component, err = loadComponent(ctx, o, prompts, httpapi.New(httpapi.Deps{
		Auth: auth.AdminKey("bench"), Engine: eng, Records: recs, Learner: learner,
		Features: compliance.Features,
	}))
	return rep, err
}

// compliancePrompts builds prompts of about size bytes from the tune sets'
// texts (PII, benign and attack prompts, hard negatives) in turn.
func compliancePrompts(size int) ([]string, error) {
	pii, err := quality.LoadExamples("testdata/pii_tune.jsonl")
	if err != nil {
		return nil, err
	}
	inj, err := quality.LoadInjections("testdata/injection_tune.jsonl")
	if err != nil {
		return nil, err
	}
	neg, err := quality.LoadHardNegatives("testdata/hardneg_tune.jsonl")
	if err != nil {
		return nil, err
	}
	var texts []string
	for i := 0; i < len(pii) || i < len(inj) || i < len(neg); i++ {
		if i < len(pii) {
			texts = append(texts, pii[i].Text)
		}
		if i < len(inj) {
			texts = append(texts, inj[i].Text)
		}
		if i < len(neg) {
			texts = append(texts, neg[i].Text)
		}
	}
	var out []string
	var b bytes.Buffer
	for _, t := range texts {
		if b.Len()+len(t)+1 > size {
			out = append(out, b.String())
			b.Reset()
			if len(out) == 32 {
				break
			}
		}
		b.WriteString(t)
		b.WriteByte('\n')
	}
	if len(out) == 0 {
		return nil, errors.New("the tune sets hold too little text for one prompt")
	}
	return out, nil
}

// timeOp runs f n times over the prompts (after a warm-up) and reports its
// latency percentiles and allocations per call.
func timeOp(name string, f func(string), prompts []string, n int) opLatency {
	for i := 0; i < 100; i++ {
		f(prompts[i%len(prompts)])
	}
	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	d := make([]time.Duration, n)
	for i := range d {
		start := time.Now()
		f(prompts[i%len(prompts)])
		d[i] = time.Since(start)
	}
	runtime.ReadMemStats(&after)
	slices.Sort(d)
	us := func(x time.Duration) float64 { return float64(x.Nanoseconds()) / 1e3 }
	return opLatency{Op: name, N: n, P50us: us(d[n/2]), P99us: us(d[n*99/100]), MaxUs: us(d[n-1]),
		AllocsPerOp: float64(after.Mallocs-before.Mallocs) / float64(n),
		BytesPerOp:  float64(after.TotalAlloc-before.TotalAlloc) / float64(n)}
}

// loadComponent serves api in this process and posts scans to it from
// o.concurrency clients for o.duration.
func loadComponent(ctx context.Context, o complianceOptions, prompts []string, api *httpapi.API) (componentThrpt, error) {
	srv := httptest.NewServer(api.Handler())
	defer srv.Close()
	bodies := make([][]byte, len(prompts))
	for i, p := range prompts {
		bodies[i], _ = json.Marshal(map[string]string{"content": p, "user_id": "bench", "org_id": "bench"})
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: o.concurrency}}
	ctx, cancel := context.WithTimeout(ctx, o.duration)
	defer cancel()
	var (
		mu   sync.Mutex
		lat  []time.Duration
		errs int
		wg   sync.WaitGroup
	)
	start := time.Now()
	for w := 0; w < o.concurrency; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			var mine []time.Duration
			bad := 0
			for i := w; ctx.Err() == nil; i += o.concurrency {
				req, _ := http.NewRequestWithContext(ctx, "POST", srv.URL+"/v1/compliance/scan", bytes.NewReader(bodies[i%len(bodies)]))
				req.Header.Set("Authorization", "Bearer bench")
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					if ctx.Err() == nil {
						bad++
					}
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					bad++
					continue
				}
				mine = append(mine, time.Since(t0))
			}
			mu.Lock()
			lat = append(lat, mine...)
			errs += bad
			mu.Unlock()
		}(w)
	}
	wg.Wait()
	elapsed := time.Since(start)
	out := componentThrpt{Concurrency: o.concurrency, Requests: len(lat), Errors: errs, Cores: runtime.GOMAXPROCS(0)}
	if len(lat) == 0 {
		return out, errors.New("no scan answered")
	}
	slices.Sort(lat)
	ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1e3 }
	out.PerSecond = float64(len(lat)) / elapsed.Seconds()
	out.P50ms, out.P99ms = ms(lat[len(lat)/2]), ms(lat[len(lat)*99/100])
	return out, nil
}

func writeComplianceTable(w io.Writer, r *complianceReport) {
	fmt.Fprintf(w, "compliance engine, %d prompts of ~%d bytes, one core (GOMAXPROCS 1):\n", r.Prompts, r.PromptBytes)
	fmt.Fprintf(w, "%-18s %7s %9s %9s %9s %9s %10s\n", "op", "n", "p50 µs", "p99 µs", "max µs", "allocs", "bytes")
	for _, l := range r.OneCore {
		fmt.Fprintf(w, "%-18s %7d %9.1f %9.1f %9.1f %9.1f %10.0f\n", l.Op, l.N, l.P50us, l.P99us, l.MaxUs, l.AllocsPerOp, l.BytesPerOp)
	}
	c := r.Component
	fmt.Fprintf(w, "component POST /v1/compliance/scan, %d clients in process, %d cores: %.0f req/s, p50 %.2f ms, p99 %.2f ms (%d answered, %d errors)\n",
		c.Concurrency, c.Cores, c.PerSecond, c.P50ms, c.P99ms, c.Requests, c.Errors)
}
