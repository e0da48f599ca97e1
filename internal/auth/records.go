package auth

import (
	"context"
	"time"
)

// VirtualKey is the durable record of a virtual key. The secret itself is never
// stored: only its SHA-256 hash (hex) and a masked prefix for display.
type VirtualKey struct {
	ID                string     `json:"id"`
	Hash              string     `json:"-"`
	MaskedKey         string     `json:"masked_key"`
	Alias             string     `json:"alias"`
	BudgetPeriod      string     `json:"budget_period,omitempty"`
	MaxBudgetUSD      float64    `json:"max_budget_usd,omitempty"`
	ModelRestrictions []string   `json:"model_restrictions"`
	RPMLimit          int        `json:"rpm_limit,omitempty"`
	TPMLimit          int        `json:"tpm_limit,omitempty"`
	PolicySet         string     `json:"policy_set,omitempty"`
	TeamID            string     `json:"team_id,omitempty"`
	CreatedAt         time.Time  `json:"created_at"`
	RevokedAt         *time.Time `json:"revoked_at,omitempty"`
}

// Revoked reports whether the key has been revoked.
func (k VirtualKey) Revoked() bool { return k.RevokedAt != nil }

// KeyStore is the durable store of virtual keys (SQL).
type KeyStore interface {
	// CreateVirtualKey inserts k; store.ErrConflict if the ID or hash exists.
	CreateVirtualKey(ctx context.Context, k VirtualKey) error
	// VirtualKeyByHash returns the key whose secret hashes to hash (revoked ones
	// included), or store.ErrNotFound.
	VirtualKeyByHash(ctx context.Context, hash string) (VirtualKey, error)
	// VirtualKeyByID returns the key with id, or store.ErrNotFound.
	VirtualKeyByID(ctx context.Context, id string) (VirtualKey, error)
	// ListVirtualKeys returns every key, newest first.
	ListVirtualKeys(ctx context.Context) ([]VirtualKey, error)
	// UpdateVirtualKey stores k's alias, budget, limits, model list,
	// policy set and team over the key with k.ID (its hash, secret and
	// dates stay); store.ErrNotFound if there is no such key.
	UpdateVirtualKey(ctx context.Context, k VirtualKey) error
	// RevokeVirtualKey marks the key revoked at at; store.ErrNotFound if no
	// such key. Revoking a revoked key keeps the first revocation time.
	RevokeVirtualKey(ctx context.Context, id string, at time.Time) error
}
