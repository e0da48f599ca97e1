package policy

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"unicode/utf8"
)

// Bounds of the library's records, checked by Validate.
const (
	MaxName        = 200      // bytes of a name, a use case, a framework, an id, a list item
	MaxDescription = 4 << 10  // bytes of a description
	MaxContent     = 64 << 10 // bytes of a policy's content
	MaxList        = 100      // items of any list (applicable_*, metadata lists, policy_ids)
	MaxMetadata    = 16 << 10 // bytes of a policy's metadata, encoded as JSON
	MaxSubject     = 256      // bytes of an assignment's subject
	MinPriority    = 0        // lowest priority
	MaxPriority    = 100      // highest priority
)

// Defaults of a policy created without priority or severity (the HTTP
// surface applies them; Validate does not).
const (
	DefaultPriority = 50
	DefaultSeverity = "medium"
)

// Errors a FieldError may wrap, for callers that tell them apart.
var (
	// ErrUnknownPolicy: a preset names a policy id that does not exist.
	ErrUnknownPolicy = errors.New("policy: unknown policy id")
	// ErrUnknownPreset: an assignment (or the default preset) names a
	// preset that does not exist.
	ErrUnknownPreset = errors.New("policy: unknown preset")
	// ErrPresetAssigned: a preset still assigned to keys, teams or roles
	// cannot be deleted.
	ErrPresetAssigned = errors.New("policy: preset is assigned")
)

// FieldError says which field of a policy, preset or assignment is not
// acceptable, and why; the HTTP surface answers it 400 naming Field. It
// may wrap ErrUnknownPolicy or ErrUnknownPreset.
type FieldError struct {
	Field  string // the JSON name, dotted and indexed: metadata.source_ips[2]
	Reason string // in words, without the field's name
	Err    error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Reason }

// Unwrap returns the wrapped sentinel, if any.
func (e *FieldError) Unwrap() error { return e.Err }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// Validate checks p and fills its defaults: applicable_providers and
// applicable_models ["all"] when empty. Name and content must be non-empty,
// policy_type one of Types, severity one of Severities, priority 0–100,
// metadata.source_ips CIDRs or addresses; every text valid UTF-8 without
// NUL, and every length bounded (MaxName, MaxDescription, MaxContent,
// MaxList, MaxMetadata). The first problem is returned as a *FieldError.
func (p *Policy) Validate() error {
	if len(p.ApplicableProviders) == 0 {
		p.ApplicableProviders = []string{All}
	}
	if len(p.ApplicableModels) == 0 {
		p.ApplicableModels = []string{All}
	}
	if err := required("name", p.Name, MaxName); err != nil {
		return err
	}
	if err := text("description", p.Description, MaxDescription); err != nil {
		return err
	}
	if !slices.Contains(Types, p.Type) {
		return fieldErr("policy_type", "must be one of %s, got %q", strings.Join(Types, ", "), clip(p.Type))
	}
	if err := required("content", p.Content, MaxContent); err != nil {
		return err
	}
	if p.Priority < MinPriority || p.Priority > MaxPriority {
		return fieldErr("priority", "must be between %d and %d, got %d", MinPriority, MaxPriority, p.Priority)
	}
	if !slices.Contains(Severities, p.Severity) {
		return fieldErr("severity", "must be one of %s, got %q", strings.Join(Severities, ", "), clip(p.Severity))
	}
	if err := text("regulatory_framework", p.RegulatoryFramework, MaxName); err != nil {
		return err
	}
	if err := list("applicable_providers", p.ApplicableProviders); err != nil {
		return err
	}
	if err := list("applicable_models", p.ApplicableModels); err != nil {
		return err
	}
	return p.Metadata.validate()
}

func (m *Metadata) validate() error {
	for _, l := range []struct {
		name string
		v    []string
	}{
		{"metadata.source_ips", m.SourceIPs}, {"metadata.ad_groups", m.ADGroups},
		{"metadata.departments", m.Departments}, {"metadata.applications", m.Applications},
	} {
		if err := list(l.name, l.v); err != nil {
			return err
		}
	}
	for i, s := range m.SourceIPs {
		if _, err := ParseSource(s); err != nil {
			return fieldErr(fmt.Sprintf("metadata.source_ips[%d]", i), "must be a CIDR (10.0.0.0/8) or an address, got %q", clip(s))
		}
	}
	if len(m.Extra) > 0 {
		b, err := json.Marshal(m)
		if err != nil {
			return fieldErr("metadata", "cannot be encoded as JSON: %v", err)
		}
		if len(b) > MaxMetadata {
			return fieldErr("metadata", "must be at most %d bytes as JSON, got %d", MaxMetadata, len(b))
		}
	}
	return nil
}

// ParseSource reads a metadata.source_ips entry: a CIDR, or an address
// (a prefix of its full length).
func ParseSource(s string) (netip.Prefix, error) {
	if strings.Contains(s, "/") {
		p, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, err
		}
		return p.Masked(), nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// Validate checks pr: name non-empty, texts bounded, policy_ids at most
// MaxList distinct non-empty ids. Whether the ids exist is the store's to
// check (ErrUnknownPolicy).
func (pr *Preset) Validate() error {
	if err := required("name", pr.Name, MaxName); err != nil {
		return err
	}
	if err := text("description", pr.Description, MaxDescription); err != nil {
		return err
	}
	if err := text("use_case", pr.UseCase, MaxName); err != nil {
		return err
	}
	if err := list("policy_ids", pr.PolicyIDs); err != nil {
		return err
	}
	seen := make(map[string]int, len(pr.PolicyIDs))
	for i, id := range pr.PolicyIDs {
		if j, ok := seen[id]; ok {
			return fieldErr(fmt.Sprintf("policy_ids[%d]", i), "repeats policy_ids[%d] (%q)", j, id)
		}
		seen[id] = i
	}
	return nil
}

// Kinds are the assignment kinds, in precedence order.
var Kinds = []string{AssignKey, AssignTeam, AssignRole}

// Validate checks a: kind one of Kinds, subject and preset_id non-empty
// and bounded.
func (a *Assignment) Validate() error {
	if !slices.Contains(Kinds, a.Kind) {
		return fieldErr("kind", "must be one of %s, got %q", strings.Join(Kinds, ", "), clip(a.Kind))
	}
	if err := required("subject", a.Subject, MaxSubject); err != nil {
		return err
	}
	return required("preset_id", a.PresetID, MaxName)
}

// required is text that may not be empty (or only spaces).
func required(field, s string, maxLen int) error {
	if strings.TrimSpace(s) == "" {
		return fieldErr(field, "is required and may not be empty")
	}
	return text(field, s, maxLen)
}

// text is at most maxLen bytes of valid UTF-8 without NUL.
func text(field, s string, maxLen int) error {
	if len(s) > maxLen {
		return fieldErr(field, "must be at most %d bytes, got %d", maxLen, len(s))
	}
	if !utf8.ValidString(s) {
		return fieldErr(field, "must be valid UTF-8")
	}
	if strings.IndexByte(s, 0) >= 0 {
		return fieldErr(field, "may not contain NUL characters")
	}
	return nil
}

// list is at most MaxList non-empty items of at most MaxName bytes.
func list(field string, l []string) error {
	if len(l) > MaxList {
		return fieldErr(field, "may hold at most %d items, got %d", MaxList, len(l))
	}
	for i, s := range l {
		if err := required(fmt.Sprintf("%s[%d]", field, i), s, MaxName); err != nil {
			return err
		}
	}
	return nil
}

// clip shortens a refused value quoted back in an error.
func clip(s string) string {
	const n = 64
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
