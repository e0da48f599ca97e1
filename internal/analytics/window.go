package analytics

import (
	"net/url"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
)

// Limits of a report's window.
const (
	// MaxSpan is the longest from/to window.
	MaxSpan = 400 * 24 * time.Hour
	// MaxBuckets is how many volume buckets a from/to window aims at, at
	// most (widening the window to whole buckets may add one or two).
	MaxBuckets = 200
	// MinuteWindow is the longest window served from minute rollups, with
	// buckets shorter than an hour; longer ones read hour rollups.
	MinuteWindow = 6 * time.Hour
	// MinuteRetention is how long minute rollups are kept. A window that
	// starts earlier is served from hour rollups whatever its length.
	MinuteRetention = 48 * time.Hour
)

// Window is what a report covers: [From, To), in volume buckets of Bucket.
// From and To are multiples of Bucket since the Unix epoch (UTC). A Bucket
// under an hour reads minute rollups, otherwise hour (and day) rollups.
type Window struct {
	From, To time.Time
	Bucket   time.Duration
	// Period is the period parameter the window came from ("24h", "7d",
	// "30d"), or "" for from/to.
	Period string
}

// periods are the period parameter's values: the span and its bucket.
var periods = map[string]struct{ span, bucket time.Duration }{
	"24h": {24 * time.Hour, time.Hour},
	"7d":  {7 * 24 * time.Hour, 6 * time.Hour},
	"30d": {30 * 24 * time.Hour, 24 * time.Hour},
}

// bucketLadder are the bucket sizes of a from/to window, smallest first;
// each divides a day, or is a whole number of days, so buckets align to UTC
// midnight.
var bucketLadder = []time.Duration{
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour, 48 * time.Hour,
}

// ParseWindow reads the window of GET /api/analytics from q: period (24h,
// 7d or 30d; the default is 24h) or from and to (RFC 3339, to after from,
// at most MaxSpan apart), not both. A period ends at the end of the bucket
// holding now: 24h in hour buckets, 7d in 6-hour buckets, 30d in day
// buckets. A from/to window gets the smallest bucket of bucketLadder that
// gives at most MaxBuckets, at least a minute when the window is at most
// MinuteWindow long and starts within MinuteRetention of now, else at least
// an hour, and is widened to whole buckets. A bad value is a 400 naming
// the parameter.
func ParseWindow(q url.Values, now time.Time) (Window, error) {
	if q.Has("from") || q.Has("to") {
		if q.Has("period") {
			return Window{}, apierr.BadParam("period", "period cannot be combined with from and to")
		}
		return customWindow(q, now)
	}
	name := "24h"
	if q.Has("period") {
		name = q.Get("period")
	}
	p, ok := periods[name]
	if !ok {
		return Window{}, apierr.BadParam("period", "period must be one of 24h, 7d, 30d")
	}
	to := ceilTime(now, p.bucket)
	return Window{From: to.Add(-p.span), To: to, Bucket: p.bucket, Period: name}, nil
}

func customWindow(q url.Values, now time.Time) (Window, error) {
	if !q.Has("from") {
		return Window{}, apierr.BadParam("from", "from is required with to")
	}
	if !q.Has("to") {
		return Window{}, apierr.BadParam("to", "to is required with from")
	}
	from, err := time.Parse(time.RFC3339, q.Get("from"))
	if err != nil {
		return Window{}, apierr.BadParam("from", "from must be an RFC 3339 time, such as 2026-05-01T00:00:00Z")
	}
	to, err := time.Parse(time.RFC3339, q.Get("to"))
	if err != nil {
		return Window{}, apierr.BadParam("to", "to must be an RFC 3339 time, such as 2026-05-02T00:00:00Z")
	}
	if !to.After(from) {
		return Window{}, apierr.BadParam("to", "to must be after from")
	}
	span := to.Sub(from)
	if span > MaxSpan {
		return Window{}, apierr.BadParam("to", "from and to may be at most %d days apart", int(MaxSpan/(24*time.Hour)))
	}
	least := time.Hour
	if span <= MinuteWindow && !from.Before(now.Add(-MinuteRetention)) {
		least = time.Minute
	}
	bucket := bucketLadder[len(bucketLadder)-1]
	for _, b := range bucketLadder {
		if b >= least && (span+b-1)/b <= MaxBuckets {
			bucket = b
			break
		}
	}
	return Window{From: floorTime(from, bucket), To: ceilTime(to, bucket), Bucket: bucket}, nil
}

// floorTime is the start of t's bucket of size d, counted from the Unix
// epoch, in UTC.
func floorTime(t time.Time, d time.Duration) time.Time {
	us, step := t.UnixMicro(), d.Microseconds()
	return time.UnixMicro(floorDiv(us, step) * step).UTC()
}

// ceilTime is the end of t's bucket of size d, or t when t starts a bucket.
func ceilTime(t time.Time, d time.Duration) time.Time {
	f := floorTime(t, d)
	if f.Before(t.Truncate(time.Microsecond)) {
		return f.Add(d)
	}
	return f
}

// floorDiv is a/b rounded down (b > 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}
