package audit

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/svc-gateway/svc/internal/llm"
)

// MarshalJSON encodes the entry as AppendJSON does.
func (e *Entry) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(make([]byte, 0, 1024)), nil
}

// AppendJSON appends the entry's JSON encoding to dst: byte for byte what
// encoding/json makes of the struct (field order, omitempty, nil slices and
// pointers as null, strings escaped for HTML, U+2028 and U+2029 escaped,
// invalid UTF-8 replaced by \ufffd, floats formatted as it does), without
// reflection and with no allocation beyond dst's growth: Logger.Record
// encodes every request's entry with it. The one difference: a cost that
// is NaN or infinite, which encoding/json refuses (losing the entry), is
// written null.
func (e *Entry) AppendJSON(dst []byte) []byte {
	b := e.appendRequest(dst)
	b = e.appendContext(b)
	b = e.Metacache.appendJSON(b)
	b = e.Compliance.appendJSON(b)
	b = e.Metrics.appendJSON(b)
	b = e.appendOutcome(b)
	if e.Tool != nil || e.User != nil { // most entries have neither: no call
		b = e.appendObjects(b)
	}
	return append(b, '}')
}

// appendRequest opens the entry's object and appends its first fields:
// the request's id and time, the provider and model that served it, its
// token count and cost, and its timings.
func (e *Entry) appendRequest(b []byte) []byte {
	b = append(b, `{"request_id":`...)
	b = llm.AppendJSONString(b, e.RequestID)
	b = append(b, `,"timestamp":`...)
	b = llm.AppendJSONString(b, e.Timestamp)
	b = append(b, `,"provider":`...)
	b = llm.AppendJSONString(b, e.Provider)
	b = append(b, `,"model":`...)
	b = llm.AppendJSONString(b, e.Model)
	b = append(b, `,"model_provider":`...)
	b = llm.AppendJSONString(b, e.ModelProvider)
	b = append(b, `,"tokens_used":`...)
	b = strconv.AppendInt(b, e.TokensUsed, 10)
	b = append(b, `,"cost":`...)
	b = appendFloat(b, e.Cost)
	b = append(b, `,"latency_ms":`...)
	b = strconv.AppendInt(b, e.LatencyMS, 10)
	b = append(b, `,"processing_time_ms":`...)
	return strconv.AppendInt(b, e.ProcessingTimeMS, 10)
}

// appendContext appends the fields from content_type to
// compliance_violations: who asked, in which conversation, how the request
// was routed and the compliance verdict's summary.
func (e *Entry) appendContext(b []byte) []byte {
	b = append(b, `,"content_type":`...)
	b = llm.AppendJSONString(b, e.ContentType)
	b = append(b, `,"user_id":`...)
	b = llm.AppendJSONString(b, e.UserID)
	b = append(b, `,"conversation_id":`...)
	b = llm.AppendJSONString(b, e.ConversationID)
	b = append(b, `,"conversation_stage":`...)
	b = llm.AppendJSONString(b, e.ConversationStage)
	b = append(b, `,"routing_strategy":`...)
	b = llm.AppendJSONString(b, e.RoutingStrategy)
	b = append(b, `,"routing_reason":`...)
	b = llm.AppendJSONString(b, e.RoutingReason)
	b = append(b, `,"compliance_status":`...)
	b = llm.AppendJSONString(b, e.ComplianceStatus)
	b = append(b, `,"compliance_violations":`...)
	return appendStrings(b, e.ComplianceViolations)
}

// appendJSON appends the entry's "metacache" member, the object included
// (a nil query as null).
func (m *Metacache) appendJSON(b []byte) []byte {
	b = append(b, `,"metacache":{"hit":`...)
	b = strconv.AppendBool(b, m.Hit)
	b = append(b, `,"query":`...)
	if m.Query == nil {
		b = append(b, "null"...)
	} else {
		b = llm.AppendJSONString(b, *m.Query)
	}
	b = append(b, `,"tokens_saved":`...)
	b = strconv.AppendInt(b, m.TokensSaved, 10)
	b = append(b, `,"cost_saved":`...)
	b = appendFloat(b, m.CostSaved)
	return append(b, '}')
}

// appendJSON appends the entry's "compliance" member, the object included
// (a nil score as null, nil lists as null).
func (c *ComplianceBlock) appendJSON(b []byte) []byte {
	b = append(b, `,"compliance":{"data_classification":`...)
	b = llm.AppendJSONString(b, c.DataClassification)
	b = append(b, `,"compliance_score":`...)
	if c.ComplianceScore == nil {
		b = append(b, "null"...)
	} else {
		b = appendFloat(b, *c.ComplianceScore)
	}
	b = append(b, `,"has_violations":`...)
	b = strconv.AppendBool(b, c.HasViolations)
	b = append(b, `,"violations":`...)
	b = appendStrings(b, c.Violations)
	b = append(b, `,"regulatory_frameworks":`...)
	b = appendStrings(b, c.RegulatoryFrameworks)
	return append(b, '}')
}

// appendJSON appends the entry's "metrics" member, the object and its
// nested "custom_metrics" included.
func (m *EntryMetrics) appendJSON(b []byte) []byte {
	b = append(b, `,"metrics":{"prompt_tokens":`...)
	b = strconv.AppendInt(b, m.PromptTokens, 10)
	b = append(b, `,"completion_tokens":`...)
	b = strconv.AppendInt(b, m.CompletionTokens, 10)
	b = append(b, `,"total_tokens":`...)
	b = strconv.AppendInt(b, m.TotalTokens, 10)
	b = append(b, `,"processing_time_ms":`...)
	b = strconv.AppendInt(b, m.ProcessingTimeMS, 10)
	b = append(b, `,"success":`...)
	b = strconv.AppendBool(b, m.Success)
	b = append(b, `,"custom_metrics":{"api_key":`...)
	b = llm.AppendJSONString(b, m.CustomMetrics.APIKey)
	return append(b, `}}`...)
}

// appendOutcome appends the response's status, endpoint and stream flag,
// then the omitempty fields key_id, usage_estimated, error_type and error
// when they are set.
func (e *Entry) appendOutcome(b []byte) []byte {
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(e.Status), 10)
	b = append(b, `,"endpoint":`...)
	b = llm.AppendJSONString(b, e.Endpoint)
	b = append(b, `,"stream":`...)
	b = strconv.AppendBool(b, e.Stream)
	if e.KeyID != "" {
		b = append(b, `,"key_id":`...)
		b = llm.AppendJSONString(b, e.KeyID)
	}
	if e.UsageEstimated {
		b = append(b, `,"usage_estimated":true`...)
	}
	if e.ErrorType != "" {
		b = append(b, `,"error_type":`...)
		b = llm.AppendJSONString(b, e.ErrorType)
	}
	if e.Error != "" {
		b = append(b, `,"error":`...)
		b = llm.AppendJSONString(b, e.Error)
	}
	return b
}

// appendObjects appends the omitempty members tool_call and user when
// they are set, each encoded by encoding/json (the rare entries that have
// them pay its allocations; one it cannot encode is left out). AppendJSON
// calls it only when one of them is set.
func (e *Entry) appendObjects(b []byte) []byte {
	if e.Tool != nil {
		// Tool calls' entries only: encoding/json writes the part.
		if js, err := json.Marshal(e.Tool); err == nil {
			b = append(b, `,"tool_call":`...)
			b = append(b, js...)
		}
	}
	if e.User != nil {
		// Signed-in users' entries only.
		if js, err := json.Marshal(e.User); err == nil {
			b = append(b, `,"user":`...)
			b = append(b, js...)
		}
	}
	return b
}

// appendStrings appends ss as a JSON array, or null when ss is nil.
func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = llm.AppendJSONString(b, s)
	}
	return append(b, ']')
}

// appendFloat appends f as encoding/json formats a float64: the shortest
// decimal that reads back as f, in exponent form below 1e-6 and from 1e21
// on (with a one-digit negative exponent as e-7, not e-07); null for NaN
// and the infinities.
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, "null"...)
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
