package jsonbody

import (
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
)

func TestDecodeErrors(t *testing.T) {
	type inner struct {
		N int `json:"n"`
	}
	type body struct {
		Name  string  `json:"name"`
		Items []inner `json:"items"`
	}
	cases := []struct {
		name, in, code, param string
		strict                bool
	}{
		{"empty", ``, "invalid_json", "", false},
		{"array", `[]`, "invalid_json", "", false},
		{"syntax", `{"name":`, "invalid_json", "", false},
		{"trailing", `{"name":"a"} {}`, "invalid_json", "", false},
		{"duplicate", `{"name":"a","name":"b"}`, "duplicate_field", "name", false},
		{"nested type", `{"items":[{"n":1},{"n":"x"}]}`, "invalid_type", "items[1].n", false},
		{"unknown strict", `{"name":"a","Name":"b"}`, "unknown_field", "Name", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var v body
			e := apierr.From(Decode([]byte(c.in), &v, c.strict))
			if e == nil || e.Kind != apierr.InvalidRequest || e.Code != c.code || e.Param != c.param {
				t.Fatalf("got %+v, want InvalidRequest %s param %q", e, c.code, c.param)
			}
		})
	}
	var v body
	if err := Decode([]byte(`{"name":"a","Name":"b","extra":1}`), &v, false); err != nil || v.Name != "a" {
		t.Errorf("lenient decode: %v, name %q; want the exact-case field", err, v.Name)
	}
}

func TestParam(t *testing.T) {
	for in, want := range map[string]string{"": "", "/model": "model", "/messages/0/content/2/text": "messages[0].content[2].text", "/a~1b": "a/b"} {
		if got := Param(in); got != want {
			t.Errorf("Param(%q) = %q, want %q", in, got, want)
		}
	}
}
