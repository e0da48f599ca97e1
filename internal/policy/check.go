package policy

import "github.com/svc-gateway/svc/internal/compliance/detect"

// Action is what a policy does when its checks match.
type Action string

// Actions, mildest first.
const (
	ActionFlag   Action = "flag"
	ActionRedact Action = "redact"
	ActionBlock  Action = "block"
)

// Scope is which side of a call a policy applies to.
type Scope string

// Scopes.
const (
	ScopePrompt Scope = "prompt"
	ScopeAnswer Scope = "answer"
	ScopeBoth   Scope = "both"
)

// Checks are what a policy's content compiles to: what the compliance
// engine looks for and what happens when it finds it. They are returned
// with each policy so its author sees what it does.
type Checks struct {
	// Detectors are the entity types the policy acts on.
	Detectors []detect.Type `json:"detectors"`
	// Keywords are words and phrases matched case-insensitively on word
	// boundaries.
	Keywords []string `json:"keywords"`
	// Topics are restricted subjects, matched semantically against the
	// text (the policy's own words when none is listed).
	Topics    []string `json:"topics"`
	Action    Action   `json:"action"`
	AppliesTo Scope    `json:"applies_to"`
	// MinScore is the confidence from which a finding counts.
	MinScore float64 `json:"min_score"`
	// Notes say what the compiler read and assumed, in words.
	Notes []string `json:"notes,omitempty"`
}
