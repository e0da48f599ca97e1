//go:build race

package main

// raceEnabled: the race detector slows the helpers down several times.
const raceEnabled = true
