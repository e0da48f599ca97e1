//go:build !race

package pricing

const raceEnabled = false
