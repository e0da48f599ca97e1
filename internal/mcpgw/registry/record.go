package registry

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/svc-gateway/svc/internal/mcpgw"
	"github.com/svc-gateway/svc/internal/secret"
	"github.com/svc-gateway/svc/internal/store"
)

// Channel is the KV channel on which every change of a registration is
// announced; the message is the server's id (empty: reload everything).
const Channel = "mcp:servers:changed"

// Record is the durable form of a registration: Config is the server as
// JSON without its credential (no auth_token; env names only), Sealed its
// credential sealed under the master key (empty: none).
type Record struct {
	ID        string
	Config    []byte
	Sealed    []byte
	Version   int64 // 1 when created, +1 by every update
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Store is the durable store of registrations (SQL: SQLStore).
type Store interface {
	// Put writes r. Version 1 creates the row: store.ErrConflict if the id
	// exists. Version n > 1 replaces the row created at r.CreatedAt when it
	// is at version n-1: store.ErrNotFound if there is no row,
	// store.ErrConflict if it moved (another update, or deleted and created
	// again).
	Put(ctx context.Context, r Record) error
	// Get returns the record of id, or store.ErrNotFound.
	Get(ctx context.Context, id string) (Record, error)
	// List returns every record ordered by id (byte order).
	List(ctx context.Context) ([]Record, error)
	// Delete removes the record of id; store.ErrNotFound if absent.
	Delete(ctx context.Context, id string) error
}

// Bus carries the changes of registrations between processes: the Bus
// block of the hot-state store (memkv in one process, rediskv across
// processes).
type Bus interface {
	store.Bus
}

// EnvMask is the value Redacted (and so every answer) shows for a stdio
// server's env entry. Sent back in an update, like "", it keeps the stored
// value.
const EnvMask = "********"

// credential is what Sealed holds, as JSON.
type credential struct {
	AuthToken string            `json:"auth_token,omitempty"`
	Env       map[string]string `json:"env,omitempty"`
}

func (c *credential) empty() bool { return c.AuthToken == "" && len(c.Env) == 0 }

// plain has Server's fields without its MarshalJSON, which redacts.
type plain mcpgw.Server

// stored is the JSON of the config column: plain with auth_token and the
// times shadowed (the shallower field wins in encoding/json), so neither
// is ever written, whatever plain holds.
type stored struct {
	plain
	AuthToken *struct{} `json:"auth_token,omitempty"`
	CreatedAt *struct{} `json:"created_at,omitempty"` // a column
	UpdatedAt *struct{} `json:"updated_at,omitempty"` // a column
}

// config is the JSON of s as stored: no credential, env names only, no
// times.
func config(s *mcpgw.Server) ([]byte, error) {
	c := stored{plain: plain(*s)}
	c.HasAuthToken = s.AuthToken != ""
	c.plain.AuthToken = ""
	if len(s.Env) > 0 {
		c.Env = make(map[string]string, len(s.Env))
		for k := range s.Env {
			c.Env[k] = ""
		}
	}
	return json.Marshal(c)
}

// decode returns the registration of r, redacted: no credential, env values
// masked (EnvMask), HasAuthToken from the stored config.
func decode(r *Record) (*mcpgw.Server, error) {
	var c plain
	if err := json.Unmarshal(r.Config, &c); err != nil {
		return nil, fmt.Errorf("registry: server %q: stored config: %w", r.ID, err)
	}
	s := mcpgw.Server(c)
	s.ID = r.ID
	s.AuthToken = ""
	s.CreatedAt, s.UpdatedAt = r.CreatedAt, r.UpdatedAt
	return s.Redacted(), nil
}

// aad binds a sealed credential to its row.
func aad(id string) []byte { return []byte("mcp_servers/" + id) }

// seal returns c sealed for id; nil when c is empty.
func seal(sealer *secret.Sealer, id string, c *credential) ([]byte, error) {
	if c.empty() {
		return nil, nil
	}
	pt, err := json.Marshal(c)
	if err != nil {
		return nil, err
	}
	defer clear(pt)
	return sealer.Seal(pt, aad(id))
}

// open returns the credential sealed for id; empty when sealed is.
func open(sealer *secret.Sealer, id string, sealed []byte) (credential, error) {
	var c credential
	if len(sealed) == 0 {
		return c, nil
	}
	pt, err := sealer.Open(sealed, aad(id))
	if err != nil {
		return c, fmt.Errorf("registry: open credential of server %q (was the master key changed?): %w", id, err)
	}
	defer clear(pt)
	if err := json.Unmarshal(pt, &c); err != nil {
		return credential{}, fmt.Errorf("registry: credential of server %q: malformed", id)
	}
	return c, nil
}
