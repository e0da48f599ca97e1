package keyvault

import (
	"context"
	"time"

	"github.com/svc-gateway/svc/internal/store"
)

// Record is the durable form of a provider API key: the secret sealed under the
// master key (see Sealer) and a masked prefix for display. The clear key is
// never stored.
type Record struct {
	Provider  string    `json:"provider"`
	Sealed    []byte    `json:"-"`
	Masked    string    `json:"masked_key"`
	UpdatedAt time.Time `json:"updated_at"`
}

// Bus carries the changes of provider keys between processes: the Bus block
// of the hot-state store (memkv in one process, rediskv across processes).
type Bus interface {
	store.Bus
}

// Store is the durable store of provider key records (SQL: SQLStore).
type Store interface {
	// PutProviderKey inserts or replaces the record for r.Provider.
	PutProviderKey(ctx context.Context, r Record) error
	// ProviderKey returns the record for provider, or store.ErrNotFound.
	ProviderKey(ctx context.Context, provider string) (Record, error)
	// ListProviderKeys returns all records ordered by provider.
	ListProviderKeys(ctx context.Context) ([]Record, error)
	// DeleteProviderKey removes the record; store.ErrNotFound if absent.
	DeleteProviderKey(ctx context.Context, provider string) error
}
