package alerts_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/svc-gateway/svc/internal/alerts"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/rediskv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// waitFor bounds how long a test waits for something asynchronous before it
// fails (a safety net against a hang, not a measurement).
const waitFor = 10 * time.Second

// receiver is an httptest webhook: it records every body it is sent and
// answers with what answer says for the n-th request (1-based).
type receiver struct {
	srv    *httptest.Server
	bodies chan []byte
	hits   atomic.Int64
}

// newReceiver starts a receiver; answer returns the status of the n-th
// request, or 0 to hang until the request is cancelled.
func newReceiver(t *testing.T, answer func(n int64) int) *receiver {
	t.Helper()
	rc := &receiver{bodies: make(chan []byte, 1024)}
	release := make(chan struct{})
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := rc.hits.Add(1)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("webhook got %s with Content-Type %q, want POST application/json", r.Method, r.Header.Get("Content-Type"))
		}
		b, _ := io.ReadAll(r.Body)
		status := answer(n)
		if status == 0 {
			select {
			case <-r.Context().Done():
			case <-release:
			}
			return
		}
		if status < 300 {
			select {
			case rc.bodies <- b:
			default:
				t.Errorf("receiver buffer full")
			}
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	t.Cleanup(func() { close(release) }) // runs before Close: frees hanging handlers
	return rc
}

func always(status int) func(int64) int { return func(int64) int { return status } }

// next returns the next body the receiver accepted.
func (rc *receiver) next(t *testing.T) []byte {
	t.Helper()
	select {
	case b := <-rc.bodies:
		return b
	case <-time.After(waitFor):
		t.Fatal("no webhook arrived")
		return nil
	}
}

// start builds a Notifier on o (a fresh registry, test defaults for what o
// leaves out) and runs it until the test ends.
func start(t *testing.T, o alerts.Options) *alerts.Notifier {
	t.Helper()
	n := build(t, o)
	storetest.Background(t, n.Run)
	return n
}

func build(t *testing.T, o alerts.Options) *alerts.Notifier {
	t.Helper()
	o.Enabled = true
	if o.Store == nil {
		kv := memkv.New()
		t.Cleanup(func() { kv.Close() })
		o.Store = kv
	}
	if o.Registerer == nil {
		o.Registerer = prometheus.NewRegistry()
	}
	if o.Backoff == 0 {
		o.Backoff = time.Millisecond
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	n, err := alerts.New(o)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return n
}

// counter reads one svc_alerts_* counter from reg.
func counter(t *testing.T, reg *prometheus.Registry, name string, labels ...string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	metric:
		for _, m := range mf.GetMetric() {
			have := map[string]string{}
			for _, l := range m.GetLabel() {
				have[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(labels); i += 2 {
				if have[labels[i]] != labels[i+1] {
					continue metric
				}
			}
			return m.GetCounter().GetValue()
		}
	}
	return 0
}

func alert(subject string) alerts.Alert {
	a := alerts.NewCustom("Test "+subject, "message of "+subject, alerts.Warning, time.Now())
	a.Subject = subject
	return a
}

func TestSendNeverBlocks(t *testing.T) {
	reg := prometheus.NewRegistry()
	n := build(t, alerts.Options{QueueSize: 4, Registerer: reg}) // not running: nothing drains the queue
	queued := 0
	for i := range 100 {
		if n.Send(alert(fmt.Sprint(i))) {
			queued++
		}
	}
	if queued != 4 {
		t.Errorf("queued %d alerts, want 4 (the queue size)", queued)
	}
	if got := counter(t, reg, "svc_alerts_dropped_total", "reason", "queue_full"); got != 96 {
		t.Errorf("svc_alerts_dropped_total{reason=queue_full} = %v, want 96", got)
	}

	var off *alerts.Notifier
	if off.Send(alert("x")) {
		t.Error("a nil Notifier queued an alert")
	}
	disabled, err := alerts.New(alerts.Options{Enabled: false})
	if err != nil {
		t.Fatal(err)
	}
	if disabled.Send(alert("x")) {
		t.Error("a disabled Notifier queued an alert")
	}
	if _, err := disabled.Recent(context.Background(), 10); err != alerts.ErrDisabled {
		t.Errorf("Recent on a disabled Notifier: got %v, want ErrDisabled", err)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		o    alerts.Options
		want string
	}{
		{"plain http", alerts.Options{Enabled: true, Store: memkv.New(), Slack: "http://hooks.example.com/x"}, "SVC_SLACK_WEBHOOK_URL"},
		{"bad scheme", alerts.Options{Enabled: true, Store: memkv.New(), Discord: "ftp://x/y"}, "SVC_DISCORD_WEBHOOK_URL"},
		{"no store", alerts.Options{Enabled: true}, "Store"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := alerts.New(tc.o)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("New: got %v, want an error naming %s", err, tc.want)
			}
		})
	}
	reg := prometheus.NewRegistry()
	build(t, alerts.Options{Registerer: reg})
	if _, err := alerts.New(alerts.Options{Enabled: true, Store: memkv.New(), Registerer: reg}); err == nil {
		t.Error("New registered its metrics twice on one registry without an error")
	}
}

// TestFailingReceiversDoNotStopOthers: Slack hangs, Teams answers 500, and
// every alert still reaches Discord; Send never waits for either.
func TestFailingReceiversDoNotStopOthers(t *testing.T) {
	slack := newReceiver(t, always(0))
	teams := newReceiver(t, always(http.StatusInternalServerError))
	discord := newReceiver(t, always(http.StatusNoContent))
	reg := prometheus.NewRegistry()
	const queue, workers, count = 8, 2, 50
	n := start(t, alerts.Options{Slack: slack.srv.URL, Teams: teams.srv.URL, Discord: discord.srv.URL,
		QueueSize: queue, Workers: workers, Timeout: time.Hour, Attempts: 3, Registerer: reg})

	for i := range count {
		if !n.Send(alert(fmt.Sprint("s", i))) {
			t.Fatalf("alert %d was not queued", i)
		}
		discord.next(t) // each alert reaches the healthy receiver
		storetest.Until(t, waitFor, "Teams' retries to end", func() bool {
			return counter(t, reg, "svc_alerts_dropped_total", "reason", "retries_exhausted") == float64(i+1)
		})
	}
	if got := teams.hits.Load(); got != 3*count {
		t.Errorf("Teams was tried %d times, want %d (3 per alert)", got, 3*count)
	}
	if got := counter(t, reg, "svc_alerts_failed_total", "type", "Custom", "platform", "teams"); got != 3*count {
		t.Errorf("svc_alerts_failed_total{teams} = %v, want %d", got, 3*count)
	}
	if got := counter(t, reg, "svc_alerts_sent_total", "type", "Custom", "platform", "discord"); got != count {
		t.Errorf("svc_alerts_sent_total{discord} = %v, want %d", got, count)
	}
	// Slack's workers hang; its queue holds `queue` more, the rest are dropped.
	if got := counter(t, reg, "svc_alerts_dropped_total", "reason", "queue_full"); got < count-queue-workers {
		t.Errorf("svc_alerts_dropped_total{queue_full} = %v, want at least %d (Slack's overflow)", got, count-queue-workers)
	}

	// The drop is counted just before the delivery's end is recorded:
	// wait for the record.
	var recent []alerts.Sent
	status := map[string]string{}
	storetest.Until(t, waitFor, "the last alert's Teams delivery recorded as failed", func() bool {
		var err error
		recent, err = n.Recent(context.Background(), 1)
		if err != nil || len(recent) != 1 {
			t.Fatalf("Recent: %v, %d alerts", err, len(recent))
		}
		for _, d := range recent[0].Delivery {
			status[d.Platform] = d.Status
		}
		return status["teams"] != alerts.StatusPending
	})
	if status["discord"] != alerts.StatusSent || status["teams"] != alerts.StatusFailed {
		t.Errorf("last alert's delivery = %+v, want discord sent and teams failed", recent[0].Delivery)
	}
	if s := status["slack"]; s != alerts.StatusPending && s != alerts.StatusDropped {
		t.Errorf("last alert's Slack delivery is %q, want pending or dropped (Slack hangs)", s)
	}
}

func TestRetries(t *testing.T) {
	for _, tc := range []struct {
		name             string
		answer           func(int64) int
		hits             int64
		status           string
		sent, failed     float64
		exhausted, refus float64
	}{
		{"500 twice then 200", func(n int64) int {
			if n < 3 {
				return 500
			}
			return 200
		}, 3, alerts.StatusSent, 1, 2, 0, 0},
		{"always 503", always(503), 3, alerts.StatusFailed, 0, 3, 1, 0},
		{"429 then 200", func(n int64) int {
			if n == 1 {
				return 429
			}
			return 200
		}, 2, alerts.StatusSent, 1, 1, 0, 0},
		{"400 is not retried", always(400), 1, alerts.StatusFailed, 0, 1, 0, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := newReceiver(t, tc.answer)
			reg := prometheus.NewRegistry()
			n := start(t, alerts.Options{Slack: rc.srv.URL, Attempts: 3, Registerer: reg})
			n.Send(alert("retry"))
			var last []alerts.Sent
			storetest.Until(t, waitFor, "the delivery to end", func() bool {
				last, _ = n.Recent(context.Background(), 1)
				return len(last) == 1 && last[0].Delivery[0].Status != alerts.StatusPending
			})
			d := last[0].Delivery[0]
			if d.Status != tc.status || int64(d.Attempts) != tc.hits || rc.hits.Load() != tc.hits {
				t.Errorf("delivery %+v after %d requests, want %s after %d", d, rc.hits.Load(), tc.status, tc.hits)
			}
			if d.Status == alerts.StatusFailed && (d.Error == "" || strings.Contains(d.Error, rc.srv.URL)) {
				t.Errorf("failure reason %q: want a reason without the webhook URL", d.Error)
			}
			for _, c := range []struct {
				got, want float64
				name      string
			}{
				{counter(t, reg, "svc_alerts_sent_total", "platform", "slack"), tc.sent, "sent"},
				{counter(t, reg, "svc_alerts_failed_total", "platform", "slack"), tc.failed, "failed"},
				{counter(t, reg, "svc_alerts_dropped_total", "reason", "retries_exhausted"), tc.exhausted, "dropped{retries_exhausted}"},
				{counter(t, reg, "svc_alerts_dropped_total", "reason", "rejected"), tc.refus, "dropped{rejected}"},
			} {
				if c.got != c.want {
					t.Errorf("svc_alerts_%s = %v, want %v", c.name, c.got, c.want)
				}
			}
		})
	}
}

// sharedStores returns two stores over the same data, as two processes of
// a fleet see it: one memkv twice, and two Redis clients on one prefix.
func sharedStores(t *testing.T) map[string]func(t *testing.T) (alerts.Store, alerts.Store) {
	return map[string]func(t *testing.T) (alerts.Store, alerts.Store){
		"memkv": func(t *testing.T) (alerts.Store, alerts.Store) {
			kv := memkv.New()
			t.Cleanup(func() { kv.Close() })
			return kv, kv
		},
		"redis": func(t *testing.T) (alerts.Store, alerts.Store) {
			a := storetest.RedisKV(t)
			b, err := rediskv.Open(os.Getenv(storetest.RedisURLEnv), a.Prefix())
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { b.Close() })
			return a, b
		},
	}
}

// TestDedupAcrossProcesses: two Notifiers sharing a store (two processes)
// send the same subject once between them, and the other subjects each once.
func TestDedupAcrossProcesses(t *testing.T) {
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			s1, s2 := open(t)
			rc := newReceiver(t, always(200))
			reg1, reg2 := prometheus.NewRegistry(), prometheus.NewRegistry()
			n1 := start(t, alerts.Options{Discord: rc.srv.URL, Store: s1, Registerer: reg1})
			n2 := start(t, alerts.Options{Discord: rc.srv.URL, Store: s2, Registerer: reg2})
			deduped := func() float64 {
				return counter(t, reg1, "svc_alerts_deduplicated_total") + counter(t, reg2, "svc_alerts_deduplicated_total")
			}
			var wg sync.WaitGroup
			for _, n := range []*alerts.Notifier{n1, n2, n1, n2} {
				wg.Go(func() { n.Send(alert("same subject")) })
			}
			wg.Wait()
			rc.next(t)
			storetest.Until(t, waitFor, "three duplicates", func() bool { return deduped() == 3 })
			n2.Send(alert("another subject"))
			rc.next(t)
			if got := rc.hits.Load(); got != 2 {
				t.Errorf("the receiver got %d alerts, want 2 (one per subject)", got)
			}
			if got := deduped(); got != 3 {
				t.Errorf("svc_alerts_deduplicated_total = %v across both, want 3", got)
			}
			// Each process lists the fleet's alerts.
			storetest.Until(t, waitFor, "both alerts listed", func() bool {
				l1, err1 := n1.Recent(context.Background(), 10)
				l2, err2 := n2.Recent(context.Background(), 10)
				return err1 == nil && err2 == nil && len(l1) == 2 && len(l2) == 2 &&
					l1[0].Subject == "another subject" && l2[1].Subject == "same subject" &&
					l1[0].Delivery[0].Status == alerts.StatusSent && l1[1].Delivery[0].Status == alerts.StatusSent
			})
		})
	}
}

func TestRecentNewestFirst(t *testing.T) {
	rc := newReceiver(t, always(200))
	n := start(t, alerts.Options{Teams: rc.srv.URL})
	for _, s := range []string{"a", "b", "c"} {
		n.Send(alert(s))
		rc.next(t)
	}
	var got []alerts.Sent
	storetest.Until(t, waitFor, "three sent alerts", func() bool {
		all, err := n.Recent(context.Background(), 10)
		if err != nil || len(all) != 3 {
			return false
		}
		for _, s := range all {
			if s.Delivery[0].Status != alerts.StatusSent {
				return false
			}
		}
		got, _ = n.Recent(context.Background(), 2)
		return true
	})
	if len(got) != 2 || got[0].Subject != "c" || got[1].Subject != "b" {
		t.Fatalf("Recent(2) = %+v, want c then b", got)
	}
	if d := got[0].Delivery; len(d) != 1 || d[0].Platform != "teams" || d[0].Attempts != 1 {
		t.Errorf("delivery = %+v, want one teams delivery in 1 attempt", d)
	}
}

func TestCheckWebhookURL(t *testing.T) {
	for _, tc := range []struct {
		url string
		ok  bool
	}{
		{"", true},
		{"https://hooks.slack.com/services/T0/B0/XYZ", true},
		{"https://discord.com/api/webhooks/1/abc", true},
		{"http://127.0.0.1:8080/hook", true},
		{"http://localhost/hook", true},
		{"http://[::1]:9/hook", true},
		{"http://hooks.slack.com/services/T0/B0/XYZ", false},
		{"http://10.0.0.1/hook", false},
		{"ftp://example.com/x", false},
		{"https://", false},
		{"hooks.slack.com/services/x", false},
		{"https://user:secret@example.com/x", false},
		{"::not a url", false},
	} {
		err := alerts.CheckWebhookURL("SVC_TEAMS_WEBHOOK_URL", tc.url)
		if (err == nil) != tc.ok {
			t.Errorf("CheckWebhookURL(%q) = %v, want ok=%v", tc.url, err, tc.ok)
		}
		if err != nil && (!strings.Contains(err.Error(), "SVC_TEAMS_WEBHOOK_URL") || (len(tc.url) > 10 && strings.Contains(err.Error(), tc.url))) {
			t.Errorf("CheckWebhookURL(%q) = %q: want the setting named and the URL not quoted", tc.url, err)
		}
	}
}
