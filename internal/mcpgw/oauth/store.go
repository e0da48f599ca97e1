package oauth

import (
	"context"
	"time"
)

// Record is what svc keeps of one MCP server's authorization: the
// authorization server and client it came from and the tokens, sealed.
type Record struct {
	ServerID      string
	Issuer        string // the authorization server's issuer
	TokenEndpoint string
	Resource      string // the RFC 8707 resource the tokens are for
	RedirectURI   string
	ClientID      string
	ClientSecret  []byte // sealed; empty: a public client
	ClientAuth    string // client_secret_basic, client_secret_post or none
	Registered    bool   // the client came from dynamic client registration
	AccessToken   []byte // sealed
	RefreshToken  []byte // sealed; empty: none
	TokenType     string
	Scopes        []string
	ExpiresAt     time.Time // zero: the authorization server gave no expiry
	ObtainedAt    time.Time // the authorization or the last refresh
	AuthorizedAt  time.Time
	AuthorizedBy  string
	// Version is bumped by every write; Swap compares on it.
	Version int64
}

// Store keeps the records: SQLStore on SQL. Every method returns errors
// matching store.ErrNotFound and store.ErrConflict as documented.
type Store interface {
	// Put inserts r or replaces the server's record (a new authorization),
	// whatever its version; it returns the version written.
	Put(ctx context.Context, r Record) (int64, error)
	// Record returns the server's record, or store.ErrNotFound.
	Record(ctx context.Context, serverID string) (Record, error)
	// Records returns every record, ordered by server id.
	Records(ctx context.Context) ([]Record, error)
	// Swap replaces the server's record with r only if its version is still
	// r.Version (a refresh): it returns the version written, or
	// store.ErrConflict when another write came first or the record is gone.
	Swap(ctx context.Context, r Record) (int64, error)
	// Delete removes the server's record, or returns store.ErrNotFound.
	Delete(ctx context.Context, serverID string) error
}
