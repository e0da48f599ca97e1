package limit

import "time"

// PeriodStart is the start (UTC, calendar) of the budget period containing now:
// today for daily, Monday for weekly, the 1st for monthly.
func PeriodStart(period string, now time.Time) time.Time {
	now = now.UTC()
	day := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	switch period {
	case "daily":
		return day
	case "weekly":
		offset := (int(day.Weekday()) + 6) % 7 // Monday = 0
		return day.AddDate(0, 0, -offset)
	}
	return time.Date(now.Year(), now.Month(), 1, 0, 0, 0, 0, time.UTC)
}

// PeriodEnd is the start of the next period.
func PeriodEnd(period string, now time.Time) time.Time {
	start := PeriodStart(period, now)
	switch period {
	case "daily":
		return start.AddDate(0, 0, 1)
	case "weekly":
		return start.AddDate(0, 0, 7)
	}
	return start.AddDate(0, 1, 0)
}
