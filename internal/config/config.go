// Package config owns svc's typed settings: defaults, an optional YAML file
// (SVC_CONFIG), environment variables (which win), and Validate, which reports
// every bad setting in one error. Setting names are the spec's (PROXY_PORT,
// DATABASE_URL, <PROVIDER>_API_KEY, …); the YAML file is a flat map of the same
// names, e.g. `PROXY_PORT: 7775`.
//
// Only cmd/ and wire import config; other packages receive the values they need.
package config

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/svc-gateway/svc/internal/alerts"
)

// Component names accepted by SERVICE_TYPE, as the spec names them.
const (
	Proxy      = "proxy"
	Management = "api-server"
	Compliance = "compliance"
	Policy     = "policy-perfect"
	Bridge     = "bridge"
	Frontend   = "frontend"
)

// ComponentSpec is one of the spec's components: its SERVICE_TYPE name, the
// other words accepted for it, and its port setting.
type ComponentSpec struct {
	Name        string
	Aliases     []string
	PortSetting string
	DefaultPort int
}

// Components are the spec's components in start order. Which of them this
// build provides is the caller's to say (wire's component map): FromSource
// refuses the others as not available.
var Components = []ComponentSpec{
	{Name: Proxy, PortSetting: "PROXY_PORT", DefaultPort: 7775},
	{Name: Management, Aliases: []string{"api_server", "management"}, PortSetting: "MANAGEMENT_PORT", DefaultPort: 7778},
	{Name: Compliance, PortSetting: "COMPLIANCE_PORT", DefaultPort: 7777},
	{Name: Policy, Aliases: []string{"policy", "policy_perfect"}, PortSetting: "POLICY_PORT", DefaultPort: 7782},
	{Name: Bridge, PortSetting: "BRIDGE_PORT", DefaultPort: 3500},
	{Name: Frontend, PortSetting: "FRONTEND_PORT", DefaultPort: 3600},
}

// Config is the validated configuration of one svc process.
type Config struct {
	// Components to run (SERVICE_TYPE), in start order. "all" expands to
	// Built.
	Components []string
	// Built are the components this build provides (from the caller).
	Built []string
	// Host is the listen address for every component (SVC_HOST; "" = all interfaces).
	Host string
	// Ports are the components' ports by name (PROXY_PORT, MANAGEMENT_PORT, …).
	Ports map[string]int

	DataDir     string // SVC_DATA_DIR
	AdminAPIKey string // ADMIN_API_KEY; generated into DataDir when empty
	MasterKey   string // SVC_MASTER_KEY; generated into DataDir when empty
	// AuditChainKey (SVC_AUDIT_CHAIN_KEY) keys the audit chain's hashes
	// (HMAC-SHA256 under its bytes); empty: plain SHA-256.
	AuditChainKey string

	DatabaseURL string // DATABASE_URL; empty = SQLite in DataDir
	RedisURL    string // KEYSTORE_REDIS_URL or REDIS_URL; empty = in-process KV
	RedisPrefix string // SVC_REDIS_PREFIX: put before every Redis key and channel
	// DatabaseMaxConns (SVC_DATABASE_MAX_CONNS) bounds this process's
	// PostgreSQL connections; 0 = sqlstore.DefaultMaxConns (10).
	DatabaseMaxConns int

	LogHotTTL          time.Duration // SVC_LOG_HOT_TTL: written entries the hot tier keeps
	LogHotMaxEntries   int           // SVC_LOG_HOT_MAX_ENTRIES: cap of the hot tier's written entries
	AuditFlushInterval time.Duration // SVC_AUDIT_FLUSH_INTERVAL: spool → shared hot tier
	AuditEnabled       bool          // SVC_AUDIT_ENABLED: false keeps no VAS entries (benchmarks)
	LogRetention       time.Duration // SVC_LOG_RETENTION_DAYS: long-term log (0 = forever)
	LogSpillMaxBytes   int64         // SVC_LOG_SPILL_MAX_BYTES: bound of the local spool
	// The bridge (SVC_BRIDGE_*): batch size, its consumer name, how long an
	// entry another bridge took may stay unwritten before this one takes
	// it, and the backlog that raises an alert.
	BridgeBatch        int
	BridgeConsumer     string
	BridgeClaimIdle    time.Duration
	BridgeBacklogAlert int
	MaxBodyBytes       int64         // SVC_MAX_BODY_BYTES
	UpstreamTimeout    time.Duration // SVC_UPSTREAM_TIMEOUT: until the provider's response headers
	UpstreamTransport  string        // SVC_UPSTREAM_TRANSPORT: "std" (net/http) or "fasthttp"
	ShutdownTimeout    time.Duration // SVC_SHUTDOWN_TIMEOUT: drain limit for in-flight requests
	BodyReadTimeout    time.Duration // SVC_BODY_READ_TIMEOUT: how long a request body may take to arrive
	DefaultProvider    string        // SVC_DEFAULT_PROVIDER
	PricesFile         string        // SVC_PRICES_FILE: JSON price overrides
	LogLevel           string        // SVC_LOG_LEVEL: debug, info, warn, error
	KeyCacheTTL        time.Duration // SVC_KEY_CACHE_TTL: virtual-key lookup cache
	PprofAddr          string        // SVC_PPROF_ADDR: opt-in net/http/pprof listener (loopback only)
	HourlyRequests     int           // RATE_LIMIT_REQUESTS_PER_HOUR: per-key hourly cap, 0 = off
	// ResponsesRetention (SVC_RESPONSES_RETENTION) is how long svc keeps
	// the Responses API records that previous_response_id continues.
	ResponsesRetention time.Duration
	// ComplianceScanRetention (SVC_COMPLIANCE_SCAN_RETENTION) is how long
	// the compliance component keeps a scan's record (its features, never
	// its text) for feedback; baselines' hourly counts are kept at least
	// 35 days.
	ComplianceScanRetention time.Duration
	// DefaultPreset (SVC_DEFAULT_PRESET) is the policy preset (id or name)
	// for callers whose key, team or role has none; "" means no scan.
	DefaultPreset string
	// ComplianceTimeout (COMPLIANCE_TIMEOUT_SECS, 1–120, default 8) bounds
	// one policy check on the request path; ComplianceFailOpen
	// (COMPLIANCE_FAIL_OPEN) and PolicyFailOpen (POLICY_FAIL_OPEN) let a
	// request through when the check, or reading the caller's policies,
	// fails (the spec's rule 7; both off: 503).
	ComplianceTimeout                  time.Duration
	ComplianceFailOpen, PolicyFailOpen bool
	// PolicyGeneration (POLICY_GENERATION_MODEL, _KEY, _URL) refines the
	// policies drafted from documents with a model called through svc's
	// own proxy with a virtual key of its own; no model: rule-based drafts.
	PolicyGeneration PolicyGeneration
	// PolicyJobRetention (SVC_POLICY_JOB_RETENTION, at least 1h) is how
	// long an ended document job and its suggestions are kept.
	PolicyJobRetention time.Duration
	// TraceContent (SVC_TRACE_CONTENT) adds the prompt and completion text,
	// bounded, to the request spans exported when an OTLP endpoint
	// (OTEL_EXPORTER_OTLP_ENDPOINT, read by the exporter) turns tracing on.
	TraceContent bool
	// HeartbeatInterval (SVC_HEARTBEAT_INTERVAL, 1s–1m) is how often each
	// component publishes its heartbeat to the KV store.
	HeartbeatInterval time.Duration

	// Cache configures the semantic cache of chat completions.
	Cache CacheSettings

	// MCP configures the tool gateway.
	MCP MCPSettings
	SSO SSOSettings
	// TrustedProxies (SVC_TRUSTED_PROXIES) are the reverse proxies and load
	// balancers whose X-Forwarded-For names the client (internal/clientip).
	TrustedProxies []netip.Prefix

	// Alerts configures the outbound webhook alerts.
	Alerts AlertSettings

	// AWS holds the standard AWS credentials (AWS_ACCESS_KEY_ID,
	// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN, AWS_REGION) used to sign
	// Bedrock requests when BEDROCK_API_KEY is not set.
	AWS AWSSettings

	// Providers holds <PROVIDER>_API_KEY/_API_BASE/_API_VERSION/_ENABLED settings
	// found in the environment or file, by lowercase provider name.
	Providers map[string]ProviderSettings
}

// CacheSettings are the semantic cache's settings.
type CacheSettings struct {
	Enabled          bool          // SEMANTIC_CACHE_ENABLED (default true)
	Threshold        float64       // SEMANTIC_CACHE_THRESHOLD: minimum cosine similarity of a semantic hit (0.90)
	TTL              time.Duration // SEMANTIC_CACHE_TTL: default time-to-live of an entry (24h)
	MaxTemperature   float64       // SEMANTIC_CACHE_MAX_TEMPERATURE: above it a request is not cached (0.7)
	L1Bytes          int64         // SEMANTIC_CACHE_L1_BYTES: in-process tier bound (64 MiB; 0 disables)
	MaxEntries       int           // SEMANTIC_CACHE_MAX_ENTRIES: entries each replica's index follows (50000)
	EmbeddingModel   string        // SEMANTIC_CACHE_EMBEDDING_MODEL: provider/model for embeddings ("" = built-in)
	SharedNamespaces []string      // SEMANTIC_CACHE_SHARED_NAMESPACES: namespaces shared by every caller
	Scope            string        // SEMANTIC_CACHE_SCOPE: who shares answers, "caller" (default) or "team"
}

// AlertSettings are the webhook alerts' settings. The URLs are credentials:
// never log them.
type AlertSettings struct {
	Enabled    bool          // SVC_ALERTS_ENABLED (default true)
	SlackURL   string        // SVC_SLACK_WEBHOOK_URL: Slack incoming webhook ("" = off)
	TeamsURL   string        // SVC_TEAMS_WEBHOOK_URL: Microsoft Teams incoming webhook ("" = off)
	DiscordURL string        // SVC_DISCORD_WEBHOOK_URL: Discord webhook ("" = off)
	Dedup      time.Duration // SVC_ALERT_DEDUP: one alert per subject per period, fleet-wide (10m)
	ErrorRate  float64       // SVC_ALERT_ERROR_RATE: a provider's error share that alerts, 0 < x ≤ 1 (0.25)
	Window     time.Duration // SVC_ALERT_WINDOW: the window the error rate is measured over (5m)
	Slow       time.Duration // SVC_ALERT_SLOW_MS: request latency that alerts (30000 ms)
}

// AWSSettings are the standard AWS credential settings.
type AWSSettings struct {
	AccessKeyID     string
	SecretAccessKey string
	SessionToken    string
	Region          string
}

// ProviderSettings are one provider's settings.
type ProviderSettings struct {
	APIKey     string
	APIBase    string
	APIVersion string
	Region     string // <PROVIDER>_REGION (Bedrock)
	Project    string // <PROVIDER>_PROJECT (Vertex AI)
	Location   string // <PROVIDER>_LOCATION (Vertex AI)
	Enabled    *bool  // nil when not set
	// ResponsesAPI (<PROVIDER>_RESPONSES_API) says whether an
	// OpenAI-compatible provider serves /v1/responses itself; nil: the
	// catalog's default (OpenAI does).
	ResponsesAPI *bool
}

// Split reports whether the chosen components leave others to run in other
// processes, in which case the stores must be shared servers.
func (c *Config) Split() bool {
	have := map[string]bool{}
	for _, n := range c.Components {
		have[n] = true
	}
	for _, n := range c.Built {
		if !have[n] {
			return true
		}
	}
	return false
}

// Has reports whether component name is to run.
func (c *Config) Has(name string) bool {
	for _, n := range c.Components {
		if n == name {
			return true
		}
	}
	return false
}

// Source supplies raw setting values by name. Lookup returns ok=false when the
// setting is not set.
type Source interface {
	Lookup(name string) (string, bool)
	Names() []string
}

// Env is the process environment as a Source.
type Env struct{}

// Lookup implements Source.
func (Env) Lookup(name string) (string, bool) { return os.LookupEnv(name) }

// Names implements Source.
func (Env) Names() []string {
	var names []string
	for _, kv := range os.Environ() {
		if k, _, ok := strings.Cut(kv, "="); ok {
			names = append(names, k)
		}
	}
	return names
}

// Map is a Source backed by a map (tests, YAML files).
type Map map[string]string

// Lookup implements Source.
func (m Map) Lookup(name string) (string, bool) { v, ok := m[name]; return v, ok }

// Names implements Source.
func (m Map) Names() []string {
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	return names
}

// layered looks settings up in sources in order; the first that has it wins.
type layered []Source

func (l layered) Lookup(name string) (string, bool) {
	for _, s := range l {
		if v, ok := s.Lookup(name); ok {
			return v, true
		}
	}
	return "", false
}

func (l layered) Names() []string {
	seen := map[string]bool{}
	var names []string
	for _, s := range l {
		for _, n := range s.Names() {
			if !seen[n] {
				seen[n] = true
				names = append(names, n)
			}
		}
	}
	sort.Strings(names)
	return names
}

// flatten adds raw's settings to m: a nested map's keys joined with dots
// (sso: {kerberos: {enabled: true}} is sso.kerberos.enabled), a list of
// scalars as comma-separated text. Anything else is bad.
func flatten(prefix string, raw map[string]any, m Map, bad *[]string) {
	for k, v := range raw {
		name := prefix + k
		if text, ok := scalar(v); ok {
			m[name] = text
			continue
		}
		switch v := v.(type) {
		case map[string]any:
			flatten(name+".", v, m, bad)
		case []any:
			parts := make([]string, 0, len(v))
			for _, item := range v {
				text, ok := scalar(item)
				if !ok || strings.Contains(text, ",") {
					*bad = append(*bad, name)
					break
				}
				parts = append(parts, text)
			}
			m[name] = strings.Join(parts, ",")
		default:
			*bad = append(*bad, name)
		}
	}
}

func scalar(v any) (string, bool) {
	switch v := v.(type) {
	case nil:
		return "", true
	case string:
		return v, true
	case bool, int, int64, uint64, float64:
		return fmt.Sprint(v), true
	}
	return "", false
}

// LoadFile reads a YAML map of setting names to scalar values (nested maps
// and lists as flatten says).
func LoadFile(path string) (Map, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("SVC_CONFIG: %w", err)
	}
	var raw map[string]any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("SVC_CONFIG %s: not a YAML map of settings: %w", path, err)
	}
	m := Map{}
	var bad []string
	flatten("", raw, m, &bad)
	if len(bad) > 0 {
		sort.Strings(bad)
		return nil, fmt.Errorf("SVC_CONFIG %s: settings must be scalar values, lists of them or maps of those: %s", path, strings.Join(bad, ", "))
	}
	return m, nil
}

// Load builds the configuration from the environment and, when SVC_CONFIG
// names a file, that file (the environment wins). It validates the result;
// built are the components this build provides. A setting in the file that
// svc does not know is an error (a typo must not pass silently).
func Load(built []string) (*Config, error) {
	var src Source = Env{}
	var file Map
	if path, ok := os.LookupEnv("SVC_CONFIG"); ok && path != "" {
		var err error
		if file, err = LoadFile(path); err != nil {
			return nil, err
		}
		src = layered{Env{}, file}
	}
	return fromSource(src, built, file)
}

// FromSource builds and validates a configuration from src for a build
// that provides the components built.
func FromSource(src Source, built []string) (*Config, error) { return fromSource(src, built, nil) }

// fromSource is FromSource that also refuses every name of strict that no
// setting read (the SVC_CONFIG file's names). It reads the settings group by
// group, in a fixed order: providers last, since a name read before is not a
// provider's.
func fromSource(src Source, built []string, strict Map) (*Config, error) {
	p := parser{src: src, read: map[string]bool{}}
	c := &Config{Built: built, Ports: map[string]int{}}
	p.readStores(c)
	p.readLogs(c)
	p.readProxy(c)
	p.readCompliance(c)
	c.HeartbeatInterval = p.heartbeat()
	c.MCP = p.mcp()
	c.TrustedProxies = p.prefixes("SVC_TRUSTED_PROXIES")
	c.SSO = p.sso()
	c.Cache = p.cache()
	c.Alerts = p.alerts()
	p.readComponents(c)
	c.AWS = p.aws()
	// Last of the settings: a name read above is not a provider's.
	c.Providers = p.providers()
	c.validate(&p)
	p.refuseUnknown(strict)
	if err := p.err(); err != nil {
		return nil, err
	}
	return c, nil
}

// readStores reads the listen host, the data directory, the keys and the
// stores' URLs.
func (p *parser) readStores(c *Config) {
	c.Host = p.str("SVC_HOST", "")
	c.DataDir = p.str("SVC_DATA_DIR", "./data")
	c.AdminAPIKey = p.str("ADMIN_API_KEY", "")
	c.MasterKey = p.str("SVC_MASTER_KEY", "")
	c.AuditChainKey = p.str("SVC_AUDIT_CHAIN_KEY", "")
	c.DatabaseURL = p.str("DATABASE_URL", "")
	c.DatabaseMaxConns = p.intRange("SVC_DATABASE_MAX_CONNS", 0, 0, 10000)
	c.RedisURL = p.str("KEYSTORE_REDIS_URL", p.str("REDIS_URL", ""))
	c.RedisPrefix = p.str("SVC_REDIS_PREFIX", "svc:")
}

// readLogs reads the settings of the audit log's tiers and of the bridge.
func (p *parser) readLogs(c *Config) {
	c.LogHotTTL = p.duration("SVC_LOG_HOT_TTL", 2*time.Hour, time.Minute)
	c.LogHotMaxEntries = p.intRange("SVC_LOG_HOT_MAX_ENTRIES", 10000, 100, 10_000_000)
	c.AuditFlushInterval = p.duration("SVC_AUDIT_FLUSH_INTERVAL", 100*time.Millisecond, time.Millisecond)
	c.AuditEnabled = p.boolean("SVC_AUDIT_ENABLED", true)
	c.LogRetention = time.Duration(p.intRange("SVC_LOG_RETENTION_DAYS", 400, 0, 36500)) * 24 * time.Hour
	c.LogSpillMaxBytes = int64(p.intRange("SVC_LOG_SPILL_MAX_BYTES", 512<<20, 1<<20, 1<<40))
	c.BridgeBatch = p.intRange("SVC_BRIDGE_BATCH", 512, 1, 5000)
	c.BridgeConsumer = p.str("SVC_BRIDGE_CONSUMER", "")
	c.BridgeClaimIdle = p.duration("SVC_BRIDGE_CLAIM_IDLE", 30*time.Second, 100*time.Millisecond)
	c.BridgeBacklogAlert = p.intRange("SVC_BRIDGE_BACKLOG_ALERT", 10000, 1, 1<<30)
}

// readProxy reads the settings of the request path: bodies, the upstream,
// shutdown, the default provider, prices, logging, key cache, pprof, the
// hourly limit, Responses API records and trace content.
func (p *parser) readProxy(c *Config) {
	c.MaxBodyBytes = int64(p.intRange("SVC_MAX_BODY_BYTES", 50<<20, 1024, 1<<32))
	c.UpstreamTimeout = p.duration("SVC_UPSTREAM_TIMEOUT", 300*time.Second, time.Millisecond)
	c.UpstreamTransport = p.oneOf("SVC_UPSTREAM_TRANSPORT", "std", "std", "fasthttp")
	c.ShutdownTimeout = p.duration("SVC_SHUTDOWN_TIMEOUT", 30*time.Second, 0)
	c.BodyReadTimeout = p.duration("SVC_BODY_READ_TIMEOUT", 60*time.Second, time.Second)
	c.DefaultProvider = strings.ToLower(p.str("SVC_DEFAULT_PROVIDER", "openai"))
	c.PricesFile = p.str("SVC_PRICES_FILE", "")
	c.LogLevel = p.oneOf("SVC_LOG_LEVEL", "info", "debug", "info", "warn", "error")
	c.KeyCacheTTL = p.duration("SVC_KEY_CACHE_TTL", 30*time.Second, 0)
	c.PprofAddr = p.str("SVC_PPROF_ADDR", "")
	c.HourlyRequests = p.intRange("RATE_LIMIT_REQUESTS_PER_HOUR", 0, 0, 1<<30)
	c.ResponsesRetention = p.duration("SVC_RESPONSES_RETENTION", 30*24*time.Hour, time.Minute)
	c.TraceContent = p.boolean("SVC_TRACE_CONTENT", false)
}

// readCompliance reads the compliance and policy settings; a policy
// generation model needs its key.
func (p *parser) readCompliance(c *Config) {
	c.ComplianceScanRetention = p.duration("SVC_COMPLIANCE_SCAN_RETENTION", 30*24*time.Hour, time.Hour)
	c.DefaultPreset = p.str("SVC_DEFAULT_PRESET", "")
	c.ComplianceTimeout = time.Duration(p.intRange("COMPLIANCE_TIMEOUT_SECS", 8, 1, 120)) * time.Second
	c.ComplianceFailOpen = p.boolean("COMPLIANCE_FAIL_OPEN", false)
	c.PolicyFailOpen = p.boolean("POLICY_FAIL_OPEN", false)
	c.PolicyGeneration = PolicyGeneration{Model: p.str("POLICY_GENERATION_MODEL", ""), Key: p.str("POLICY_GENERATION_KEY", ""),
		URL: p.str("POLICY_GENERATION_URL", "")}
	if c.PolicyGeneration.Model != "" && c.PolicyGeneration.Key == "" {
		p.bad("POLICY_GENERATION_KEY", "is required with POLICY_GENERATION_MODEL: a virtual key of the proxy, so the refinement is budgeted and audited")
	}
	c.PolicyJobRetention = p.duration("SVC_POLICY_JOB_RETENTION", 30*24*time.Hour, time.Hour)
}

// heartbeat reads SVC_HEARTBEAT_INTERVAL (1s–1m).
func (p *parser) heartbeat() time.Duration {
	d := p.duration("SVC_HEARTBEAT_INTERVAL", 5*time.Second, time.Second)
	if d > time.Minute {
		p.bad("SVC_HEARTBEAT_INTERVAL", fmt.Sprintf("must be at most 1m, got %s", d))
	}
	return d
}

// cache reads the semantic cache's settings.
func (p *parser) cache() CacheSettings {
	cs := CacheSettings{
		Enabled:          p.boolean("SEMANTIC_CACHE_ENABLED", true),
		Threshold:        p.floatRange("SEMANTIC_CACHE_THRESHOLD", 0.90, 0.5, 1),
		TTL:              p.duration("SEMANTIC_CACHE_TTL", 24*time.Hour, time.Second),
		MaxTemperature:   p.floatRange("SEMANTIC_CACHE_MAX_TEMPERATURE", 0.7, 0, 2),
		L1Bytes:          int64(p.intRange("SEMANTIC_CACHE_L1_BYTES", 64<<20, 0, 1<<40)),
		MaxEntries:       p.intRange("SEMANTIC_CACHE_MAX_ENTRIES", 50_000, 100, 10_000_000),
		EmbeddingModel:   p.str("SEMANTIC_CACHE_EMBEDDING_MODEL", ""),
		SharedNamespaces: p.list("SEMANTIC_CACHE_SHARED_NAMESPACES"),
		Scope:            p.oneOf("SEMANTIC_CACHE_SCOPE", "caller", "caller", "team"),
	}
	if cs.TTL > 7*24*time.Hour {
		p.bad("SEMANTIC_CACHE_TTL", "must be at most 168h (the longest an entry is followed)")
	}
	if m := cs.EmbeddingModel; m != "" && !strings.Contains(m, "/") {
		p.bad("SEMANTIC_CACHE_EMBEDDING_MODEL", fmt.Sprintf("must name a provider and a model, such as openai/text-embedding-3-small, got %q", m))
	}
	return cs
}

// readComponents reads every component's port and SERVICE_TYPE.
func (p *parser) readComponents(c *Config) {
	for _, spec := range Components {
		c.Ports[spec.Name] = p.port(spec.PortSetting, spec.DefaultPort)
	}
	c.Components = p.components("SERVICE_TYPE", c.Built)
}

// aws reads the standard AWS credential settings.
func (p *parser) aws() AWSSettings {
	return AWSSettings{
		AccessKeyID:     p.str("AWS_ACCESS_KEY_ID", ""),
		SecretAccessKey: p.str("AWS_SECRET_ACCESS_KEY", ""),
		SessionToken:    p.str("AWS_SESSION_TOKEN", ""),
		Region:          p.str("AWS_REGION", p.str("AWS_DEFAULT_REGION", "")),
	}
}

// validate checks the settings read that depend on each other or on the
// components chosen: the AWS key pair, the data directory, the stores'
// URLs, ports, key lengths, shared stores for a split, pprof's address,
// and the keys processes sharing PostgreSQL must agree on.
func (c *Config) validate(p *parser) {
	if (c.AWS.AccessKeyID == "") != (c.AWS.SecretAccessKey == "") {
		p.bad("AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY go together")
	}
	if c.DataDir == "" {
		p.bad("SVC_DATA_DIR", "must not be empty")
	}
	if c.DatabaseURL != "" && !strings.HasPrefix(c.DatabaseURL, "postgres://") && !strings.HasPrefix(c.DatabaseURL, "postgresql://") && !strings.HasPrefix(c.DatabaseURL, "sqlite:") {
		p.bad("DATABASE_URL", "must be a postgres:// URL or a sqlite: path")
	}
	if c.RedisURL != "" && !strings.HasPrefix(c.RedisURL, "redis://") && !strings.HasPrefix(c.RedisURL, "rediss://") && !strings.HasPrefix(c.RedisURL, "unix://") {
		p.bad("KEYSTORE_REDIS_URL", "must be a redis://, rediss:// or unix:// URL")
	}
	c.checkPorts(p)
	if c.AdminAPIKey != "" && len(c.AdminAPIKey) < 16 {
		p.bad("ADMIN_API_KEY", "must be at least 16 characters")
	}
	if c.AuditChainKey != "" && len(c.AuditChainKey) < 32 {
		p.bad("SVC_AUDIT_CHAIN_KEY", "must be at least 32 characters")
	}
	if len(c.Components) > 0 && c.Split() {
		c.checkSplit(p)
	}
	if c.PprofAddr != "" {
		host, _, err := net.SplitHostPort(c.PprofAddr)
		if ip := net.ParseIP(host); err != nil || (host != "localhost" && (ip == nil || !ip.IsLoopback())) {
			p.bad("SVC_PPROF_ADDR", "must be a loopback host:port such as 127.0.0.1:6060 (profiles reveal internals)")
		}
	}
	if strings.HasPrefix(c.DatabaseURL, "postgres") {
		c.checkSharedKeys(p)
	}
}

// checkSplit reports stores that components in separate processes cannot
// share.
func (c *Config) checkSplit(p *parser) {
	if c.RedisURL == "" {
		p.bad("KEYSTORE_REDIS_URL", fmt.Sprintf("is required when SERVICE_TYPE runs only %s: components in separate processes cannot share the in-process store", strings.Join(c.Components, ",")))
	}
	if !strings.HasPrefix(c.DatabaseURL, "postgres") {
		p.bad("DATABASE_URL", fmt.Sprintf("must be a postgres:// URL when SERVICE_TYPE runs only %s: components in separate processes cannot share an embedded SQLite file", strings.Join(c.Components, ",")))
	}
}

// checkSharedKeys reports keys missing with a PostgreSQL database: several
// processes share the records, so each must seal and open provider keys,
// and accept admin calls, with the same keys.
func (c *Config) checkSharedKeys(p *parser) {
	if c.MasterKey == "" {
		p.bad("SVC_MASTER_KEY", "is required with a PostgreSQL DATABASE_URL: every process sharing the database must use the same master key (a generated one lives in one data dir only)")
	}
	if c.AdminAPIKey == "" && c.Has(Management) {
		p.bad("ADMIN_API_KEY", "is required with a PostgreSQL DATABASE_URL: every management process must accept the same admin key")
	}
}

// refuseUnknown reports every name of strict that no setting read and
// that is no provider's setting.
func (p *parser) refuseUnknown(strict Map) {
	for _, name := range strict.Names() {
		if !p.read[name] && !isProviderSetting(name) {
			p.bad(name, "unknown setting in SVC_CONFIG"+p.suggest(name))
		}
	}
}

// checkPorts reports two components of this process on one port.
func (c *Config) checkPorts(p *parser) {
	seen := map[int]string{}
	for _, spec := range Components {
		port := c.Ports[spec.Name]
		if !c.Has(spec.Name) || port == 0 {
			continue
		}
		if other, ok := seen[port]; ok {
			p.bad(spec.PortSetting, fmt.Sprintf("must differ from %s (both %d)", other, port))
			continue
		}
		seen[port] = spec.PortSetting
	}
}

// Port is component name's port.
func (c *Config) Port(name string) int { return c.Ports[name] }

// SQLitePath is the database file used when DATABASE_URL is empty.
func (c *Config) SQLitePath() string { return filepath.Join(c.DataDir, "svc.db") }

// Addr is the listen address of component name.
func (c *Config) Addr(name string) string { return c.Host + ":" + strconv.Itoa(c.Port(name)) }

// alerts reads the webhook alerts' settings; each URL must pass
// alerts.CheckWebhookURL (https, or http to loopback).
func (p *parser) alerts() AlertSettings {
	a := AlertSettings{
		Enabled:    p.boolean("SVC_ALERTS_ENABLED", true),
		SlackURL:   p.str("SVC_SLACK_WEBHOOK_URL", ""),
		TeamsURL:   p.str("SVC_TEAMS_WEBHOOK_URL", ""),
		DiscordURL: p.str("SVC_DISCORD_WEBHOOK_URL", ""),
		Dedup:      p.duration("SVC_ALERT_DEDUP", 10*time.Minute, time.Second),
		ErrorRate:  p.floatRange("SVC_ALERT_ERROR_RATE", 0.25, 0, 1),
		Window:     p.duration("SVC_ALERT_WINDOW", 5*time.Minute, 10*time.Second),
		Slow:       time.Duration(p.intRange("SVC_ALERT_SLOW_MS", 30_000, 1, 3_600_000)) * time.Millisecond,
	}
	for _, u := range []struct{ name, url string }{
		{"SVC_SLACK_WEBHOOK_URL", a.SlackURL}, {"SVC_TEAMS_WEBHOOK_URL", a.TeamsURL}, {"SVC_DISCORD_WEBHOOK_URL", a.DiscordURL},
	} {
		if err := alerts.CheckWebhookURL(u.name, u.url); err != nil {
			p.problems = append(p.problems, err.Error()) // names the setting, never the URL
		}
	}
	if a.ErrorRate == 0 {
		p.bad("SVC_ALERT_ERROR_RATE", "must be greater than 0 (and at most 1)")
		a.ErrorRate = 0.25
	}
	if a.Dedup > 24*time.Hour {
		p.bad("SVC_ALERT_DEDUP", "must be at most 24h")
	}
	if a.Window > 24*time.Hour {
		p.bad("SVC_ALERT_WINDOW", "must be at most 24h")
	}
	return a
}

// PolicyGeneration is the model that refines drafted policies.
type PolicyGeneration struct {
	Model string // e.g. openai/gpt-4o-mini
	Key   string // a virtual key of svc's proxy
	// URL is the proxy's /v1 ("": this process's proxy address).
	URL string
}
