package auth

import "time"

// SetClock replaces the clock of k (tests only).
func SetClock(k *Keys, now func() time.Time) { k.now = now }

// Following reports whether k's Run is subscribed to invalidations (tests
// only).
func Following(k *Keys) bool { return k.trust.Following() }
