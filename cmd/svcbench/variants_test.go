package main

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestParseVariantFlags(t *testing.T) {
	names := func(vs []variant) []string {
		var out []string
		for _, v := range vs {
			out = append(out, v.name)
		}
		return out
	}
	o, err := parseFlags(nil, &bytes.Buffer{})
	if err != nil || o.variants != nil || o.rounds != 3 {
		t.Fatalf("default: variants %v, rounds %d, %v", o.variants, o.rounds, err)
	}
	for _, tt := range []struct {
		args []string
		want []string
	}{
		{[]string{"-variants", "audit-off, audit-on"}, []string{"audit-off", "audit-on"}},
		{[]string{"-variants", "all"}, []string{"audit-off", "audit-on", "alerts-hang"}},
		{[]string{"-variants", "all", "-redis", "redis://h", "-postgres", "postgres://h/db"}, []string{"audit-off", "audit-on", "audit-redis-off", "audit-redis", "audit-redis-nodrain", "alerts-hang"}},
		{[]string{"-variants", "audit-redis,audit-off", "-redis", "redis://h", "-postgres", "postgres://h/db", "-rounds", "1"}, []string{"audit-redis", "audit-off"}},
	} {
		o, err := parseFlags(tt.args, &bytes.Buffer{})
		if err != nil {
			t.Errorf("%q: %v", tt.args, err)
			continue
		}
		if diff := cmp.Diff(tt.want, names(o.variants)); diff != "" {
			t.Errorf("%q (-want +got):\n%s", tt.args, diff)
		}
	}
	o, _ = parseFlags([]string{"-variants", "audit-off,alerts-hang,audit-redis", "-redis", "r", "-postgres", "p"}, &bytes.Buffer{})
	if v := o.variants[0]; v.name != "audit-off" || !slicesHas(v.env, "SVC_AUDIT_ENABLED=false") {
		t.Errorf("audit-off: %+v", v)
	}
	if v := o.variants[1]; !v.hang || !slicesHas(v.env, "SVC_ALERT_SLOW_MS=1") {
		t.Errorf("alerts-hang: %+v", v)
	}
	if v := o.variants[2]; !v.split || !v.drain {
		t.Errorf("audit-redis: %+v", v)
	}
	o, _ = parseFlags([]string{"-variants", "audit-redis-nodrain,audit-redis-off", "-redis", "r", "-postgres", "p"}, &bytes.Buffer{})
	if v := o.variants[0]; !v.split || v.drain || len(v.env) != 0 {
		t.Errorf("audit-redis-nodrain: %+v", v)
	}
	if v := o.variants[1]; !v.split || v.drain || !slicesHas(v.env, "SVC_AUDIT_ENABLED=false") {
		t.Errorf("audit-redis-off: %+v", v)
	}
	for _, args := range [][]string{
		{"-variants", "audit-of"}, {"-variants", "audit-on,audit-on"}, {"-variants", "audit-redis"},
		{"-variants", "audit-redis", "-redis", "redis://h"}, {"-variants", "audit-redis-nodrain"}, {"-variants", "audit-on", "-rounds", "0"},
		{"-variants", "audit-on", "-gateway", "http://h:1", "-vkey", "k"}, {"-variants", "audit-on", "-fake-inprocess"},
		{"-variants", "audit-on", "-cpuprofile-svc", "p"}, {"-variants", "audit-on,"},
	} {
		if _, err := parseFlags(args, &bytes.Buffer{}); err == nil {
			t.Errorf("parseFlags(%q): got no error", args)
		}
	}
}

func slicesHas(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

func TestMedianAndSummary(t *testing.T) {
	for _, tt := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := median(tt.in); got != tt.want {
			t.Errorf("median(%v): got %v, want %v", tt.in, got, tt.want)
		}
	}
	sc := func(added50, added99, rps, cpu, drain float64) []scenarioResult {
		return []scenarioResult{{Mode: modeNonStream, Concurrency: 1, AddedP50: added50, AddedP99: added99, Svc: phaseStats{RPS: rps},
			AllocsPerRequest: -1, CPUPerRequest: cpu, DrainMS: drain}}
	}
	rep := &variantReport{Rounds: 2, Reference: variantAuditOff, Variants: []string{variantAuditOff, variantAuditOn, variantAlertsHang}, Runs: []variantRun{
		{Round: 1, Variant: variantAuditOff, Scenarios: sc(0.2, 1, 1000, 100, 0), BridgeWritten: 0},
		{Round: 1, Variant: variantAuditOn, Scenarios: sc(0.3, 1, 900, 150, 40), BridgeWritten: 100},
		{Round: 1, Variant: variantAlertsHang, Scenarios: sc(0.3, 2, 900, 165, 60), BridgeWritten: -1},
		{Round: 2, Variant: variantAuditOn, Scenarios: sc(0.2, 2, 1000, 132, 20), BridgeWritten: 300},
		{Round: 2, Variant: variantAlertsHang, Scenarios: sc(0.1, 2, 1000, -1, 0), BridgeWritten: -1},
		{Round: 2, Variant: variantAuditOff, Scenarios: sc(0.4, 4, 1000, 120, 0), BridgeWritten: 0},
	}}
	got := summarize(rep)
	want := []variantMedian{
		{Variant: variantAuditOff, Mode: modeNonStream, Concurrency: 1, Rounds: 2, AddedP50: 0.3, AddedP99: 2.5, RPS: 1000, AllocsPerRequest: -1,
			CPUPerRequest: 110, BridgeWritten: 0},
		// Round ratios: p50 1.5 and 0.5, p99 1 and 0.5, rps 0.9 and 1, CPU 1.5 and 1.1.
		{Variant: variantAuditOn, Mode: modeNonStream, Concurrency: 1, Rounds: 2, AddedP50: 0.25, AddedP99: 1.5, RPS: 950, AllocsPerRequest: -1,
			CPUPerRequest: 141, DrainMS: 30, AddedP50Ratio: 1, AddedP99Ratio: 0.75, RPSRatio: 0.95, CPURatio: 1.3, Versus: variantAuditOff, BridgeWritten: 200},
		// Against audit-on: p50 1 and 0.5, p99 2 and 1, rps 1 and 1, CPU 1.1
		// (round 2's CPU unknown).
		{Variant: variantAlertsHang, Mode: modeNonStream, Concurrency: 1, Rounds: 2, AddedP50: 0.2, AddedP99: 2, RPS: 950, AllocsPerRequest: -1,
			CPUPerRequest: 165, DrainMS: 30, AddedP50Ratio: 0.75, AddedP99Ratio: 1.5, RPSRatio: 1, CPURatio: 1.1, Versus: variantAuditOn, BridgeWritten: -1},
	}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
}

// The hanging receiver takes the connection, reads the request and never
// answers.
func TestHangingReceiver(t *testing.T) {
	h, err := startHangingReceiver()
	if err != nil {
		t.Fatal(err)
	}
	defer h.close()
	c := &http.Client{Timeout: 200 * time.Millisecond}
	resp, err := c.Post(h.url, "application/json", strings.NewReader(`{"text":"x"}`))
	if err == nil {
		resp.Body.Close()
		t.Fatalf("got an answer, %s", resp.Status)
	}
	if n := h.conns.Load(); n != 1 {
		t.Errorf("connections: got %d, want 1", n)
	}
}

// Two rounds of three variants with the test binary as svc: the variants
// run in rotating order, each svc gets its settings (the fake bridge
// counts nothing with audit off; only alerts-hang's svc posts to the
// hanging webhook), and the summary names its references.
func TestRunVariants(t *testing.T) {
	if testing.Short() {
		t.Skip("starts subprocesses")
	}
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-svc-bin", os.Args[0], "-svc-env", fakeSvcEnv + "=1",
		"-variants", "audit-off,audit-on,alerts-hang", "-rounds", "2", "-n", "20", "-warmup", "2", "-c", "2", "-modes", "non-stream", "-json"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &out, &errOut)
	}
	table, js, ok := strings.Cut(out.String(), "\n{")
	if !ok {
		t.Fatalf("no JSON after the table:\n%s", &out)
	}
	for _, want := range []string{"non-stream c=2", "audit-off", "audit-on", "alerts-hang", "added p50 × ref", "CPU × ref", "failed requests: 0",
		"audit-on: the bridge wrote per run 22 (backlog 0), 22 (backlog 0)", "alerts-hang: the hanging webhook took 1, 1 connections per run"} {
		if !strings.Contains(table, want) {
			t.Errorf("table has no %q:\n%s", want, table)
		}
	}
	var rep variantReport
	if err := json.Unmarshal([]byte("{"+js), &rep); err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, r := range rep.Runs {
		order = append(order, r.Variant)
		wantWritten := int64(22)
		if r.Variant == variantAuditOff {
			wantWritten = 0
		}
		if r.BridgeWritten != wantWritten || len(r.Scenarios) != 1 || r.Scenarios[0].Svc.Requests != 20 || r.Scenarios[0].AllocsPerRequest <= 0 ||
			r.Scenarios[0].CPUPerRequest < 0 {
			t.Errorf("run %d %s: written %d, scenarios %+v", r.Round, r.Variant, r.BridgeWritten, r.Scenarios)
		}
		if hooked := r.WebhookConns > 0; hooked != (r.Variant == variantAlertsHang) {
			t.Errorf("run %d %s: %d webhook connections", r.Round, r.Variant, r.WebhookConns)
		}
	}
	if diff := cmp.Diff([]string{"audit-off", "audit-on", "alerts-hang", "audit-on", "alerts-hang", "audit-off"}, order); diff != "" {
		t.Errorf("run order (-want +got):\n%s", diff)
	}
	if len(rep.Summary) != 3 || rep.Summary[0].Versus != "" || rep.Summary[1].Versus != variantAuditOff || rep.Summary[2].Versus != variantAuditOn ||
		rep.Summary[1].RPSRatio <= 0 || rep.Summary[1].Rounds != 2 {
		t.Errorf("summary: %+v", rep.Summary)
	}
}

// audit-redis starts two processes (proxy and management; the bridge) on
// a schema and a Redis prefix of their own, and removes both after.
func TestRunVariantSplit(t *testing.T) {
	pg, rd := os.Getenv("SVC_TEST_DATABASE_URL"), os.Getenv("SVC_TEST_REDIS_URL")
	if testing.Short() || pg == "" || rd == "" {
		t.Skip("needs SVC_TEST_DATABASE_URL and SVC_TEST_REDIS_URL, and starts subprocesses")
	}
	before := benchSchemas(t, pg)
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"-svc-bin", os.Args[0], "-svc-env", fakeSvcEnv + "=1", "-redis", rd, "-postgres", pg,
		"-variants", "audit-redis,audit-redis-nodrain", "-rounds", "1", "-n", "10", "-warmup", "0", "-c", "1", "-modes", "stream"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, &out, &errOut)
	}
	// The fake bridge process served /api/hybrid: it was started, apart,
	// for audit-redis only.
	if !strings.Contains(out.String(), "audit-redis: the bridge wrote per run 0 (backlog 0)") || strings.Contains(out.String(), "audit-redis-nodrain: the bridge") {
		t.Errorf("bridge processes:\n%s", &out)
	}
	for s := range benchSchemas(t, pg) {
		if !before[s] {
			t.Errorf("schema %s left behind", s)
		}
	}
}

// benchSchemas are the svcbench_ schemas of variants on the server (not
// `svcbench logs`' ones).
func benchSchemas(t *testing.T, pg string) map[string]bool {
	db, err := sql.Open("pgx", pg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT nspname FROM pg_namespace WHERE nspname LIKE 'svcbench\_%' AND nspname NOT LIKE 'svcbench\_logs\_%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out[s] = true
	}
	if err := rows.Err(); err != nil && !errors.Is(err, sql.ErrNoRows) {
		t.Fatal(err)
	}
	return out
}

func TestStatCPU(t *testing.T) {
	tests := []struct {
		name, stat string
		want       time.Duration
		wantErr    bool
	}{
		{"svc", "4242 (svc) S 1 4242 4242 0 -1 4194560 9066 0 0 0 1234 566 0 0 20 0 12 0 9999 1500000000 5000", 18 * time.Second, false},
		{"a name with spaces and parentheses", "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 1 1 1", 70 * time.Millisecond, false},
		{"no name", "7 svc R 1 7 7 0 -1 0 0 0 0 0 3 4", 0, true},
		{"cut short", "7 (svc) R 1 7 7 0 -1 0 0 0 0 0 3", 0, true},
		{"not a number", "7 (svc) R 1 7 7 0 -1 0 0 0 0 0 x 4 0", 0, true},
		{"negative", "7 (svc) R 1 7 7 0 -1 0 0 0 0 0 -3 4 0", 0, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := statCPU(tc.stat)
			if (err != nil) != tc.wantErr || got != tc.want {
				t.Errorf("statCPU: got %v, %v; want %v, an error: %v", got, err, tc.want, tc.wantErr)
			}
		})
	}
}
