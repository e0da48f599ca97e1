package cohere

import "time"

// NewAt returns an adapter whose clock stands at now, for golden files.
func NewAt(now time.Time) *Adapter { return &Adapter{now: func() time.Time { return now }} }
