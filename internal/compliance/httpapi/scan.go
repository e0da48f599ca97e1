package httpapi

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/jsonbody"
)

// scanRequest is POST /v1/compliance/scan's body.
type scanRequest struct {
	Content *string `json:"content"`
	Policy  string  `json:"policy"`
	UserID  string  `json:"user_id"`
	OrgID   string  `json:"org_id"`
}

func (a *API) scan(w http.ResponseWriter, r *http.Request) error {
	var req scanRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	text, err := content(req.Content)
	if err != nil {
		return err
	}
	if err := checkIDs(req.UserID, req.OrgID); err != nil {
		return err
	}
	name := req.Policy
	if name == "" {
		name = compliance.DefaultPolicy
	}
	p, ok := compliance.Policies[strings.ToLower(name)]
	if !ok {
		return apierr.BadParam("policy", "unknown policy %q; known: %s", name, strings.Join(compliance.PolicyNames(), ", "))
	}
	start := time.Now()
	res := a.d.Engine.Scan(text, p)
	res.ScanID = newScanID()
	a.observe("scan", start, res.Action, res.Level, res)
	a.keep(r, compliance.ScanRecord{
		ScanID: res.ScanID, Kind: "scan", UserID: req.UserID, OrgID: orgOf(r.Context(), req.OrgID), Policy: p.Name,
		RiskScore: 1 - res.ComplianceScore, Level: res.Level, Action: res.Action, Types: violationTypes(res.Violations),
	}, text, res)
	return writeJSON(w, http.StatusOK, res)
}

// redactRequest is POST /v1/compliance/redact's body.
type redactRequest struct {
	Content *string `json:"content"`
}

func (a *API) redact(w http.ResponseWriter, r *http.Request) error {
	var req redactRequest
	if err := readJSON(r, &req); err != nil {
		return err
	}
	text, err := content(req.Content)
	if err != nil {
		return err
	}
	start := time.Now()
	out := a.d.Engine.Redact(text)
	a.d.Metrics.Latency.WithLabelValues("redact").Observe(time.Since(start).Seconds())
	return writeJSON(w, http.StatusOK, out)
}

func (a *API) baseline(w http.ResponseWriter, r *http.Request) error {
	org := r.PathValue("org_id")
	if org == "" {
		return apierr.BadParam("org_id", "org_id is required")
	}
	if err := ident("org_id", org); err != nil {
		return err
	}
	q := r.URL.Query()
	window, err := jsonbody.QueryInt(q, "window_hours", 1, 1, 24)
	if err != nil {
		return err
	}
	days, err := jsonbody.QueryInt(q, "days", 7, 1, 30)
	if err != nil {
		return err
	}
	if a.d.Records == nil {
		return apierr.New(apierr.Unavailable, "records_unavailable", "scan records are not kept by this process")
	}
	ctx, cancel := ctxTimeout(r)
	defer cancel()
	b, err := a.d.Records.Baseline(ctx, org, a.d.Now(), window, days)
	if err != nil {
		return apierr.Wrap(apierr.Unavailable, "store_unavailable", "the baseline could not be read", err)
	}
	return writeJSON(w, http.StatusOK, b)
}

func checkIDs(user, org string) error {
	if err := ident("user_id", user); err != nil {
		return err
	}
	return ident("org_id", org)
}

func violationTypes(vs []compliance.Violation) []string {
	var out []string
	for _, v := range vs {
		if !slices.Contains(out, v.Type) {
			out = append(out, v.Type)
		}
	}
	return out
}

// observe counts a scan in the metrics.
func (a *API) observe(endpoint string, start time.Time, act compliance.Action, level compliance.Severity, res compliance.Result) {
	a.d.Metrics.Latency.WithLabelValues(endpoint).Observe(time.Since(start).Seconds())
	a.d.Metrics.Scans.WithLabelValues(endpoint, act.String(), level.String()).Inc()
	a.d.Metrics.found(res.Findings)
}

// newScanID is "scan_" and 24 random hex digits.
func newScanID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return "scan_" + hex.EncodeToString(b[:])
}

// keep adds the scan's record (with its features, not its text) to the
// records, when the process keeps them.
func (a *API) keep(r *http.Request, rec compliance.ScanRecord, text string, res compliance.Result) {
	if a.d.Records == nil {
		return
	}
	rec.Caller = callerOf(r.Context())
	rec.At = a.d.Now()
	if a.d.Features != nil {
		rec.Features = a.d.Features(text, res.Findings)
	}
	a.d.Records.Add(rec)
}
