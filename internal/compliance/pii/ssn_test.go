package pii

import (
	"testing"

	"github.com/svc-gateway/svc/internal/compliance/detect"
)

func TestSSN(t *testing.T) {
	runTable(t, detect.SSN, []tcase{
		{"dashed", "SSN: 536-22-1234.", []string{"536-22-1234"}},
		{"dashed no context", "on file: 219-09-9999", []string{"219-09-9999"}},
		{"spaced with context", "social security number 536 22 1234", []string{"536 22 1234"}},
		{"bare with context", "my ssn is 536221234", []string{"536221234"}},
		{"two", "536-22-1234 and 078-05-1120", []string{"536-22-1234", "078-05-1120"}},
		{"dotted with context", "SSN 536.22.1234", []string{"536.22.1234"}},
		{"dotted without context", "version 536.22.1234", nil},
		{"after ssn#", "SSN#536-22-1234", []string{"536-22-1234"}},
		{"en dashes", "SSN: 536\u201322\u20131234", []string{"536\u201322\u20131234"}},

		{"area 000", "SSN 000-12-3456", nil},
		{"area 666", "SSN 666-12-3456", nil},
		{"area 9xx", "SSN 912-12-3456", nil},
		{"group 00", "SSN 536-00-1234", nil},
		{"serial 0000", "SSN 536-22-0000", nil},
		{"bare without context", "reference 536221234 attached", nil},
		{"longer dashed chain", "code 536-22-1234-99", nil},
		{"phone shape", "call 536-221-2345", nil},
		{"glued to letters", "ID536-22-1234", nil},
		{"date", "2021-05-12", nil},
		{"ticket word", "Ticket 536-22-1234 reopened", nil},
	})
}
