package auth

import "time"

// SetClock replaces the clock of k (tests only).
func SetClock(k *Keys, now func() time.Time) { k.now = now }
