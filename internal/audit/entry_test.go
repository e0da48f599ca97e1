package audit_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/audit"
	"github.com/svc-gateway/svc/internal/pipeline"
)

// recordOracle is how RecordFromJSON read an entry before it decoded only
// the columns: the whole entry with encoding/json, then its columns.
func recordOracle(js []byte) (audit.Record, error) {
	var e audit.Entry
	if err := json.Unmarshal(js, &e); err != nil {
		return audit.Record{}, err
	}
	if e.RequestID == "" {
		return audit.Record{}, errors.New("no request_id")
	}
	ts, err := time.Parse(time.RFC3339Nano, e.Timestamp)
	if err != nil {
		return audit.Record{}, err
	}
	return audit.Record{
		RequestID: e.RequestID, Timestamp: ts.UTC(), KeyID: e.KeyID, Provider: e.Provider, Model: e.Model,
		Status: e.Status, Success: e.Metrics.Success, Tokens: e.TokensUsed, Cost: e.Cost, LatencyMS: e.LatencyMS,
		Entry: js, UserID: e.UserID, ConversationID: e.ConversationID, KeyMask: e.Metrics.CustomMetrics.APIKey,
		PromptTokens: e.Metrics.PromptTokens, CompletionTokens: e.Metrics.CompletionTokens,
		CacheHit: e.Metacache.Hit, TokensSaved: e.Metacache.TokensSaved, CostSaved: e.Metacache.CostSaved,
	}, nil
}

func marshalEntry(t *testing.T, e *audit.Entry) string {
	t.Helper()
	js, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

// TestRecordFromJSON checks that decoding only the columns reads every
// entry as decoding the whole entry with encoding/json did: the same
// record, or an error for the same inputs.
func TestRecordFromJSON(t *testing.T) {
	hit := benchExchange(3)
	hit.Cache = &pipeline.CacheHit{Query: "what is <b>svc</b> & why?", TokensSaved: 120, CostSaved: 0.0042}
	failed := benchExchange(4)
	failed.Status, failed.Err = 502, apierr.New(apierr.UpstreamError, "upstream_error", "provider said \"no\"\n")
	odd := benchExchange(5)
	odd.Principal.MaskedKey = "sk-\u2028é\x00<>&"
	odd.Chat.User = "Zoë \U0001F642 \\ \"q\""
	odd.ConversationID = "conv-1"
	odd.Chat.Messages = append(odd.Chat.Messages, odd.Chat.Messages[0])
	odd.Chat.Messages[1].Role = "assistant"
	anonymous := benchExchange(6)
	anonymous.Principal, anonymous.Chat = nil, nil

	tests := []struct {
		name    string
		js      string
		wantErr bool
	}{
		{"svcbench's entry", marshalEntry(t, audit.FromExchange(benchExchange(1), 40*time.Millisecond)), false},
		{"a cache hit", marshalEntry(t, audit.FromExchange(hit, 0)), false},
		{"an upstream error", marshalEntry(t, audit.FromExchange(failed, 10*time.Millisecond)), false},
		{"escapes and unicode", marshalEntry(t, audit.FromExchange(odd, time.Millisecond)), false},
		{"no principal", marshalEntry(t, audit.FromExchange(anonymous, time.Millisecond)), false},
		{"only the required fields", `{"request_id":"r1","timestamp":"2026-01-02T03:04:05Z"}`, false},
		{"names in another case", `{"Request_ID":"r2","TIMESTAMP":"2026-01-02T03:04:05.5Z","Status":404,"metrics":{"Success":true}}`, false},
		{"a repeated name: the last wins", `{"request_id":"a","request_id":"r3","timestamp":"2026-01-02T03:04:05Z","cost":1,"cost":2.5}`, false},
		{"invalid UTF-8 in a string", "{\"request_id\":\"r4\",\"timestamp\":\"2026-01-02T03:04:05Z\",\"user_id\":\"a\xffb\"}", false},
		{"an escaped name", `{"request\u005fid":"r5","timestamp":"2026-01-02T03:04:05Z"}`, false},
		{"nulls", `{"request_id":"r6","timestamp":"2026-01-02T03:04:05Z","model":null,"metacache":null,"tokens_used":null}`, false},
		{"not JSON", `{"request_id":`, true},
		{"not an object", `["request_id"]`, true},
		{"no request_id", `{"timestamp":"2026-01-02T03:04:05Z"}`, true},
		{"a bad timestamp", `{"request_id":"r7","timestamp":"yesterday"}`, true},
		{"tokens out of range", `{"request_id":"r8","timestamp":"2026-01-02T03:04:05Z","tokens_used":1e30}`, true},
		{"a fractional status", `{"request_id":"r9","timestamp":"2026-01-02T03:04:05Z","status":200.5}`, true},
		{"a string for a number", `{"request_id":"r10","timestamp":"2026-01-02T03:04:05Z","latency_ms":"5"}`, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want, wantErr := recordOracle([]byte(tc.js))
			if (wantErr != nil) != tc.wantErr {
				t.Fatalf("the oracle: error %v, want an error: %v", wantErr, tc.wantErr)
			}
			got, err := audit.RecordFromJSON([]byte(tc.js))
			if (err != nil) != tc.wantErr {
				t.Fatalf("RecordFromJSON: error %v, want an error: %v", err, tc.wantErr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("RecordFromJSON (-encoding/json's record +got):\n%s", diff)
			}
		})
	}
}
