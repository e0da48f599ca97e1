package access

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRequester(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"alice", "user:alice", true},
		{"user:alice", "user:alice", true},
		{"virtual_key:k1", "virtual_key:k1", true},
		{"device:d:1", "device:d:1", true},
		{"admin:admin", "", false},
		{"anonymous:x", "", false},
		{"team:t", "", false},
		{"user:", "", false},
		{"user: ", "", false},
		{"", "", false},
		{"a\nb", "", false},
		{"\xff", "", false},
		{"user:" + strings.Repeat("a", MaxUserID-5), "user:" + strings.Repeat("a", MaxUserID-5), true},
		{"user:" + strings.Repeat("a", MaxUserID-4), "", false},
		{strings.Repeat("a", MaxUserID-5), "user:" + strings.Repeat("a", MaxUserID-5), true},
		{strings.Repeat("a", MaxUserID-4), "", false}, // over the bound once canonical
	} {
		got, err := Requester(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("Requester(%q) = %q, %v; want %q, ok %v", c.in, got, err, c.want, c.ok)
		}
		var ve *ValidationError
		if err != nil && (!errors.As(err, &ve) || ve.Field != "user_id") {
			t.Errorf("Requester(%q) error %v is not a ValidationError on user_id", c.in, err)
		}
	}
}

func TestNormalize(t *testing.T) {
	valid := func() Request {
		return Request{ServerID: "github", UserID: "virtual_key:k1", Justification: "triage issues", ToolsRequested: []string{"create_issue"}}
	}
	tools := func(n int) []string {
		l := make([]string, n)
		for i := range l {
			l[i] = fmt.Sprintf("tool_%d", i)
		}
		return l
	}
	for _, c := range []struct {
		name  string
		edit  func(r *Request)
		field string // "" when valid
	}{
		{"valid", func(*Request) {}, ""},
		{"justification at the bound", func(r *Request) { r.Justification = strings.Repeat("j", MaxJustification) }, ""},
		{"justification over", func(r *Request) { r.Justification = strings.Repeat("j", MaxJustification+1) }, "justification"},
		{"justification multiline", func(r *Request) { r.Justification = "line 1\nline 2\tindented" }, ""},
		{"justification blank", func(r *Request) { r.Justification = " \n" }, "justification"},
		{"justification NUL", func(r *Request) { r.Justification = "a\x00b" }, "justification"},
		{"tools at the bound", func(r *Request) { r.ToolsRequested = tools(MaxTools) }, ""},
		{"tools over", func(r *Request) { r.ToolsRequested = tools(MaxTools + 1) }, "tools_requested"},
		{"no tools", func(r *Request) { r.ToolsRequested = nil }, "tools_requested"},
		{"empty tool", func(r *Request) { r.ToolsRequested = []string{"a", ""} }, "tools_requested[1]"},
		{"tool name at the bound", func(r *Request) { r.ToolsRequested = []string{strings.Repeat("t", MaxToolName)} }, ""},
		{"tool name over", func(r *Request) { r.ToolsRequested = []string{strings.Repeat("t", MaxToolName+1)} }, "tools_requested[0]"},
		{"tool name newline", func(r *Request) { r.ToolsRequested = []string{"a\nb"} }, "tools_requested[0]"},
		{"no server", func(r *Request) { r.ServerID = "" }, "server_id"},
		{"server too long", func(r *Request) { r.ServerID = strings.Repeat("s", 65) }, "server_id"},
		{"bad user", func(r *Request) { r.UserID = "admin:admin" }, "user_id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := valid()
			c.edit(&r)
			err := r.normalize()
			var ve *ValidationError
			switch {
			case c.field == "" && err != nil:
				t.Fatalf("normalize = %v, want nil", err)
			case c.field != "" && (!errors.As(err, &ve) || ve.Field != c.field):
				t.Fatalf("normalize = %v, want a ValidationError on %s", err, c.field)
			}
		})
	}
}

func TestNormalizeCanonical(t *testing.T) {
	r := Request{ServerID: "s", UserID: "alice", Justification: "j", ToolsRequested: []string{"b", "a", "b", "c", "a"}}
	if err := r.normalize(); err != nil {
		t.Fatal(err)
	}
	if r.UserID != "user:alice" {
		t.Errorf("UserID = %q, want user:alice", r.UserID)
	}
	if diff := cmp.Diff([]string{"b", "a", "c"}, r.ToolsRequested); diff != "" {
		t.Errorf("ToolsRequested (-want +got):\n%s", diff)
	}
}
