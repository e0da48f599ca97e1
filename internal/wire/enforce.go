package wire

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/identity"
	"github.com/svc-gateway/svc/internal/policy"
	"github.com/svc-gateway/svc/internal/proxy"
	"github.com/svc-gateway/svc/internal/teams"
)

// enforcer is the proxy's Enforcer in process: the caller's preset from
// the policy library (the key's policy_set, else its assignments, else
// SVC_DEFAULT_PRESET), cached for presetTTL, evaluated by the policy
// evaluator over the compliance engine, one text at a time.
type enforcer struct {
	store *policy.SQLStore
	ev    *policy.Evaluator
	eng   *compliance.Engine
	keys  *auth.Keys
	teams *teams.Directory // nil: users' teams name no policy set
	def   string

	mu    sync.Mutex
	cache map[callerKey]resolved

	applications, violations atomic.Int64
}

// callerKey names a caller in the preset cache without building a string
// per request.
type callerKey struct {
	kind identity.Kind
	id   string
}

type resolved struct {
	policies []policy.Policy // nil: no preset
	// family is the built-in compliance family a key's policy_set names
	// when no preset of the library has that id or name.
	family *compliance.Policy
	at     time.Time
}

// presetTTL is how long a caller's resolved preset is reused: a change to
// a preset, a policy or an assignment reaches every proxy within it.
const presetTTL = 2 * time.Second

var _ proxy.Enforcer = (*enforcer)(nil)

// Applies implements proxy.Enforcer: whether p has a preset or a family.
func (e *enforcer) Applies(ctx context.Context, p *identity.Principal) (bool, error) {
	r, err := e.policies(ctx, p)
	if err != nil {
		return false, fmt.Errorf("%w: %w", proxy.ErrPolicyUnavailable, err)
	}
	return r.family != nil || r.policies != nil, nil
}

// Enforce implements proxy.Enforcer.
func (e *enforcer) Enforce(ctx context.Context, c proxy.EnforceCall) (proxy.Verdict, error) {
	r, err := e.policies(ctx, c.Principal)
	if err != nil {
		return proxy.Verdict{}, fmt.Errorf("%w: %w", proxy.ErrPolicyUnavailable, err)
	}
	if r.family != nil {
		return e.family(c, r.family), nil
	}
	pols := r.policies
	if pols == nil {
		return proxy.Verdict{}, nil
	}
	v := proxy.Verdict{Applied: true, Score: 1, Redacted: make([]string, len(c.Texts)), Classification: "internal"}
	target := policy.Target{Provider: c.Provider, Model: c.Model, SourceIP: c.SourceIP, Application: c.Application}
	if p := c.Principal; p != nil {
		// A signed-in user's directory groups and department, for the
		// policies' ad_groups and departments targeting.
		target.Groups = p.Groups
		if p.Department != "" {
			target.Departments = []string{p.Department}
		}
	}
	rank := map[policy.Action]int{policy.ActionFlag: 1, policy.ActionRedact: 2, policy.ActionBlock: 3}
	for i, text := range c.Texts {
		d := e.ev.Evaluate(ctx, policy.Input{Text: text, Phase: policy.Scope(c.Phase), Policies: pols, Target: target})
		if d.Err != nil {
			return proxy.Verdict{}, d.Err
		}
		v.Redacted[i] = text
		if d.Action == policy.ActionRedact {
			v.Redacted[i] = d.Redacted
		}
		if rank[d.Action] > rank[policy.Action(v.Action)] {
			v.Action = string(d.Action)
		}
		if d.BlockedBy != nil && v.Policy == "" {
			v.Policy = d.BlockedBy.PolicyName
		}
		v.Score = min(v.Score, d.Score)
		for _, x := range d.Violations {
			v.Violations = appendNew(v.Violations, x.PolicyName+": "+x.Type)
		}
		for _, t := range d.RedactedTypes {
			v.RedactedTypes = appendNew(v.RedactedTypes, t)
		}
		for _, f := range d.Frameworks {
			v.Frameworks = appendNew(v.Frameworks, f)
		}
	}
	switch v.Action {
	case string(policy.ActionBlock), string(policy.ActionRedact):
		v.Classification = "restricted"
	case string(policy.ActionFlag):
		v.Classification = "confidential"
	}
	e.applications.Add(1)
	e.violations.Add(int64(len(v.Violations)))
	return v, nil
}

func appendNew(xs []string, x string) []string {
	if slices.Contains(xs, x) {
		return xs
	}
	return append(xs, x)
}

// policies are p's active policies in preset order (nil: no preset), or
// the compliance family its key names.
func (e *enforcer) policies(ctx context.Context, p *identity.Principal) (resolved, error) {
	var key callerKey
	if p != nil {
		key = callerKey{p.Kind, p.ID}
	}
	now := time.Now()
	e.mu.Lock()
	r, ok := e.cache[key]
	e.mu.Unlock()
	if ok && now.Sub(r.at) < presetTTL {
		return r, nil
	}
	r, err := e.resolve(ctx, p)
	if err != nil {
		return resolved{}, err
	}
	r.at = now
	e.mu.Lock()
	if len(e.cache) > 100_000 {
		clear(e.cache)
	}
	e.cache[key] = r
	e.mu.Unlock()
	return r, nil
}

func (e *enforcer) resolve(ctx context.Context, p *identity.Principal) (resolved, error) {
	var keyID, teamID string
	if p != nil {
		teamID = p.TeamID
		own, err := e.ownSet(ctx, p)
		if err != nil {
			return resolved{}, err
		}
		if own != "" {
			return e.preset(ctx, own)
		}
		if p.Kind == identity.VirtualKey {
			keyID = p.ID
		}
	}
	pr, pols, err := e.store.Resolve(ctx, keyID, teamID, assignees(p), e.def)
	if err != nil || pr == nil {
		return resolved{}, err
	}
	return resolved{policies: nonNil(pols)}, nil
}

// assignees are the role names a preset assignment of kind role may name
// for p: a signed-in user's roles (admin, user), then their groups.
func assignees(p *identity.Principal) []string {
	if p == nil || p.Kind != identity.User {
		return nil
	}
	return append(slices.Clone(p.Roles), p.Groups...)
}

// ownSet is the policy set a caller's own record names: its key's, or a
// signed-in user's team's ("" when none).
func (e *enforcer) ownSet(ctx context.Context, p *identity.Principal) (string, error) {
	switch {
	case p.Kind == identity.VirtualKey:
		vk, err := e.keys.Record(ctx, p.ID)
		if err != nil {
			return "", err
		}
		return vk.PolicySet, nil
	case p.Kind == identity.User && e.teams != nil:
		t, err := e.teams.Of(p)
		if err != nil || t == nil {
			return "", err
		}
		return t.PolicySet, nil
	}
	return "", nil
}

// preset resolves a policy set named by a record: a preset (id or name)
// first; a name no preset has may be a built-in compliance family.
func (e *enforcer) preset(ctx context.Context, name string) (resolved, error) {
	_, pols, err := e.store.Resolve(ctx, "", "", nil, name)
	if errors.Is(err, policy.ErrUnknownPreset) {
		if fam, ok := compliance.Policies[strings.ToLower(name)]; ok {
			return resolved{family: fam}, nil
		}
	}
	if err != nil {
		return resolved{}, err
	}
	return resolved{policies: nonNil(pols)}, nil
}

// family applies a built-in compliance family (enterprise_standard,
// hipaa, pci_dss, gdpr, strict) to the texts: its Block blocks, its Flag
// flags; it never redacts.
func (e *enforcer) family(c proxy.EnforceCall, fam *compliance.Policy) proxy.Verdict {
	v := proxy.Verdict{Applied: true, Score: 1, Classification: "internal", Frameworks: fam.Frameworks}
	worst := compliance.Allow
	for _, text := range c.Texts {
		res := e.eng.Scan(text, fam)
		v.Score = min(v.Score, res.ComplianceScore)
		worst = max(worst, res.Action)
		for _, x := range res.Violations {
			v.Violations = appendNew(v.Violations, fam.Name+": "+strings.ToUpper(x.Type))
		}
	}
	switch worst {
	case compliance.Block:
		v.Action, v.Policy, v.Classification = string(policy.ActionBlock), fam.Name, "restricted"
	case compliance.Flag:
		v.Action, v.Classification = string(policy.ActionFlag), "confidential"
	}
	e.applications.Add(1)
	e.violations.Add(int64(len(v.Violations)))
	return v
}

// nonNil keeps "a preset with no active policy" apart from "no preset".
func nonNil(p []policy.Policy) []policy.Policy {
	if p == nil {
		return []policy.Policy{}
	}
	return p
}

// flushStats adds the applications and violations counted since the last
// flush to the library's statistics, every second.
func (e *enforcer) flushStats(ctx context.Context) error {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			e.flush(context.Background())
			return nil
		case <-t.C:
			e.flush(ctx)
		}
	}
}

func (e *enforcer) flush(ctx context.Context) {
	a, v := e.applications.Swap(0), e.violations.Swap(0)
	if a == 0 && v == 0 {
		return
	}
	if err := e.store.AddStats(ctx, a, v); err != nil {
		e.applications.Add(a)
		e.violations.Add(v)
	}
}
