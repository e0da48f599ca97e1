package policy

// PolicyPatch is an update of a policy: only the fields that are set
// change. A list set to an empty slice resets applicable_providers or
// applicable_models to ["all"]; Metadata, when set, replaces the whole
// metadata object.
type PolicyPatch struct {
	Name                *string
	Description         *string
	Type                *string
	Content             *string
	Priority            *int
	ApplicableProviders *[]string
	ApplicableModels    *[]string
	RegulatoryFramework *string
	Severity            *string
	Metadata            *Metadata
	IsActive            *bool
}

// Apply sets p's fields from the patch's set fields.
func (pp *PolicyPatch) Apply(p *Policy) {
	set(&p.Name, pp.Name)
	set(&p.Description, pp.Description)
	set(&p.Type, pp.Type)
	set(&p.Content, pp.Content)
	set(&p.Priority, pp.Priority)
	set(&p.ApplicableProviders, pp.ApplicableProviders)
	set(&p.ApplicableModels, pp.ApplicableModels)
	set(&p.RegulatoryFramework, pp.RegulatoryFramework)
	set(&p.Severity, pp.Severity)
	set(&p.Metadata, pp.Metadata)
	set(&p.IsActive, pp.IsActive)
}

// PresetPatch is an update of a preset: only the fields that are set
// change; PolicyIDs, when set, replaces the whole ordered list.
type PresetPatch struct {
	Name        *string
	Description *string
	UseCase     *string
	PolicyIDs   *[]string
}

// Apply sets pr's fields from the patch's set fields.
func (pp *PresetPatch) Apply(pr *Preset) {
	set(&pr.Name, pp.Name)
	set(&pr.Description, pp.Description)
	set(&pr.UseCase, pp.UseCase)
	set(&pr.PolicyIDs, pp.PolicyIDs)
}

func set[T any](dst *T, v *T) {
	if v != nil {
		*dst = *v
	}
}

// AssignmentFilter selects assignments; empty fields match all.
type AssignmentFilter struct {
	Kind     string
	Subject  string
	PresetID string
}

// Stats are the library's counts (GET /api/stats).
type Stats struct {
	TotalPolicies        int64 `json:"total_policies"`
	ActivePolicies       int64 `json:"active_policies"`
	TotalPresets         int64 `json:"total_presets"`
	TotalAssignments     int64 `json:"total_assignments"`
	TotalApplications    int64 `json:"total_applications"`    // policy evaluations
	ComplianceViolations int64 `json:"compliance_violations"` // evaluations that found a violation
}
