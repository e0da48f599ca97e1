package analytics

import "time"

// SetNow makes r's clock now (Add's minute-row cut-off).
func SetNow(r *Rollups, now func() time.Time) { r.now = now }

// Histogram bounds, for checking estimates against the documented bound.
var (
	LatencyRatio     = latencyRatio
	LatencyFirstEdge = latencyFirstEdge
	LatencyTop       = latencyEdges[len(latencyEdges)-1]
)
