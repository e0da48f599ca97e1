// Package alerts owns svc's outbound webhook alerts (the spec's Events):
// the Alert value and its four types (BudgetThreshold, ProviderFailure,
// SlowRequest, Custom); the Notifier, which takes alerts without ever
// blocking (a bounded queue), deduplicates them fleet-wide through the KV
// store, delivers each to every configured team-chat platform (Slack,
// Microsoft Teams, Discord) in that platform's own incoming-webhook format,
// with a timeout, retries and backoff per delivery, and keeps the fleet's
// recent alerts and their delivery status in a KV log; the Watch, which
// turns request observations into ProviderFailure and SlowRequest alerts;
// and the check of the webhook URL settings (CheckWebhookURL).
//
// wire builds it; mgmt serves /api/alerts over it; config calls
// CheckWebhookURL. It imports, of svc, only store (the hot-state blocks
// behind its Store interface), and client_golang for its metrics.
package alerts

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Type is the kind of an alert, as the spec names it.
type Type string

// The alert types of the spec's Events table.
const (
	// BudgetThreshold: a virtual key's or a provider's spend reached 80 % or
	// 100 % of its cap.
	BudgetThreshold Type = "BudgetThreshold"
	// ProviderFailure: a provider's error rate over the window passed the
	// threshold.
	ProviderFailure Type = "ProviderFailure"
	// SlowRequest: a request took longer than the slow-request threshold.
	SlowRequest Type = "SlowRequest"
	// Custom: raised through POST /api/alerts.
	Custom Type = "Custom"
)

// Severity says how urgent an alert is.
type Severity string

// The severities, least urgent first.
const (
	Info     Severity = "info"
	Warning  Severity = "warning"
	Critical Severity = "critical"
)

// ParseSeverity returns the severity named s (info, warning or critical).
func ParseSeverity(s string) (Severity, bool) {
	switch v := Severity(s); v {
	case Info, Warning, Critical:
		return v, true
	}
	return "", false
}

// Alert is one alert. Subject identifies what it is about: alerts with the
// same Subject are sent at most once per dedup period across the fleet.
// Fields are extra facts shown beside the message (sorted by name).
type Alert struct {
	ID       string            `json:"id"`
	Type     Type              `json:"type"`
	Subject  string            `json:"subject"`
	Title    string            `json:"title"`
	Message  string            `json:"message"`
	Severity Severity          `json:"severity"`
	Fields   map[string]string `json:"fields,omitempty"`
	Time     time.Time         `json:"time"`
}

// NewID returns a random alert id ("al_" and 16 hex digits).
func NewID() string {
	var b [8]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand, Go 1.24+)
	return "al_" + hex.EncodeToString(b[:])
}

// NewCustom returns a Custom alert, as POST /api/alerts raises it. Its
// subject is its title, so the same title alerts once per dedup period.
func NewCustom(title, message string, sev Severity, now time.Time) Alert {
	return Alert{ID: NewID(), Type: Custom, Subject: "custom:" + title, Title: title,
		Message: message, Severity: sev, Time: now}
}

// budgetLevel is the threshold a spend reached: 100 (critical) at or above
// the cap, else 80 (warning).
func budgetLevel(capUSD, spentUSD float64) (int, Severity) {
	if capUSD <= 0 || spentUSD >= capUSD {
		return 100, Critical
	}
	return 80, Warning
}

// percent formats spent as a percentage of cap.
func percent(capUSD, spentUSD float64) string {
	if capUSD <= 0 {
		return "n/a"
	}
	return strconv.FormatFloat(spentUSD/capUSD*100, 'f', 1, 64) + "%"
}

func usd(v float64) string { return "$" + strconv.FormatFloat(v, 'f', 2, 64) }

// NewKeyBudget returns the BudgetThreshold alert of a virtual key whose spend
// in its budget period (daily, weekly, monthly) reached 80 % (warning) or
// 100 % (critical) of its cap: the level is 100 when spent ≥ cap, else 80.
// Call it when the spend crosses either level (limit.BudgetEvent carries
// these values).
func NewKeyBudget(keyID, period string, capUSD, spentUSD float64, now time.Time) Alert {
	level, sev := budgetLevel(capUSD, spentUSD)
	return Alert{
		ID: NewID(), Type: BudgetThreshold, Severity: sev, Time: now,
		Subject: fmt.Sprintf("budget:key:%s:%s:%d", keyID, period, level),
		Title:   fmt.Sprintf("Virtual key %s reached %d%% of its %s budget", keyID, level, period),
		Message: fmt.Sprintf("Spent %s of a %s %s cap (%s).", usd(spentUSD), usd(capUSD), period, percent(capUSD, spentUSD)),
		Fields: map[string]string{"key_id": keyID, "period": period, "cap_usd": usd(capUSD),
			"spent_usd": usd(spentUSD), "percent": percent(capUSD, spentUSD)},
	}
}

// NewProviderBudget returns the BudgetThreshold alert of a provider whose
// spend on a UTC day (YYYY-MM-DD) reached 80 % (warning) or 100 % (critical)
// of its daily budget, as NewKeyBudget does for keys (route.BudgetEvent
// carries these values).
func NewProviderBudget(provider, day string, budgetUSD, spentUSD float64, now time.Time) Alert {
	level, sev := budgetLevel(budgetUSD, spentUSD)
	return Alert{
		ID: NewID(), Type: BudgetThreshold, Severity: sev, Time: now,
		Subject: fmt.Sprintf("budget:provider:%s:%s:%d", provider, day, level),
		Title:   fmt.Sprintf("Provider %s reached %d%% of its daily budget", provider, level),
		Message: fmt.Sprintf("Spent %s of a %s budget on %s (UTC) (%s).", usd(spentUSD), usd(budgetUSD), day, percent(budgetUSD, spentUSD)),
		Fields: map[string]string{"provider": provider, "day": day, "budget_usd": usd(budgetUSD),
			"spent_usd": usd(spentUSD), "percent": percent(budgetUSD, spentUSD)},
	}
}

// newProviderFailure is the ProviderFailure alert of a provider that failed
// failed of total requests within window.
func newProviderFailure(provider string, failed, total int, window time.Duration, now time.Time) Alert {
	rate := float64(failed) / float64(total)
	return Alert{
		ID: NewID(), Type: ProviderFailure, Severity: Critical, Time: now,
		Subject: "provider_failure:" + provider,
		Title:   fmt.Sprintf("Provider %s is failing: %.0f%% errors", provider, rate*100),
		Message: fmt.Sprintf("%d of the last %d requests to %s failed within %s.", failed, total, provider, window),
		Fields: map[string]string{"provider": provider, "failed": strconv.Itoa(failed),
			"requests": strconv.Itoa(total), "error_rate": strconv.FormatFloat(rate, 'f', 3, 64), "window": window.String()},
	}
}

// newSlowRequest is the SlowRequest alert of one request. Its subject is the
// provider, so a slow provider alerts once per dedup period, not once per
// request.
func newSlowRequest(provider, requestID string, latency, threshold time.Duration, now time.Time) Alert {
	return Alert{
		ID: NewID(), Type: SlowRequest, Severity: Warning, Time: now,
		Subject: "slow_request:" + provider,
		Title:   fmt.Sprintf("Slow request to %s: %s", provider, latency.Round(time.Millisecond)),
		Message: fmt.Sprintf("A request to %s took %s, over the %s threshold.", provider, latency.Round(time.Millisecond), threshold),
		Fields: map[string]string{"provider": provider, "request_id": requestID,
			"latency_ms": strconv.FormatInt(latency.Milliseconds(), 10), "threshold_ms": strconv.FormatInt(threshold.Milliseconds(), 10)},
	}
}

// label is the one-line summary of a: "[CRITICAL] ProviderFailure: title".
func label(a Alert) string {
	return "[" + strings.ToUpper(string(a.Severity)) + "] " + string(a.Type) + ": " + a.Title
}
