package mcpgw

import (
	"context"
	"encoding/json"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/svc-gateway/svc/internal/identity"
)

// The gateway's parts, each an interface the gateway owns and the wiring
// fills. A nil Guard, Scanner, Cache or Limits is "none".

// Servers reads registrations. An unknown id is store.ErrNotFound.
type Servers interface {
	Server(ctx context.Context, id string) (*Server, error)
	Servers(ctx context.Context) ([]*Server, error)
}

// Upstream calls a registered server through an MCP client session.
type Upstream interface {
	ListTools(ctx context.Context, s *Server) ([]*mcp.Tool, error)
	CallTool(ctx context.Context, s *Server, params *mcp.CallToolParams) (*mcp.CallToolResult, error)
}

// JSONCaller is an Upstream that can also give a result's JSON: exactly
// what json.Marshal writes for the result, when it has it at hand (nil
// when not). The surfaces answer with it instead of encoding the result
// again.
type JSONCaller interface {
	CallToolJSON(ctx context.Context, s *Server, params *mcp.CallToolParams) (*mcp.CallToolResult, []byte, error)
}

// Grants says whether an approved access request gives the caller a tool.
type Grants interface {
	Granted(ctx context.Context, p *identity.Principal, serverID, tool string) (bool, error)
}

// Limits admits one tool call under the caller's limits (a call counts as a
// request; its per-call cost is reserved against the budget) and settles it.
// A refusal is an *apierr.Error (429 with Retry-After, 402 over budget).
type Limits interface {
	Admit(ctx context.Context, p *identity.Principal, costUSD float64) (Admission, error)
}

// Admission is one admitted call; Settle records what it really cost (0
// when it was not made or served from the cache).
type Admission interface {
	Settle(ctx context.Context, costUSD float64)
}

// ToolCall is the decoded tools/call the guard seam sees.
type ToolCall struct {
	Principal *identity.Principal
	ServerID  string
	Tool      string
	Arguments json.RawMessage // the canonical arguments object
}

// Guard is the seam of the destructive-operation guard: after access
// control, before the compliance scan. An error refuses the call (an
// *apierr.Error names the rule).
type Guard interface {
	CheckToolCall(ctx context.Context, c ToolCall) error
}

// Scan is one compliance check of a call's arguments or result.
type Scan struct {
	Principal *identity.Principal
	ServerID  string
	Tool      string
	Phase     string   // "arguments" or "result"
	Texts     []string // the strings of the arguments or the result's text
}

// Finding is what a scan found: the violation types (entity types and
// policy ids) and the compliance score; none means clean.
type Finding struct {
	Violations []string
	Score      float64
}

// Scanner runs the compliance engine under the caller's preset (or the
// default family). An error is the scanner's failure (COMPLIANCE_FAIL_OPEN
// decides), never the caller's.
type Scanner interface {
	ScanTool(ctx context.Context, s Scan) (Finding, error)
}

// CacheKey identifies one cacheable call: the caller's tenant, the server,
// the tool and the canonical arguments.
type CacheKey struct {
	Tenant   string
	ServerID string
	// Version is the registration's version (its UpdatedAt): a changed
	// registration (another base_url, a re-created id) starts afresh.
	Version   string
	Tool      string
	Arguments []byte
}

// Cache is the tool-call cache. Get's miss is (nil, nil).
type Cache interface {
	Get(ctx context.Context, k CacheKey) (*mcp.CallToolResult, error)
	// Put stores r; enc is r's JSON, exactly what json.Marshal writes for
	// it, when the caller holds it (the upstream gave it: JSONCaller), so
	// that it is not encoded again; nil: the cache encodes r.
	Put(ctx context.Context, k CacheKey, r *mcp.CallToolResult, enc []byte, ttl time.Duration, costUSD float64) error
	// Hit records a served hit's savings for the statistics.
	Hit(ctx context.Context, serverID string, savedUSD float64)
}

// JSONCache is a Cache that can also give a hit's JSON: exactly what
// json.Marshal writes for the result, when it has it at hand (nil when
// not). The surfaces answer with it instead of encoding the result again.
type JSONCache interface {
	GetJSON(ctx context.Context, k CacheKey) (*mcp.CallToolResult, []byte, error)
}

// Outcomes of a call, as recorded.
const (
	OutcomeOK        = "ok"         // the tool answered
	OutcomeToolError = "tool_error" // the tool answered with isError
	OutcomeCached    = "cached"     // served from the tool-call cache
	OutcomeDenied    = "denied"     // access control, unknown tool or server, network segment
	OutcomeGuard     = "guard"      // refused by the guard
	OutcomeBlocked   = "blocked"    // a compliance violation under strict
	OutcomeLimited   = "limited"    // rate limit or budget
	OutcomeError     = "error"      // upstream failure or timeout
	OutcomeInvalid   = "invalid"    // the caller's malformed call
)

// Record is one call as the audit log keeps it: never the arguments unless
// SVC_MCP_LOG_ARGUMENTS asks for them.
type Record struct {
	Time          time.Time
	Principal     *identity.Principal
	ServerID      string
	Tool          string
	ArgumentBytes int
	ArgumentsHash string          // hex SHA-256 of the canonical arguments
	Arguments     json.RawMessage // only with SVC_MCP_LOG_ARGUMENTS
	Outcome       string
	Violations    []string
	Flagged       bool // a violation under log mode
	Latency       time.Duration
	CostUSD       float64
	Error         string // the client-safe message of a refusal or failure
	Status        int    // the HTTP status the failure maps to; 200 otherwise
	Surface       string // "mcp", "aggregate" or "v1"
}

// Recorder keeps call records (the audit log). Record must not block.
type Recorder interface {
	RecordToolCall(r *Record)
}
