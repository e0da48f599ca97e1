package audit

import (
	"context"
	"fmt"
	"time"
)

// Record is one persisted audit entry: the indexed columns that queries filter
// and aggregate on, and the full VAS entry as JSON.
type Record struct {
	RequestID string
	Timestamp time.Time // UTC
	KeyID     string    // virtual key id, "" when unauthenticated
	Provider  string
	Model     string
	Status    int // HTTP status answered to the caller
	Success   bool
	Tokens    int64
	Cost      float64
	LatencyMS int64
	Entry     []byte // the VAS entry, JSON

	// Read from the entry for filters and rollups (not columns of every
	// store): who, which conversation, the key's masked prefix, the
	// token split and what a cache hit saved.
	UserID           string
	ConversationID   string
	KeyMask          string
	PromptTokens     int64
	CompletionTokens int64
	CacheHit         bool
	TokensSaved      int64
	CostSaved        float64
}

// Query selects records for GET /api/vas/logs. Empty strings and zero
// values match anything.
type Query struct {
	Since          time.Time // at or after
	Until          time.Time // before
	Provider       string
	Model          string
	KeyID          string
	UserID         string
	ConversationID string
	// ProviderPrefix selects the providers that start with it (in byte
	// order: "mcp:" selects the tool gateway's entries).
	ProviderPrefix string
	// Status selects one HTTP status; Outcome "success" or "error" selects
	// by the entry's success instead.
	Status  int
	Outcome string
	// Before, when set, selects only records older than the cursor
	// (newest-first order): cursor paging.
	Before *Cursor
	Limit  int
	Offset int
}

// Cursor is a position in the newest-first order of records.
type Cursor struct {
	Timestamp time.Time
	RequestID string
}

// Outcomes of Query.Outcome.
const (
	OutcomeSuccess = "success"
	OutcomeError   = "error"
)

// Group sums the records of one time bucket, provider and model
// (Store.GroupLogs).
type Group struct {
	// Bucket is the start of the group's time bucket (UTC); the zero Time
	// when the records were not grouped by time.
	Bucket   time.Time
	Provider string
	Model    string
	Requests int64
	// Errors counts the records with a status >= 400 or not successful,
	// as the analytics rollups do.
	Errors       int64
	Cost         float64
	LatencySumMS int64
}

// Summary aggregates records since a time, for GET /api/vas/metrics.
type Summary struct {
	TotalRequests int64
	Successes     int64
	AvgLatencyMS  float64
	TotalTokens   int64
	TotalCost     float64
	Providers     []string // distinct, sorted
	Models        []string // distinct, sorted
}

// Store is the durable log store (SQL).
type Store interface {
	// InsertLogs writes records. A record whose RequestID is already stored is
	// skipped, so a retried batch never duplicates entries. Text a database
	// cannot hold (NUL bytes, invalid UTF-8) is stored escaped, and one record
	// that cannot be stored never costs the others: when some records were
	// stored only in a fallback form or not at all, the error is a
	// *DataError naming them and every other record is stored. Any other
	// error means the call may be retried.
	InsertLogs(ctx context.Context, recs []Record) error
	// QueryLogs returns the matching records newest first, and the total number
	// of matches ignoring Limit and Offset.
	QueryLogs(ctx context.Context, q Query) ([]Record, int64, error)
	// StoredIDs returns which of ids are stored.
	StoredIDs(ctx context.Context, ids []string) (map[string]bool, error)
	// Locate returns the cursor of a stored record, or store.ErrNotFound.
	Locate(ctx context.Context, requestID string) (Cursor, error)
	// GroupLogs sums the records matching q (its Limit aside) per time
	// bucket, provider and model: buckets of the given length aligned on
	// the Unix epoch, or one bucket for all time when bucket <= 0. Groups
	// are ordered newest bucket first, then by provider and model in byte
	// order; at most q.Limit of them when it is > 0 (q.Offset is ignored).
	GroupLogs(ctx context.Context, q Query, bucket time.Duration) ([]Group, error)
	// SummarizeLogs aggregates every record at or after since.
	SummarizeLogs(ctx context.Context, since time.Time) (Summary, error)
	// SpendSince sums Cost over keyID's records at or after since.
	SpendSince(ctx context.Context, keyID string, since time.Time) (float64, error)
}

// DataError reports the records of an InsertLogs call that the store could
// not write as given because of their own data; the call's other records
// were written. Retrying the same records gives the same result.
type DataError struct {
	// Escaped are the request ids of records stored in a fallback form (every
	// text field escaped to ASCII) after their plain form was refused.
	Escaped []string
	// Rejected are the request ids of records not stored at all.
	Rejected []string
	// Err is the database's reason for the first of them.
	Err error
}

func (e *DataError) Error() string {
	return fmt.Sprintf("audit records refused by the store: %d stored escaped, %d not stored: %v",
		len(e.Escaped), len(e.Rejected), e.Err)
}

func (e *DataError) Unwrap() error { return e.Err }
