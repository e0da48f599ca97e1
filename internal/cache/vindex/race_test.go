//go:build race

package vindex

// raceEnabled shrinks the big tests when the race detector slows them down.
const raceEnabled = true
