package usage

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/identity"
)

// LogPage is the answer of GET /api/mcp/logs, shaped as GET
// /api/vas/logs's: total counts the matches past the cursor, ignoring limit
// and offset; next_before, set when the page is full, is the before= of the
// next page.
type LogPage struct {
	Success    bool      `json:"success"`
	Total      int64     `json:"total"`
	Limit      int       `json:"limit"`
	Offset     int       `json:"offset"`
	Data       []LogItem `json:"data"`
	NextBefore string    `json:"next_before,omitempty"`
}

// LogItem is one tool call. Outcome is the gateway's (ok, tool_error,
// cached, denied, guard, blocked, limited, error, invalid); Success is
// false for an error (a status >= 400 or a tool error); Status is the
// HTTP status the call was answered with (or its failure maps to); Surface
// is the endpoint it came through. Key is the key's masked prefix, never
// its secret. Arguments are present only when they were logged
// (SVC_MCP_LOG_ARGUMENTS); their size and SHA-256 always are.
type LogItem struct {
	RequestID        string          `json:"request_id"`
	Timestamp        string          `json:"timestamp"`
	ServerID         string          `json:"server_id"`
	Tool             string          `json:"tool"`
	KeyID            string          `json:"key_id"`
	Key              string          `json:"key"`
	UserID           string          `json:"user_id"`
	Outcome          string          `json:"outcome"`
	Success          bool            `json:"success"`
	Status           int             `json:"status"`
	Surface          string          `json:"surface"`
	LatencyMS        int64           `json:"latency_ms"`
	CostUSD          float64         `json:"cost_usd"`
	Cached           bool            `json:"cached"`
	Flagged          bool            `json:"flagged"`
	ComplianceStatus string          `json:"compliance_status"`
	Violations       []string        `json:"violations"`
	ArgumentsBytes   int             `json:"arguments_bytes"`
	ArgumentsSHA256  string          `json:"arguments_sha256"`
	Arguments        json.RawMessage `json:"arguments,omitempty"`
	ErrorType        string          `json:"error_type,omitempty"`
	Error            string          `json:"error,omitempty"`
}

// OutcomeUnreadable is the outcome of an item whose stored entry could not
// be decoded: listed (so pages and totals agree) with what its columns say.
const OutcomeUnreadable = "unreadable"

// LogsHandler answers GET /api/mcp/logs with a LogPage.
func (a *API) LogsHandler() http.Handler { return a.serve(a.logs) }

func (a *API) logs(ctx context.Context, params url.Values, p *identity.Principal) (any, error) {
	q, before, err := a.query(params, p)
	if err != nil {
		return nil, err
	}
	page, err := a.src.Page(ctx, q, before)
	if err != nil {
		return nil, err
	}
	out := LogPage{Success: true, Total: page.Total, Limit: page.Limit, Offset: page.Offset,
		NextBefore: page.NextBefore, Data: make([]LogItem, len(page.Data))}
	for i, raw := range page.Data {
		out.Data[i] = itemOf(raw)
	}
	return out, nil
}

// itemOf is the item of an entry as stored.
func itemOf(raw json.RawMessage) LogItem {
	var e audit.Entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return unreadable(raw)
	}
	it := LogItem{RequestID: e.RequestID, Timestamp: e.Timestamp,
		ServerID: strings.TrimPrefix(e.Provider, ProviderPrefix), Tool: e.Model,
		KeyID: e.KeyID, Key: e.Metrics.CustomMetrics.APIKey, UserID: e.UserID,
		Success: e.Metrics.Success, Status: e.Status, LatencyMS: e.LatencyMS, CostUSD: e.Cost,
		ComplianceStatus: e.ComplianceStatus, Violations: e.ComplianceViolations,
		ErrorType: e.ErrorType, Error: e.Error}
	if it.Violations == nil {
		it.Violations = []string{}
	}
	if tc := e.Tool; tc != nil {
		it.ServerID, it.Tool, it.Outcome, it.Surface = tc.ServerID, tc.Tool, tc.Outcome, tc.Surface
		it.Cached, it.Flagged = tc.Cached, tc.Flagged
		it.ArgumentsBytes, it.ArgumentsSHA256, it.Arguments = tc.ArgumentBytes, tc.ArgumentsSHA256, tc.Arguments
	}
	return it
}

// unreadable is the item of an entry that does not decode: its request id
// and time when those do.
func unreadable(raw json.RawMessage) LogItem {
	it := LogItem{Outcome: OutcomeUnreadable, Violations: []string{}}
	if rec, err := audit.RecordFromJSON(raw); err == nil {
		it.RequestID, it.Timestamp = rec.RequestID, rec.Timestamp.Format("2006-01-02T15:04:05.000000Z")
		it.ServerID, it.Tool, it.KeyID = strings.TrimPrefix(rec.Provider, ProviderPrefix), rec.Model, rec.KeyID
		it.Status, it.Success, it.LatencyMS, it.CostUSD = rec.Status, rec.Success, rec.LatencyMS, rec.Cost
	}
	return it
}
