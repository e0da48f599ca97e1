package audit

import (
	"context"
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
}

// Query selects records for GET /api/vas/logs. Empty strings match anything.
type Query struct {
	Since    time.Time
	Provider string
	Model    string
	KeyID    string
	Limit    int
	Offset   int
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
	// InsertLogs writes records in one transaction. A record whose RequestID is
	// already stored is skipped, so a retried batch never duplicates entries.
	InsertLogs(ctx context.Context, recs []Record) error
	// QueryLogs returns the matching records newest first, and the total number
	// of matches ignoring Limit and Offset.
	QueryLogs(ctx context.Context, q Query) ([]Record, int64, error)
	// SummarizeLogs aggregates every record at or after since.
	SummarizeLogs(ctx context.Context, since time.Time) (Summary, error)
	// SpendSince sums Cost over keyID's records at or after since.
	SpendSince(ctx context.Context, keyID string, since time.Time) (float64, error)
}
