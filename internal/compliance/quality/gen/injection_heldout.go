package main

var (
	heldOutOverrides    []overrideSet
	heldOutEncodedCores []string
	heldOutInjections   []injGroup
	heldOutBenign       []injGroup
)
