package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestStagesMode(t *testing.T) {
	if testing.Short() {
		t.Skip("runs benchmarks")
	}
	t.Setenv("REDIS_URL", "")
	t.Setenv("SVC_TEST_REDIS_URL", "")
	var out bytes.Buffer
	if code := runStages(&out); code != 0 {
		t.Fatalf("exit %d: %s", code, out.String())
	}
	for _, row := range []string{"limit (rpm+tpm+spend)", "in-process", "route (plan a 2-target chain)"} {
		if !strings.Contains(out.String(), row) {
			t.Errorf("output lacks %q:\n%s", row, out.String())
		}
	}
}
