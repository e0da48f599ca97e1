// Command svcbench measures the latency svc adds to a request and the
// throughput it keeps, against the fake OpenAI upstream of
// internal/providertest, in one run: for each scenario (streaming or not, at
// each concurrency) it sends the same requests first directly to the fake,
// then through svc, and reports the difference at the same percentile, with
// svc's allocations per request and its memory.
//
// By default it starts the fake in-process, builds ./cmd/svc, and runs
// `svc serve` on free loopback ports with its data in a temporary directory:
//
//	go run ./cmd/svcbench                    # the full run, about 1–2 minutes
//	go run ./cmd/svcbench -n 2000 -c 1,16    # a quick one
//	go run ./cmd/svcbench -gateway http://127.0.0.1:7775 -vkey sk-svc-… -fake-addr 127.0.0.1:9999
//
// With -gateway it measures an svc that is already running instead; that svc
// should use the fake as its OpenAI upstream (start svcbench with -fake-addr
// and point OPENAI_API_BASE at http://<fake-addr>/v1 with OPENAI_API_KEY=sk-bench).
//
// svcbench exits 1 if any request failed, after reporting how many and the
// first error. It reads /proc, so svc's memory figures need Linux.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/svc-gateway/svc/internal/providertest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// The two request modes.
const (
	modeNonStream = "non-stream"
	modeStream    = "stream"
)

// options are the command's flags.
type options struct {
	concurrency []int
	modes       []string
	n           int
	warmup      int
	duration    time.Duration
	chunks      int
	chunkDelay  time.Duration
	model       string
	timeout     time.Duration
	svcBin      string
	svcEnv      []string
	keep        bool
	gateway     string
	vkey        string
	svcPID      int
	fakeAddr    string
	json        bool
}

func parseFlags(args []string, stderr io.Writer) (*options, error) {
	fs := flag.NewFlagSet("svcbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	o := &options{}
	conc := fs.String("c", "1,64", "comma-separated concurrency levels")
	modes := fs.String("modes", modeNonStream+","+modeStream, "comma-separated request modes: "+modeNonStream+", "+modeStream)
	fs.IntVar(&o.n, "n", 40000, "requests per measured phase (the default run takes about a minute on 2 cores)")
	fs.IntVar(&o.warmup, "warmup", -1, "requests per warm-up phase (default n/10, at least 100)")
	fs.DurationVar(&o.duration, "duration", 0, "run each measured phase this long instead of -n requests")
	fs.IntVar(&o.chunks, "chunks", providertest.DefaultChunks, "content chunks per streamed answer of the fake")
	fs.DurationVar(&o.chunkDelay, "chunk-delay", 0, "pause between the fake's stream chunks")
	fs.StringVar(&o.model, "model", "gpt-4o-mini", "model to ask for")
	fs.DurationVar(&o.timeout, "timeout", 30*time.Second, "limit for one request")
	fs.StringVar(&o.svcBin, "svc-bin", "", "prebuilt svc binary (default: go build ./cmd/svc)")
	fs.Func("svc-env", "extra KEY=VALUE for svc's environment (repeatable), e.g. SVC_LOG_LEVEL=warn", func(s string) error {
		if !strings.Contains(s, "=") {
			return errors.New("want KEY=VALUE")
		}
		o.svcEnv = append(o.svcEnv, s)
		return nil
	})
	fs.BoolVar(&o.keep, "keep", false, "keep svc's temporary directory (data and svc.log)")
	fs.StringVar(&o.gateway, "gateway", "", "measure this running svc (base URL of its proxy) instead of starting one")
	fs.StringVar(&o.vkey, "vkey", "", "virtual key for -gateway")
	fs.IntVar(&o.svcPID, "svc-pid", 0, "process ID of the -gateway svc, for its memory figures")
	fs.StringVar(&o.fakeAddr, "fake-addr", "127.0.0.1:0", "listen address of the fake upstream")
	fs.BoolVar(&o.json, "json", false, "print the results as JSON too")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}

	for _, f := range strings.Split(*conc, ",") {
		c, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || c < 1 {
			return nil, fmt.Errorf("-c: bad concurrency %q", f)
		}
		o.concurrency = append(o.concurrency, c)
	}
	for _, m := range strings.Split(*modes, ",") {
		switch m = strings.TrimSpace(m); m {
		case modeNonStream, modeStream:
			o.modes = append(o.modes, m)
		default:
			return nil, fmt.Errorf("-modes: unknown mode %q (want %s or %s)", m, modeNonStream, modeStream)
		}
	}
	switch {
	case o.n < 1 && o.duration <= 0:
		return nil, errors.New("-n must be at least 1 (or set -duration)")
	case o.chunks < 1:
		return nil, errors.New("-chunks must be at least 1")
	case (o.gateway == "") != (o.vkey == ""):
		return nil, errors.New("-gateway and -vkey go together")
	case o.svcPID != 0 && o.gateway == "":
		return nil, errors.New("-svc-pid is for -gateway")
	}
	if o.warmup < 0 {
		o.warmup = max(o.n/10, 100)
	}
	o.gateway = strings.TrimSuffix(strings.TrimSuffix(o.gateway, "/"), "/v1")
	return o, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stderr, "svcbench:", err)
		}
		return 2
	}
	rep, err := bench(ctx, o, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "svcbench:", err)
		return 1
	}
	if err := writeTable(stdout, rep); err != nil {
		fmt.Fprintln(stderr, "svcbench:", err)
		return 1
	}
	if o.json {
		fmt.Fprintln(stdout)
		if err := writeJSON(stdout, rep); err != nil {
			fmt.Fprintln(stderr, "svcbench:", err)
			return 1
		}
	}
	if rep.Failures > 0 {
		return 1
	}
	return 0
}

// bench starts what it needs and runs every scenario.
func bench(ctx context.Context, o *options, progress io.Writer) (*report, error) {
	fake, err := providertest.StartOpenAI(o.fakeAddr,
		providertest.WithRecording(0),
		providertest.WithAPIKey(upstreamKey),
		providertest.WithChunks(o.chunks),
		providertest.WithChunkDelay(o.chunkDelay),
	)
	if err != nil {
		return nil, fmt.Errorf("starting the fake upstream: %w", err)
	}
	defer fake.Close()

	gw := &gateway{proxyURL: o.gateway, vkey: o.vkey, pid: o.svcPID}
	if o.gateway == "" {
		gw, err = startGateway(ctx, gatewaySpec{bin: o.svcBin, upstream: fake.URL(), extraEnv: o.svcEnv, keepDir: o.keep, log: progress})
		if err != nil {
			return nil, err
		}
		defer gw.stop(o.keep)
		if o.keep {
			fmt.Fprintln(progress, "svcbench: svc's directory:", gw.dir)
		}
	}

	rep := &report{
		Warmup:     o.warmup,
		Chunks:     o.chunks,
		ChunkDelay: o.chunkDelay.String(),
		Gateway:    gw.proxyURL,
	}
	if o.duration > 0 {
		rep.Duration = o.duration.String()
	} else {
		rep.Requests = o.n
	}
	maxC := 1
	for _, c := range o.concurrency {
		maxC = max(maxC, c)
	}
	client := newClient(maxC, o.timeout)
	defer client.CloseIdleConnections()
	direct := target{name: "direct", url: fake.URL() + "/chat/completions", auth: "Bearer " + upstreamKey}
	viaSvc := target{name: "svc", url: gw.proxyURL + "/v1/chat/completions", auth: "Bearer " + gw.vkey}

	for _, mode := range o.modes {
		stream := mode == modeStream
		body := requestBody(o.model, stream)
		for _, c := range o.concurrency {
			sc := scenarioResult{Mode: mode, Concurrency: c, AllocsPerRequest: -1}
			phase := func(t target, n int, d time.Duration) phaseResult {
				return runPhase(ctx, client, phaseSpec{target: t, body: body, stream: stream, concurrency: c, n: n, duration: d})
			}
			measure := func(t target) phaseResult {
				if o.warmup > 0 {
					phase(t, o.warmup, 0)
				}
				return phase(t, o.n, o.duration)
			}

			d := measure(direct)
			sc.Direct = stats(d)

			// Warm up outside the allocation and memory window.
			if o.warmup > 0 {
				phase(viaSvc, o.warmup, 0)
			}
			before, errBefore := mallocs(ctx, client, gw.proxyURL+"/metrics")
			rss := sampleRSS(gw.pid, 50*time.Millisecond)
			v := phase(viaSvc, o.n, o.duration)
			sc.MaxRSS = rss.done()
			after, errAfter := mallocs(ctx, client, gw.proxyURL+"/metrics")
			sc.Svc = stats(v)
			if errBefore == nil && errAfter == nil && v.requests > 0 {
				sc.AllocsPerRequest = (after - before) / float64(v.requests)
			}
			compare(&sc)
			rep.Scenarios = append(rep.Scenarios, sc)

			for _, r := range []phaseResult{d, v} {
				rep.Failures += r.failures
				if rep.FirstFailure == "" && r.firstError != nil {
					rep.FirstFailure = r.firstError.Error()
				}
			}
			fmt.Fprintf(progress, "svcbench: %s c=%d: direct p50 %s (%.0f rps), via svc p50 %s (%.0f rps), %d failed\n",
				mode, c, fmtMS(sc.Direct.P50), sc.Direct.RPS, fmtMS(sc.Svc.P50), sc.Svc.RPS, d.failures+v.failures)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	if gw.pid != 0 {
		if hwm, err := procStatus(gw.pid, "VmHWM"); err == nil {
			rep.PeakRSS = hwm
		}
	}
	return rep, nil
}

// requestBody is a small, realistic chat request.
func requestBody(model string, stream bool) []byte {
	m, _ := json.Marshal(model)
	b := `{"model":` + string(m) + `,"messages":[` +
		`{"role":"system","content":"You are a concise assistant for an engineering team. Answer in at most three sentences."},` +
		`{"role":"user","content":"What does an AI gateway add between our services and the model providers, and what does it cost in latency?"}` +
		`],"temperature":0.2,"max_tokens":256`
	if stream {
		b += `,"stream":true,"stream_options":{"include_usage":true}`
	}
	return []byte(b + "}")
}
