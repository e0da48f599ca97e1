package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// -variants measures the same scenarios with svc under several settings
// in one run: each variant a fresh svc (or two processes, for the split
// one), in rounds, the order of the variants rotating from round to
// round, each svc phase with its own direct phase just before it. The
// figures to read are the medians over the rounds, and the ratios to each
// variant's reference (variantRefs): audit-off for audit-on,
// audit-redis-off for the Redis variants, audit-on for alerts-hang.

// Variant names.
const (
	variantAuditOff   = "audit-off"   // SVC_AUDIT_ENABLED=false: the reference
	variantAuditOn    = "audit-on"    // the embedded default: spool, in-process bridge into SQLite
	variantAuditRedis = "audit-redis" // Redis + PostgreSQL: proxy and management, and a bridge process
	variantAlertsHang = "alerts-hang" // audit-on with a Slack webhook that never answers, every request slow
	// preset-five: every request checked, prompt and answer, under a
	// preset of five policies (SVC_DEFAULT_PRESET); compared with
	// audit-on, the same svc without a preset. Use -prompt-bytes 4096.
	variantPreset = "preset-five"
	// audit-redis without the bridge process: entries spooled and
	// forwarded to Redis, nothing drains them while the load runs (the
	// request path's cost without the draining's).
	variantNoDrain = "audit-redis-nodrain"
	// audit-redis's setup with audit off: the reference of the Redis
	// variants, whose KV store and database differ from the embedded one.
	variantRedisOff = "audit-redis-off"
)

var variantNames = []string{variantAuditOff, variantAuditOn, variantRedisOff, variantAuditRedis, variantNoDrain, variantAlertsHang, variantPreset}

// variantRefs are the variants each one is compared with, when it ran;
// otherwise a variant is compared with audit-off, or the first one.
var variantRefs = map[string]string{
	variantAuditOn:    variantAuditOff,
	variantAuditRedis: variantRedisOff,
	variantNoDrain:    variantRedisOff,
	variantAlertsHang: variantAuditOn,
	variantPreset:     variantAuditOn,
}

// variant is one setting of svc.
type variant struct {
	name  string
	env   []string // svc's settings beyond the defaults
	split bool     // Redis + PostgreSQL, SERVICE_TYPE=proxy,api-server …
	drain bool     // … and a bridge process
	hang  bool     // SVC_SLACK_WEBHOOK_URL is the hanging receiver
	// preset: the five-policy preset is made after svc starts and is the
	// default preset of every caller.
	preset bool
	// writes: a bridge writes the entries of the variant's requests (audit
	// on, and a bridge in the process or beside it).
	writes bool
}

// parseVariants reads -variants; audit-redis needs -redis and -postgres.
func parseVariants(list string, redisURL, pgURL string) ([]variant, error) {
	var out []variant
	seen := map[string]bool{}
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if seen[name] {
			return nil, fmt.Errorf("-variants: %q twice", name)
		}
		seen[name] = true
		v := variant{name: name}
		switch name {
		case variantAuditOff:
			v.env = []string{"SVC_AUDIT_ENABLED=false"}
		case variantAuditOn:
			v.writes = true
		case variantAuditRedis, variantNoDrain, variantRedisOff:
			if redisURL == "" || pgURL == "" {
				return nil, fmt.Errorf("-variants: %s needs -redis and -postgres", name)
			}
			v.split, v.drain = true, name == variantAuditRedis
			v.writes = v.drain
			if name == variantRedisOff {
				v.env = []string{"SVC_AUDIT_ENABLED=false"}
			}
		case variantPreset:
			v.env = []string{"SVC_DEFAULT_PRESET=" + benchPresetName}
			v.preset, v.writes = true, true
		case variantAlertsHang:
			// The lowest threshold config allows: every request of a
			// millisecond or more is slow. The watch raises one
			// SlowRequest per provider per window (10 s at least), the
			// notifier one per subject per dedup period (1 s at least).
			v.env = []string{"SVC_ALERT_SLOW_MS=1", "SVC_ALERT_WINDOW=10s", "SVC_ALERT_DEDUP=1s"}
			v.hang, v.writes = true, true
		default:
			return nil, fmt.Errorf("-variants: unknown variant %q (want %s)", name, strings.Join(variantNames, ", "))
		}
		out = append(out, v)
	}
	return out, nil
}

// variantRun is one round of one variant: every scenario, direct and
// through that variant's svc.
type variantRun struct {
	Round     int              `json:"round"`
	Variant   string           `json:"variant"`
	Scenarios []scenarioResult `json:"scenarios"`
	// BridgeWritten is what the bridge wrote while the scenarios ran
	// (/api/hybrid), -1 when unknown; BridgeBacklog is the hot tier's
	// backlog at the end.
	BridgeWritten int64 `json:"bridge_written"`
	BridgeBacklog int64 `json:"bridge_backlog"`
	// WebhookConns are the connections the hanging receiver took during
	// the run (alerts-hang).
	WebhookConns int64 `json:"webhook_connections,omitempty"`
}

// variantReport is a -variants run.
type variantReport struct {
	Requests int    `json:"requests_per_phase,omitempty"`
	Duration string `json:"duration_per_phase,omitempty"`
	// Rate is -rate: requests per second of an open load, 0 a closed loop.
	Rate      float64 `json:"rate_per_second,omitempty"`
	Warmup    int     `json:"warmup_requests"`
	Rounds    int     `json:"rounds"`
	Reference string  `json:"reference"`
	// Variants are in the order given; Runs in the order they ran.
	Variants     []string        `json:"variants"`
	Runs         []variantRun    `json:"runs"`
	Summary      []variantMedian `json:"summary"`
	Failures     int             `json:"failures"`
	FirstFailure string          `json:"first_failure,omitempty"`
}

// benchVariants runs o.rounds rounds of every variant.
func benchVariants(ctx context.Context, o *options, progress io.Writer) (*variantReport, error) {
	rep := &variantReport{Warmup: o.warmup, Rounds: o.rounds, Reference: o.variants[0].name}
	for _, v := range o.variants {
		rep.Variants = append(rep.Variants, v.name)
		if v.name == variantAuditOff {
			rep.Reference = v.name
		}
	}
	rep.Rate = o.rate
	if o.duration > 0 {
		rep.Duration = o.duration.String()
	} else {
		rep.Requests = o.n
	}
	fake, err := startChild(ctx, "fake upstream", fakeChildEnv(o.fakeAddr, o.chunks, o.chunkDelay))
	if err != nil {
		return nil, err
	}
	defer stopChild(fake, progress)

	bin := o.svcBin
	if bin == "" {
		dir, err := os.MkdirTemp("", "svcbench-bin-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(dir)
		bin = filepath.Join(dir, "svc")
		fmt.Fprintln(progress, "svcbench: building ./cmd/svc …")
		if err := buildSvc(ctx, bin); err != nil {
			return nil, err
		}
	}
	hook, err := startHangingReceiver()
	if err != nil {
		return nil, err
	}
	defer hook.close()

	client := newClient(max(1, maxOf(o.concurrency)), o.timeout)
	defer client.CloseIdleConnections()
	for r := range o.rounds {
		for k := range o.variants {
			v := o.variants[(r+k)%len(o.variants)]
			conns := hook.conns.Load()
			run, err := runVariant(ctx, o, v, bin, fake.url, hook.url, client, progress)
			if err != nil {
				return nil, fmt.Errorf("round %d, %s: %w", r+1, v.name, err)
			}
			run.Round, run.WebhookConns = r+1, hook.conns.Load()-conns
			rep.Runs = append(rep.Runs, *run)
			for _, sc := range run.Scenarios {
				for _, s := range []phaseStats{sc.Direct, sc.Svc} {
					rep.Failures += s.Failures
					if rep.FirstFailure == "" && s.FirstError != "" {
						rep.FirstFailure = s.FirstError
					}
				}
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	rep.Summary = summarize(rep)
	return rep, nil
}

func maxOf(xs []int) int {
	m := 0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}

// runVariant starts v's svc, runs every scenario against it and stops it.
func runVariant(ctx context.Context, o *options, v variant, bin, upstream, hookURL string, client *http.Client, progress io.Writer) (_ *variantRun, err error) {
	spec := gatewaySpec{bin: bin, upstream: upstream, log: progress, extraEnv: append(append([]string{}, v.env...), o.svcEnv...), cpus: o.svcCPUs, bridgeCPUs: o.bridgeCPUs}
	if v.hang {
		spec.extraEnv = append([]string{"SVC_SLACK_WEBHOOK_URL=" + hookURL}, spec.extraEnv...)
	}
	if v.split {
		env, cleanup, err := splitSetup(ctx, o.redisURL, o.postgresURL)
		if err != nil {
			return nil, err
		}
		defer func() {
			if cerr := cleanup(); cerr != nil {
				fmt.Fprintln(progress, "svcbench: warning: cleaning up after audit-redis:", cerr)
			}
		}()
		spec.extraEnv = append(env, spec.extraEnv...)
		spec.serviceType, spec.bridge = "proxy,api-server", v.drain
	}
	gw, err := startGateway(ctx, spec)
	if err != nil {
		return nil, err
	}
	defer gw.stop(false)
	if v.preset {
		if err := makeBenchPreset(ctx, gw); err != nil {
			return nil, err
		}
	}
	before := bridgeWritten(ctx, gw)

	run := &variantRun{Variant: v.name, BridgeWritten: -1}
	svc := target{name: "svc", url: gw.proxyURL + "/v1/chat/completions", auth: "Bearer " + gw.vkey}
	direct := target{name: "direct", url: upstream + "/chat/completions", auth: "Bearer " + upstreamKey}
	for _, mode := range o.modes {
		body := requestBodySized(o.model, mode == modeStream, o.promptBytes)
		for _, c := range o.concurrency {
			// phase measures n requests (or d long) on t; warm names a
			// warm-up in a warning.
			phase := func(t target, n int, d time.Duration, warm bool) phaseStats {
				what := v.name + " " + t.name
				if warm {
					what = "warm-up " + what
				}
				return stats(measuredPhase(ctx, client, progress, what,
					phaseSpec{target: t, body: body, stream: mode == modeStream, concurrency: c, n: n, duration: d, rate: o.rate}))
			}
			sc := scenarioResult{Mode: mode, Concurrency: c, AllocsPerRequest: -1, CPUPerRequest: -1, ProxyCPUPerRequest: -1}
			if o.warmup > 0 {
				phase(direct, o.warmup, 0, true)
			}
			sc.Direct = phase(direct, o.n, o.duration, false)
			if o.warmup > 0 {
				w0 := bridgeWritten(ctx, gw)
				warm := phase(svc, o.warmup, 0, true)
				if v.writes {
					drained(ctx, gw, w0, warm.Requests)
				}
			}
			m0, err0 := mallocs(ctx, client, gw.proxyURL+"/metrics")
			w0 := bridgeWritten(ctx, gw)
			cpu0, proxy0, errc0 := gw.cpu()
			sc.Svc = phase(svc, o.n, o.duration, false)
			m1, err1 := mallocs(ctx, client, gw.proxyURL+"/metrics")
			if err0 == nil && err1 == nil && sc.Svc.Requests > 0 {
				sc.AllocsPerRequest = (m1 - m0) / float64(sc.Svc.Requests)
			}
			if v.writes {
				wait, ok := drained(ctx, gw, w0, sc.Svc.Requests)
				sc.DrainMS = float64(wait) / float64(time.Millisecond)
				if !ok {
					fmt.Fprintf(progress, "svcbench: warning: %s %s c=%d: the bridge had not written the phase's entries %s after it\n", v.name, mode, c, wait)
				}
			}
			if cpu1, proxy1, errc1 := gw.cpu(); errc0 == nil && errc1 == nil && sc.Svc.Requests > 0 {
				perRequest := func(d time.Duration) float64 {
					return float64(d) / float64(time.Microsecond) / float64(sc.Svc.Requests)
				}
				sc.CPUPerRequest, sc.ProxyCPUPerRequest = perRequest(cpu1-cpu0), perRequest(proxy1-proxy0)
			}
			compare(&sc)
			run.Scenarios = append(run.Scenarios, sc)
			fmt.Fprintf(progress, "svcbench: %s %s c=%d: direct p50 %s, svc p50 %s p99 %s (%.0f rps), %d failed\n",
				v.name, mode, c, fmtMS(sc.Direct.P50), fmtMS(sc.Svc.P50), fmtMS(sc.Svc.P99), sc.Svc.RPS, sc.Direct.Failures+sc.Svc.Failures)
			if ctx.Err() != nil {
				return run, ctx.Err()
			}
		}
	}
	if after := bridgeWritten(ctx, gw); before.written >= 0 && after.written >= 0 {
		run.BridgeWritten, run.BridgeBacklog = after.written-before.written, after.backlog
	}
	return run, nil
}

// splitSetup makes what the audit-redis variant's processes share: a fresh
// PostgreSQL schema, a Redis prefix of its own and a master key; cleanup
// drops the schema and deletes the prefix's keys.
func splitSetup(ctx context.Context, redisURL, pgURL string) (env []string, cleanup func() error, err error) {
	schema := "svcbench_" + randomHex(6)
	drop, err := createSchema(ctx, pgURL, schema, true)
	if err != nil {
		return nil, nil, err
	}
	dbURL, err := withSearchPath(pgURL, schema)
	if err != nil {
		return nil, nil, errors.Join(err, drop())
	}
	opt, err := redis.ParseURL(redisURL)
	if err != nil {
		return nil, nil, errors.Join(fmt.Errorf("-redis: %w", err), drop())
	}
	prefix := "svcbench:" + schema + ":"
	cleanup = func() error {
		rdb := redis.NewClient(opt)
		defer rdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var errs []error
		iter := rdb.Scan(ctx, 0, prefix+"*", 1000).Iterator()
		for iter.Next(ctx) {
			errs = append(errs, rdb.Del(ctx, iter.Val()).Err())
		}
		return errors.Join(append(errs, iter.Err(), drop())...)
	}
	return []string{"DATABASE_URL=" + dbURL, "KEYSTORE_REDIS_URL=" + redisURL, "SVC_REDIS_PREFIX=" + prefix,
		"SVC_MASTER_KEY=" + randomHex(32)}, cleanup, nil
}

// hybridFigures are the bridge's written count and the hot tier's backlog;
// written is -1 when the bridge does not answer.
// drainLimit bounds how long svcbench waits after a phase for the bridge
// to write its entries.
const drainLimit = time.Minute

// drained waits until the bridge has written n entries more than w0 says
// and the hot tier's backlog is empty (the phase's entries are in SQL),
// polling /api/hybrid, and returns how long that took after the call and
// whether it happened within drainLimit; at once when the bridge's figures
// cannot be read.
func drained(ctx context.Context, gw *gateway, w0 hybridFigures, n int) (time.Duration, bool) {
	start := time.Now()
	for {
		h := bridgeWritten(ctx, gw)
		if w0.written < 0 || h.written < 0 || (h.written-w0.written >= int64(n) && h.backlog == 0) {
			return time.Since(start), true
		}
		if time.Since(start) > drainLimit || ctx.Err() != nil {
			return time.Since(start), false
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type hybridFigures struct{ written, backlog int64 }

// bridgeWritten reads the bridge's /api/hybrid.
func bridgeWritten(ctx context.Context, gw *gateway) hybridFigures {
	out := hybridFigures{written: -1}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	status, body, err := getJSON(ctx, http.DefaultClient, gw.bridgeURL+"/api/hybrid", gw.admin)
	if err != nil || status != http.StatusOK {
		return out
	}
	var h struct {
		Hot struct {
			Backlog int64 `json:"backlog"`
		} `json:"hot"`
		Bridge struct {
			Written int64 `json:"written"`
		} `json:"bridge"`
	}
	if json.Unmarshal(body, &h) == nil {
		out = hybridFigures{written: h.Bridge.Written, backlog: h.Hot.Backlog}
	}
	return out
}

// hangingReceiver is a webhook receiver that reads what it is sent and
// never answers, holding every connection until it is closed.
type hangingReceiver struct {
	url   string
	ln    net.Listener
	conns atomic.Int64
	mu    sync.Mutex
	open  []net.Conn
}

func startHangingReceiver() (*hangingReceiver, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &hangingReceiver{url: "http://" + ln.Addr().String() + "/hooks/slack", ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.conns.Add(1)
			h.mu.Lock()
			h.open = append(h.open, c)
			h.mu.Unlock()
			go func() { _, _ = io.Copy(io.Discard, c) }()
		}
	}()
	return h, nil
}

// close stops the receiver and closes the connections it holds.
func (h *hangingReceiver) close() {
	_ = h.ln.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.open {
		_ = c.Close()
	}
}
