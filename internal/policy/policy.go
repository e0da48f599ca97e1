// Package policy is the policy library: policies and presets (records in
// SQL), their assignment to virtual keys, teams and roles, the compiler
// that turns a policy's prose into checks the compliance engine runs, and
// the evaluation of a preset on a prompt or an answer.
//
// Sub-packages: policy/docs (document-to-policy generation: extraction
// from PDF, DOCX and TXT, obligations to suggested policies, jobs), and
// policy/httpapi (the policy library component, POLICY_PORT 7782).
package policy

import "time"

// Types of policy (the spec's policy_type).
var Types = []string{"compliance", "brand", "format", "role", "industry", "legal", "security"}

// Severities of a policy, strongest first.
var Severities = []string{"critical", "high", "medium", "low"}

// All is the applicable_providers / applicable_models entry that means
// every provider or model.
const All = "all"

// Policy is one rule of the library (the spec's Policy resource).
type Policy struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Type        string `json:"policy_type"`
	// Content is the rule in words, with optional explicit lines
	// ("Detectors: SSN, EMAIL", "Action: block", "Keywords: …",
	// "Applies to: prompt | answer | both") that Compile reads.
	Content             string    `json:"content"`
	Priority            int       `json:"priority"` // 0–100, higher first
	ApplicableProviders []string  `json:"applicable_providers"`
	ApplicableModels    []string  `json:"applicable_models"`
	RegulatoryFramework string    `json:"regulatory_framework"`
	Severity            string    `json:"severity"`
	Metadata            Metadata  `json:"metadata"`
	IsActive            bool      `json:"is_active"`
	CreatedAt           time.Time `json:"created_at"`
	UpdatedAt           time.Time `json:"updated_at"`
}

// Metadata targets a policy: it applies only to requests that match every
// list given (an empty list matches all).
type Metadata struct {
	SourceIPs    []string `json:"source_ips,omitempty"` // CIDRs or addresses
	ADGroups     []string `json:"ad_groups,omitempty"`
	Departments  []string `json:"departments,omitempty"`
	Applications []string `json:"applications,omitempty"` // the x-svc-application header
	// Extra keeps the other keys a client sent, returned as they came.
	Extra map[string]any `json:"-"`
}

// Preset is an ordered set of policies (the order sets evaluation
// priority), assigned to keys, teams or roles.
type Preset struct {
	ID          string    `json:"id"`
	Name        string    `json:"name"`
	Description string    `json:"description"`
	UseCase     string    `json:"use_case"`
	PolicyIDs   []string  `json:"policy_ids"`
	CreatedAt   time.Time `json:"created_at"`
	UpdatedAt   time.Time `json:"updated_at"`
}

// Assignment kinds, in precedence order (a key's preset wins over its
// team's, its team's over a role's; SVC_DEFAULT_PRESET applies last).
const (
	AssignKey  = "key"
	AssignTeam = "team"
	AssignRole = "role"
)

// Assignment gives a preset to a virtual key, a team or a role.
type Assignment struct {
	Kind      string    `json:"kind"`    // key, team, role
	Subject   string    `json:"subject"` // key id, team id, role name
	PresetID  string    `json:"preset_id"`
	CreatedAt time.Time `json:"created_at"`
}

// Suggestion is a policy drafted from a document (the spec's
// suggested_policies entry); it becomes live only through POST
// /api/policies.
type Suggestion struct {
	ID                  string  `json:"id"`
	Name                string  `json:"name"`
	Type                string  `json:"type"`
	Content             string  `json:"content"`
	Priority            int     `json:"priority"`
	RegulatoryFramework string  `json:"regulatory_framework"`
	Confidence          float64 `json:"confidence"`
	// Section is the heading the obligation was found under; Source the
	// sentence it came from.
	Section string `json:"section,omitempty"`
	Source  string `json:"source,omitempty"`
}
