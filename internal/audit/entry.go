// Package audit owns the VAS audit log: the entry written for every proxied
// request (rejected ones too), the Logger that writes entries off the request
// path — hot tier in the KV store, records in SQL, batched — and the queries
// behind GET /api/vas/logs and /api/vas/metrics. SQLStore is the Store on
// SQL (store_sql.go).
//
// proxy, mgmt and wire import audit. It imports pipeline, identity, store,
// store/sqlstore, metrics and apierr.
package audit

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// Entry is one VAS log entry, with every field of the spec.
type Entry struct {
	RequestID            string          `json:"request_id"`
	Timestamp            string          `json:"timestamp"`
	Provider             string          `json:"provider"`
	Model                string          `json:"model"`
	ModelProvider        string          `json:"model_provider"`
	TokensUsed           int64           `json:"tokens_used"`
	Cost                 float64         `json:"cost"`
	LatencyMS            int64           `json:"latency_ms"`
	ProcessingTimeMS     int64           `json:"processing_time_ms"`
	ContentType          string          `json:"content_type"`
	UserID               string          `json:"user_id"`
	ConversationID       string          `json:"conversation_id"`
	ConversationStage    string          `json:"conversation_stage"`
	RoutingStrategy      string          `json:"routing_strategy"`
	RoutingReason        string          `json:"routing_reason"`
	ComplianceStatus     string          `json:"compliance_status"`
	ComplianceViolations []string        `json:"compliance_violations"`
	Metacache            Metacache       `json:"metacache"`
	Compliance           ComplianceBlock `json:"compliance"`
	Metrics              EntryMetrics    `json:"metrics"`

	// Beyond the spec's fields: what an operator needs to read a failure.
	Status   int    `json:"status"`
	Endpoint string `json:"endpoint"`
	Stream   bool   `json:"stream"`
	KeyID    string `json:"key_id,omitempty"`
	// UsageEstimated: the provider reported no usage (a stream the client
	// cut) and the tokens and cost are svc's estimate.
	UsageEstimated bool   `json:"usage_estimated,omitempty"`
	ErrorType      string `json:"error_type,omitempty"`
	Error          string `json:"error,omitempty"`
	// Tool is set on the entries of tool calls (the MCP gateway's).
	Tool *ToolCall `json:"tool_call,omitempty"`
	// User is set when a signed-in user called: their groups, department
	// and sign-in method (UserID is their username).
	User *UserInfo `json:"user,omitempty"`
}

// UserInfo is what an entry records of a signed-in caller beyond the
// username.
type UserInfo struct {
	Groups     []string `json:"groups,omitempty"`
	Department string   `json:"department,omitempty"`
	AuthMethod string   `json:"auth_method,omitempty"`
}

// ToolCall is the tool-gateway part of an entry: which tool of which
// server, how it ended, and the arguments' size and SHA-256 (the
// arguments themselves only when SVC_MCP_LOG_ARGUMENTS is on).
type ToolCall struct {
	ServerID        string          `json:"server_id"`
	Tool            string          `json:"tool"`
	Outcome         string          `json:"outcome"`
	Surface         string          `json:"surface"`
	ArgumentBytes   int             `json:"arguments_bytes"`
	ArgumentsSHA256 string          `json:"arguments_sha256"`
	Arguments       json.RawMessage `json:"arguments,omitempty"`
	Cached          bool            `json:"cached"`
	Flagged         bool            `json:"flagged"`
}

// Metacache is the cache part of an entry.
type Metacache struct {
	Hit         bool    `json:"hit"`
	Query       *string `json:"query"`
	TokensSaved int64   `json:"tokens_saved"`
	// CostSaved is beyond the spec: what the cached answer cost when it
	// was made, USD (analytics' cost saved).
	CostSaved float64 `json:"cost_saved"`
}

// ComplianceBlock is the compliance part of an entry. ComplianceScore is nil
// until a scan ran.
type ComplianceBlock struct {
	DataClassification   string   `json:"data_classification"`
	ComplianceScore      *float64 `json:"compliance_score"`
	HasViolations        bool     `json:"has_violations"`
	Violations           []string `json:"violations"`
	RegulatoryFrameworks []string `json:"regulatory_frameworks"`
}

// EntryMetrics is the metrics part of an entry.
type EntryMetrics struct {
	PromptTokens     int64         `json:"prompt_tokens"`
	CompletionTokens int64         `json:"completion_tokens"`
	TotalTokens      int64         `json:"total_tokens"`
	ProcessingTimeMS int64         `json:"processing_time_ms"`
	Success          bool          `json:"success"`
	CustomMetrics    CustomMetrics `json:"custom_metrics"`
}

// CustomMetrics carries the masked key prefix, never the key.
type CustomMetrics struct {
	APIKey string `json:"api_key"`
}

// FromExchange builds the entry for a finished exchange. upstream is the time
// spent waiting on the provider, so processing time is svc's own share.
func FromExchange(x *pipeline.Exchange, upstream time.Duration) *Entry {
	end := x.End
	if end.IsZero() {
		end = time.Now()
	}
	total := end.Sub(x.Start)
	processing := total - upstream
	if processing < 0 {
		processing = 0
	}
	success := x.Err == nil && x.Status < 400
	model := x.ResponseModel
	if model == "" {
		model = x.UpstreamModel
	}
	if model == "" {
		model = x.Model
	}
	e := &Entry{
		RequestID:            x.ID,
		Timestamp:            x.Start.UTC().Format("2006-01-02T15:04:05.000000Z"),
		Provider:             x.Provider,
		Model:                model,
		ModelProvider:        x.Provider,
		TokensUsed:           x.Usage.Total(),
		Cost:                 x.Cost,
		LatencyMS:            total.Milliseconds(),
		ProcessingTimeMS:     processing.Milliseconds(),
		ContentType:          contentType(x.Endpoint),
		ConversationID:       x.ConversationID,
		ConversationStage:    conversationStage(x),
		RoutingStrategy:      x.RoutingStrategy,
		RoutingReason:        x.RoutingReason,
		ComplianceStatus:     "not_scanned",
		ComplianceViolations: nil,
		Compliance: ComplianceBlock{
			DataClassification:   "unclassified",
			Violations:           []string{},
			RegulatoryFrameworks: []string{},
		},
		Metrics: EntryMetrics{
			PromptTokens:     x.Usage.PromptTokens,
			CompletionTokens: x.Usage.CompletionTokens,
			TotalTokens:      x.Usage.Total(),
			ProcessingTimeMS: processing.Milliseconds(),
			Success:          success,
		},
		Status:   status(x),
		Endpoint: string(x.Endpoint),

		UsageEstimated: x.UsageEstimated,
		Stream:         x.Stream,
	}
	e.SetCaller(x.Principal)
	if x.Chat != nil && x.Chat.User != "" && (x.Principal == nil || x.Principal.Kind != identity.User) {
		// The request's "user" field names the end user of a key; it never
		// overrides who signed in.
		e.UserID = x.Chat.User
	}
	if h := x.Cache; h != nil {
		q := h.Query
		e.Metacache = Metacache{Hit: true, Query: &q, TokensSaved: h.TokensSaved, CostSaved: h.CostSaved}
	}
	if c := x.Compliance; c != nil {
		score := c.Score
		e.ComplianceStatus = c.Status
		e.ComplianceViolations = append([]string{}, c.Violations...)
		e.Compliance = ComplianceBlock{DataClassification: c.Classification, ComplianceScore: &score,
			HasViolations: len(c.Violations) > 0, Violations: append([]string{}, c.Violations...),
			RegulatoryFrameworks: append([]string{}, c.Frameworks...)}
	}
	if x.Err != nil {
		ae := apierr.From(x.Err)
		e.ErrorType = ae.Kind.Type()
		e.Error = ae.Message
	}
	return e
}

// status is the HTTP status of the exchange's outcome: the one answered,
// or, for a stream that failed after its 200 went out, its error's.
func status(x *pipeline.Exchange) int {
	if x.Err != nil && x.Status < 400 {
		return apierr.From(x.Err).Status()
	}
	return x.Status
}

func contentType(ep pipeline.Endpoint) string {
	if ep == "" {
		return "chat"
	}
	return string(ep)
}

// conversationStage is "initial" for a conversation's first turn (no assistant
// message yet) and "continuation" after.
func conversationStage(x *pipeline.Exchange) string {
	if x.Chat != nil {
		for _, m := range x.Chat.Messages {
			if m.Role == "assistant" {
				return "continuation"
			}
		}
	}
	return "initial"
}

// columns are the fields of an entry the long-term store keeps as
// columns (Record's), as RecordFromJSON decodes them: the rest of the
// entry is skipped, not decoded.
type columns struct {
	RequestID      string  `json:"request_id"`
	Timestamp      string  `json:"timestamp"`
	Provider       string  `json:"provider"`
	Model          string  `json:"model"`
	TokensUsed     int64   `json:"tokens_used"`
	Cost           float64 `json:"cost"`
	LatencyMS      int64   `json:"latency_ms"`
	UserID         string  `json:"user_id"`
	ConversationID string  `json:"conversation_id"`
	Status         int     `json:"status"`
	KeyID          string  `json:"key_id"`
	Metacache      struct {
		Hit         bool    `json:"hit"`
		TokensSaved int64   `json:"tokens_saved"`
		CostSaved   float64 `json:"cost_saved"`
	} `json:"metacache"`
	Metrics struct {
		PromptTokens     int64 `json:"prompt_tokens"`
		CompletionTokens int64 `json:"completion_tokens"`
		Success          bool  `json:"success"`
		CustomMetrics    struct {
			APIKey string `json:"api_key"`
		} `json:"custom_metrics"`
	} `json:"metrics"`
}

// columnsJSON are the decoding options of RecordFromJSON: as lenient as
// encoding/json, which wrote the entries of earlier versions (names
// matched without regard to case, a repeated name's last value wins,
// invalid UTF-8 replaced), so that every entry the hot tier holds decodes
// as it did.
var columnsJSON = jsonv2.JoinOptions(
	jsonv2.MatchCaseInsensitiveNames(true),
	jsontext.AllowDuplicateNames(true),
	jsontext.AllowInvalidUTF8(true),
)

// decodeColumns decodes the columns of js: with columnsFast when it
// decides, with the general decoder otherwise.
func decodeColumns(js []byte) (columns, error) {
	if c, ok := columnsFast(js); ok {
		return c, nil
	}
	var c columns
	if err := jsonv2.Unmarshal(js, &c, columnsJSON); err != nil {
		return columns{}, fmt.Errorf("audit: entry: %w", err)
	}
	return c, nil
}

// RecordFromJSON is the record of an entry read back from the hot tier:
// its columns decoded from js, which becomes the record's Entry as it is
// (not encoded again). Only the columns are decoded: by a walk of the
// entry for the entries this version writes (columnsFast), else with the
// encoding/json/v2 prototype (about a third of the time of decoding the
// whole entry with encoding/json, and one allocation instead of 26). The
// record keeps js (its Entry, and the columns' text), so js must not change
// while the record lives.
func RecordFromJSON(js []byte) (Record, error) {
	c, err := decodeColumns(js)
	if err != nil {
		return Record{}, err
	}
	if c.RequestID == "" {
		return Record{}, errors.New("audit: entry has no request_id")
	}
	ts, err := time.Parse(time.RFC3339Nano, c.Timestamp)
	if err != nil {
		return Record{}, fmt.Errorf("audit: entry %s: timestamp: %w", c.RequestID, err)
	}
	return Record{
		RequestID: c.RequestID,
		Timestamp: ts.UTC(),
		KeyID:     c.KeyID,
		Provider:  c.Provider,
		Model:     c.Model,
		Status:    c.Status,
		Success:   c.Metrics.Success,
		Tokens:    c.TokensUsed,
		Cost:      c.Cost,
		LatencyMS: c.LatencyMS,
		Entry:     js,

		UserID:           c.UserID,
		ConversationID:   c.ConversationID,
		KeyMask:          c.Metrics.CustomMetrics.APIKey,
		PromptTokens:     c.Metrics.PromptTokens,
		CompletionTokens: c.Metrics.CompletionTokens,
		CacheHit:         c.Metacache.Hit,
		TokensSaved:      c.Metacache.TokensSaved,
		CostSaved:        c.Metacache.CostSaved,
	}, nil
}

// SetCaller fills who called: user_id is the principal's id (a key's id for
// a virtual key, the username for a signed-in user, who has no key), the
// key's id and masked form for a key, the user's groups, department and
// sign-in method for a user. Every entry — model call or tool call — names
// its caller so, so filters and the analytics' top users see one form.
func (e *Entry) SetCaller(p *identity.Principal) {
	if p == nil {
		return
	}
	e.UserID = p.ID
	e.Metrics.CustomMetrics.APIKey = p.MaskedKey
	switch p.Kind {
	case identity.User:
		e.User = &UserInfo{Groups: p.Groups, Department: p.Department, AuthMethod: p.AuthMethod}
	default:
		e.KeyID = p.ID
	}
}
