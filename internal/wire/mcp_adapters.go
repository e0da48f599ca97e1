package wire

import (
	"context"
	"slices"
	"time"

	"github.com/google/uuid"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/limit"
	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/proxy"
)

// mcpLimits admits a tool call as one request of the caller's key with its
// per-call cost reserved against the budget.
type mcpLimits struct {
	limiter *limit.Limiter
	source  keyLimits
}

func (m mcpLimits) Admit(ctx context.Context, p *identity.Principal, costUSD float64) (mcpgw.Admission, error) {
	lim, err := m.source.Limits(ctx, p)
	if err != nil {
		return nil, err
	}
	a, err := m.limiter.Admit(ctx, p, lim, limit.Estimate{CostUSD: costUSD})
	if err != nil || a == nil {
		return nil, err
	}
	return mcpAdmission{a}, nil
}

type mcpAdmission struct{ a *limit.Admission }

func (m mcpAdmission) Settle(ctx context.Context, costUSD float64) {
	// Before the answer: a caller's next call must see this one's cost,
	// not its reservation (else back-to-back calls near a budget are
	// refused while the reservation is still held).
	m.a.SettleNow(ctx, limit.Used{CostUSD: costUSD})
}

// mcpScanner scans a tool call's texts under the caller's preset when it
// has one, else under the default tool family (enterprise_standard): a
// tool call is always scanned, its server's guardrail mode says what a
// violation does.
type mcpScanner struct {
	enf     *enforcer
	eng     *compliance.Engine
	family  *compliance.Policy
	timeout time.Duration
}

func (m mcpScanner) ScanTool(ctx context.Context, s mcpgw.Scan) (mcpgw.Finding, error) {
	if m.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, m.timeout)
		defer cancel()
	}
	if ok, err := m.enf.Applies(ctx, s.Principal); err != nil {
		return mcpgw.Finding{}, err
	} else if ok {
		phase := "prompt"
		if s.Phase == "result" {
			phase = "answer"
		}
		v, err := m.enf.Enforce(ctx, proxy.EnforceCall{Principal: s.Principal, Phase: phase, Texts: s.Texts, Provider: "mcp:" + s.ServerID, Model: s.Tool})
		if err != nil {
			return mcpgw.Finding{}, err
		}
		return mcpgw.Finding{Violations: v.Violations, Score: v.Score}, nil
	}
	f := mcpgw.Finding{Score: 1}
	for _, t := range s.Texts {
		res := m.eng.Scan(t, m.family)
		for _, v := range res.Violations {
			if v.Action != compliance.Allow.String() && !slices.Contains(f.Violations, v.Type) {
				f.Violations = append(f.Violations, v.Type)
			}
		}
		f.Score = min(f.Score, res.ComplianceScore)
	}
	return f, nil
}

// mcpRecorder writes each tool call as an audit entry (spooled before the
// answer, like a model call's) and counts it.
type mcpRecorder struct{ log *audit.Logger }

func (m mcpRecorder) RecordToolCall(r *mcpgw.Record) {
	e := &audit.Entry{
		RequestID: uuid.NewString(), Timestamp: r.Time.UTC().Format(time.RFC3339Nano),
		Provider: "mcp:" + r.ServerID, Model: r.Tool, ModelProvider: "mcp",
		Cost: r.CostUSD, LatencyMS: r.Latency.Milliseconds(), ProcessingTimeMS: r.Latency.Milliseconds(),
		ContentType: "tool_call", Status: r.Status, Endpoint: "mcp/tools/call",
		ComplianceStatus: "clean", ComplianceViolations: r.Violations,
		Tool: &audit.ToolCall{ServerID: r.ServerID, Tool: r.Tool, Outcome: r.Outcome, Surface: r.Surface,
			ArgumentBytes: r.ArgumentBytes, ArgumentsSHA256: r.ArgumentsHash, Arguments: r.Arguments,
			Cached: r.Outcome == mcpgw.OutcomeCached, Flagged: r.Flagged},
	}
	e.SetCaller(r.Principal)
	switch {
	case r.Outcome == mcpgw.OutcomeBlocked:
		e.ComplianceStatus = "blocked"
	case r.Flagged:
		e.ComplianceStatus = "flagged"
	}
	e.Compliance.HasViolations = len(r.Violations) > 0
	e.Compliance.Violations = r.Violations
	e.Metrics.Success = r.Status < 400 && r.Outcome != mcpgw.OutcomeToolError
	if r.Status >= 400 {
		e.ErrorType, e.Error = r.Outcome, r.Error
	}
	m.log.Record(e)
}
