package main

import (
	_ "embed"
	"encoding/json"
	"strings"
)

// publicInjectionsTxt holds the rows taken from public data sets, each with
// the split it is dealt to and its source (repository, commit, path, row);
// testdata/SOURCES.md records their licences.
//
//go:embed public_injections.jsonl
var publicInjectionsTxt string

// publicInjections are the public rows of a split.
func publicInjections(heldOut bool) []injRow {
	want := "tune"
	if heldOut {
		want = "heldout"
	}
	var rows []injRow
	for _, line := range strings.Split(strings.TrimSpace(publicInjectionsTxt), "\n") {
		var r struct {
			injRow
			Split string `json:"split"`
		}
		if json.Unmarshal([]byte(line), &r) != nil || r.Split != want {
			continue
		}
		rows = append(rows, r.injRow)
	}
	return rows
}
