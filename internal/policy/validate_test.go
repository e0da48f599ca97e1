package policy

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func validPolicy() Policy {
	return Policy{Name: "No SSNs", Type: "compliance", Content: "Block any prompt with a US SSN.",
		Priority: 90, Severity: "critical"}
}

func TestPolicyValidate(t *testing.T) {
	cases := []struct {
		name  string
		edit  func(p *Policy)
		field string // "" for valid
	}{
		{"valid", func(p *Policy) {}, ""},
		{"priority 0", func(p *Policy) { p.Priority = 0 }, ""},
		{"priority 100", func(p *Policy) { p.Priority = 100 }, ""},
		{"cidr and address", func(p *Policy) { p.Metadata.SourceIPs = []string{"10.0.0.0/8", "192.168.1.7", "2001:db8::/32"} }, ""},
		{"empty name", func(p *Policy) { p.Name = "" }, "name"},
		{"blank name", func(p *Policy) { p.Name = "  \t" }, "name"},
		{"long name", func(p *Policy) { p.Name = strings.Repeat("n", MaxName+1) }, "name"},
		{"NUL in name", func(p *Policy) { p.Name = "a\x00b" }, "name"},
		{"invalid UTF-8 description", func(p *Policy) { p.Description = "a\xffb" }, "description"},
		{"long description", func(p *Policy) { p.Description = strings.Repeat("d", MaxDescription+1) }, "description"},
		{"empty content", func(p *Policy) { p.Content = "" }, "content"},
		{"content over 64 KiB", func(p *Policy) { p.Content = strings.Repeat("c", MaxContent+1) }, "content"},
		{"unknown type", func(p *Policy) { p.Type = "financial" }, "policy_type"},
		{"empty type", func(p *Policy) { p.Type = "" }, "policy_type"},
		{"priority -1", func(p *Policy) { p.Priority = -1 }, "priority"},
		{"priority 101", func(p *Policy) { p.Priority = 101 }, "priority"},
		{"unknown severity", func(p *Policy) { p.Severity = "urgent" }, "severity"},
		{"long framework", func(p *Policy) { p.RegulatoryFramework = strings.Repeat("f", MaxName+1) }, "regulatory_framework"},
		{"too many providers", func(p *Policy) { p.ApplicableProviders = make([]string, MaxList+1) }, "applicable_providers"},
		{"empty model entry", func(p *Policy) { p.ApplicableModels = []string{"gpt-4o", ""} }, "applicable_models[1]"},
		{"malformed CIDR", func(p *Policy) { p.Metadata.SourceIPs = []string{"10.0.0.0/8", "10.0.0.0/33"} }, "metadata.source_ips[1]"},
		{"hostname", func(p *Policy) { p.Metadata.SourceIPs = []string{"example.com"} }, "metadata.source_ips[0]"},
		{"empty group", func(p *Policy) { p.Metadata.ADGroups = []string{""} }, "metadata.ad_groups[0]"},
		{"too many departments", func(p *Policy) { p.Metadata.Departments = make([]string, MaxList+1) }, "metadata.departments"},
		{"huge extra metadata", func(p *Policy) { p.Metadata.Extra = map[string]any{"x": strings.Repeat("x", MaxMetadata)} }, "metadata"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := validPolicy()
			c.edit(&p)
			err := p.Validate()
			if got := fieldOf(err); got != c.field {
				t.Errorf("Validate() = %v: field %q, want %q", err, got, c.field)
			}
		})
	}
}

func TestPolicyValidateDefaults(t *testing.T) {
	p := validPolicy()
	if err := p.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	if diff := cmp.Diff([]string{All}, p.ApplicableProviders); diff != "" {
		t.Errorf("applicable_providers (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{All}, p.ApplicableModels); diff != "" {
		t.Errorf("applicable_models (-want +got):\n%s", diff)
	}
}

func TestPresetValidate(t *testing.T) {
	cases := []struct {
		name  string
		pr    Preset
		field string
	}{
		{"valid", Preset{Name: "HIPAA", PolicyIDs: []string{"pol_a", "pol_b"}}, ""},
		{"no policies", Preset{Name: "empty"}, ""},
		{"empty name", Preset{PolicyIDs: []string{"pol_a"}}, "name"},
		{"long use case", Preset{Name: "p", UseCase: strings.Repeat("u", MaxName+1)}, "use_case"},
		{"repeated id", Preset{Name: "p", PolicyIDs: []string{"pol_a", "pol_b", "pol_a"}}, "policy_ids[2]"},
		{"empty id", Preset{Name: "p", PolicyIDs: []string{""}}, "policy_ids[0]"},
		{"too many ids", Preset{Name: "p", PolicyIDs: make([]string, MaxList+1)}, "policy_ids"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.pr.Validate()
			if got := fieldOf(err); got != c.field {
				t.Errorf("Validate() = %v: field %q, want %q", err, got, c.field)
			}
		})
	}
}

func TestAssignmentValidate(t *testing.T) {
	cases := []struct {
		name  string
		a     Assignment
		field string
	}{
		{"key", Assignment{Kind: "key", Subject: "vk_1", PresetID: "pre_1"}, ""},
		{"role", Assignment{Kind: "role", Subject: "analyst", PresetID: "pre_1"}, ""},
		{"bad kind", Assignment{Kind: "user", Subject: "u", PresetID: "pre_1"}, "kind"},
		{"no subject", Assignment{Kind: "team", PresetID: "pre_1"}, "subject"},
		{"long subject", Assignment{Kind: "team", Subject: strings.Repeat("s", MaxSubject+1), PresetID: "pre_1"}, "subject"},
		{"no preset", Assignment{Kind: "team", Subject: "t"}, "preset_id"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.a.Validate()
			if got := fieldOf(err); got != c.field {
				t.Errorf("Validate() = %v: field %q, want %q", err, got, c.field)
			}
		})
	}
}

func TestMetadataJSON(t *testing.T) {
	in := `{"source_ips":["10.0.0.0/8"],"departments":["legal"],"owner":"ciso","levels":[1,2]}`
	var m Metadata
	if err := json.Unmarshal([]byte(in), &m); err != nil {
		t.Fatalf("Unmarshal: %v", err)
	}
	want := Metadata{SourceIPs: []string{"10.0.0.0/8"}, Departments: []string{"legal"},
		Extra: map[string]any{"owner": "ciso", "levels": []any{1.0, 2.0}}}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	out, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("Marshal: %v", err)
	}
	if got, want := string(out), `{"departments":["legal"],"levels":[1,2],"owner":"ciso","source_ips":["10.0.0.0/8"]}`; got != want {
		t.Errorf("encoded %s, want %s", got, want)
	}
	for _, bad := range []string{`[]`, `{"source_ips":"10.0.0.0/8"}`, `{"ad_groups":[1]}`} {
		if err := json.Unmarshal([]byte(bad), &m); err == nil {
			t.Errorf("Unmarshal(%s): got nil error, want one", bad)
		}
	}
	if b, _ := json.Marshal(Metadata{}); string(b) != "{}" {
		t.Errorf("empty metadata encoded %s, want {}", b)
	}
}

func TestPatchApply(t *testing.T) {
	p := validPolicy()
	name, off, prio := "renamed", false, 10
	(&PolicyPatch{Name: &name, IsActive: &off, Priority: &prio}).Apply(&p)
	want := validPolicy()
	want.Name, want.IsActive, want.Priority = name, false, prio
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("patched (-want +got):\n%s", diff)
	}
}

// fieldOf is the field a *FieldError names ("" for nil; "!" for another error).
func fieldOf(err error) string {
	if err == nil {
		return ""
	}
	var fe *FieldError
	if !errors.As(err, &fe) {
		return "!" + err.Error()
	}
	return fe.Field
}
