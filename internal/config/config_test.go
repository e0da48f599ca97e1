package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// built are the components of the build these tests pretend to be.
var built = []string{Proxy, Management}

func TestDefaults(t *testing.T) {
	c, err := FromSource(Map{}, built)
	if err != nil {
		t.Fatal(err)
	}
	if c.Port(Proxy) != 7775 || c.Port(Management) != 7778 || c.Port(Compliance) != 7777 || c.Port(Policy) != 7782 || c.Port(Bridge) != 3500 || c.Port(Frontend) != 3600 || c.DataDir != "./data" || c.LogHotTTL != 2*time.Hour || c.MaxBodyBytes != 50<<20 || c.UpstreamTransport != "std" {
		t.Errorf("defaults = %+v", c)
	}
	if len(c.Components) != 2 || c.Split() {
		t.Errorf("components = %v, split = %v; want all built, not split", c.Components, c.Split())
	}
}

func TestEveryBadSettingNamed(t *testing.T) {
	_, err := FromSource(Map{
		"PROXY_PORT":      "abc",
		"MANAGEMENT_PORT": "70000",
		"SVC_LOG_HOT_TTL": "soon",
		"SERVICE_TYPE":    "proxy,teleporter",
		"OPENAI_API_BASE": "ftp://x",
		"GROQ_ENABLED":    "maybe",
		"DATABASE_URL":    "mysql://x",
		"SVC_LOG_LEVEL":   "loud",
		"ADMIN_API_KEY":   "short",

		"SVC_AUDIT_CHAIN_KEY":    "short-chain-key",
		"SVC_UPSTREAM_TRANSPORT": "carrier-pigeon",
		"SVC_DATABASE_MAX_CONNS": "-1",
	}, built)
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want *config.Error", err)
	}
	msg := err.Error()
	for _, name := range []string{"PROXY_PORT", "MANAGEMENT_PORT", "SVC_LOG_HOT_TTL", "SERVICE_TYPE", "OPENAI_API_BASE", "GROQ_ENABLED", "DATABASE_URL", "SVC_LOG_LEVEL", "ADMIN_API_KEY", "KEYSTORE_REDIS_URL", "SVC_UPSTREAM_TRANSPORT", "SVC_AUDIT_CHAIN_KEY", "SVC_DATABASE_MAX_CONNS"} {
		if !strings.Contains(msg, name+":") {
			t.Errorf("error does not name %s:\n%s", name, msg)
		}
	}
}

func TestAuditChainKey(t *testing.T) {
	key := "0123456789abcdef0123456789abcdef"
	c, err := FromSource(Map{"SVC_AUDIT_CHAIN_KEY": key}, built)
	if err != nil {
		t.Fatal(err)
	}
	if c.AuditChainKey != key {
		t.Errorf("AuditChainKey = %q, want the setting", c.AuditChainKey)
	}
	if _, ok := c.Providers["svc_audit_chain"]; ok {
		t.Error("SVC_AUDIT_CHAIN_KEY taken for a provider")
	}
	_, err = FromSource(Map{"SVC_AUDIT_CHAIN_KEY": key[:31]}, built)
	if err == nil || strings.Contains(err.Error(), key[:31]) {
		t.Errorf("a 31-character key: got %v, want refused without quoting it", err)
	}
}

// TestOwnSettingsAreNoProviders: svc's own settings whose names end like a
// provider's (SEMANTIC_CACHE_ENABLED, AWS_DEFAULT_REGION) made providers
// "semantic_cache" and "aws_default".
func TestOwnSettingsAreNoProviders(t *testing.T) {
	c, err := FromSource(Map{"SEMANTIC_CACHE_ENABLED": "true", "AWS_DEFAULT_REGION": "eu-west-1", "GROQ_ENABLED": "true"}, built)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Providers) != 1 || c.Providers["groq"].Enabled == nil {
		t.Errorf("providers = %v, want groq alone", c.Providers)
	}
	if c.AWS.Region != "eu-west-1" || !c.Cache.Enabled {
		t.Errorf("AWS region %q, cache enabled %v: the settings themselves were not read", c.AWS.Region, c.Cache.Enabled)
	}
}

func TestSplitNeedsSharedStores(t *testing.T) {
	if _, err := FromSource(Map{"SERVICE_TYPE": "proxy"}, built); err == nil || !strings.Contains(err.Error(), "KEYSTORE_REDIS_URL") || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Fatalf("got %v, want refusal of in-process stores", err)
	}
	if _, err := FromSource(Map{"SERVICE_TYPE": "proxy", "REDIS_URL": "redis://127.0.0.1:6379/0", "DATABASE_URL": "postgres://u@h/db"}, built); err == nil || !strings.Contains(err.Error(), "SVC_MASTER_KEY") {
		t.Fatalf("got %v, want SVC_MASTER_KEY required with a shared database", err)
	}
	c, err := FromSource(Map{"SERVICE_TYPE": "proxy", "REDIS_URL": "redis://127.0.0.1:6379/0", "DATABASE_URL": "postgres://u@h/db", "SVC_MASTER_KEY": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"}, built)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Split() || c.RedisURL != "redis://127.0.0.1:6379/0" {
		t.Errorf("got %+v", c)
	}
	if _, err := FromSource(Map{"SERVICE_TYPE": "proxy, api-server"}, built); err != nil {
		t.Errorf("both components in one process: %v", err)
	}
}

func TestProviders(t *testing.T) {
	c, err := FromSource(Map{"OPENAI_API_KEY": "sk-1", "OPENAI_API_BASE": "http://127.0.0.1:9/v1/", "GROQ_ENABLED": "true", "ADMIN_API_KEY": "0123456789abcdef0123"}, built)
	if err != nil {
		t.Fatal(err)
	}
	o := c.Providers["openai"]
	if o.APIKey != "sk-1" || o.APIBase != "http://127.0.0.1:9/v1" {
		t.Errorf("openai = %+v", o)
	}
	if g := c.Providers["groq"]; g.Enabled == nil || !*g.Enabled {
		t.Errorf("groq = %+v", g)
	}
	if _, ok := c.Providers["admin"]; ok {
		t.Error("ADMIN_API_KEY taken for a provider")
	}
}

func TestFileAndEnvPrecedence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "svc.yaml")
	if err := os.WriteFile(path, []byte("PROXY_PORT: 9001\nMANAGEMENT_PORT: 9002\nSVC_LOG_LEVEL: debug\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	file, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	c, err := FromSource(layered{Map{"PROXY_PORT": "9100"}, file}, built)
	if err != nil {
		t.Fatal(err)
	}
	if c.Port(Proxy) != 9100 || c.Port(Management) != 9002 || c.LogLevel != "debug" {
		t.Errorf("got proxy %d mgmt %d level %s; want env 9100 to win over file, file values otherwise", c.Port(Proxy), c.Port(Management), c.LogLevel)
	}
	if err := os.WriteFile(path, []byte("PROXY_PORT: [{a: 1}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), "PROXY_PORT") {
		t.Errorf("got %v, want an error naming PROXY_PORT", err)
	}
}

// TestNestedFile: nested maps are dotted names, lists comma-separated.
func TestNestedFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "svc.yaml")
	doc := "sso:\n  kerberos:\n    enabled: true\n    admin_groups: [IT-Admins, ops]\n  trusted_proxy_cidrs:\n    - 10.0.0.0/8\n"
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	m, err := LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if m["sso.kerberos.enabled"] != "true" || m["sso.kerberos.admin_groups"] != "IT-Admins,ops" || m["sso.trusted_proxy_cidrs"] != "10.0.0.0/8" {
		t.Errorf("flattened %v", m)
	}
	if err := os.WriteFile(path, []byte("sso:\n  admin_groups: [\"a,b\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); err == nil {
		t.Error("a list item with a comma was taken (it would split)")
	}
}

func TestServiceType(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  []string
		err   string
	}{
		{"all", []string{Proxy, Management}, ""},
		{"api-server, proxy", []string{Proxy, Management}, ""},
		{"management", []string{Management}, ""},
		{"compliance", nil, `component "compliance" is not available in this build`},
		{"teleporter", nil, `unknown component "teleporter"`},
		{" , ", nil, "names no component"},
	} {
		m := Map{"SERVICE_TYPE": tc.value, "REDIS_URL": "redis://127.0.0.1:6379/0", "DATABASE_URL": "postgres://u@h/db",
			"SVC_MASTER_KEY": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", "ADMIN_API_KEY": "0123456789abcdef0123"}
		c, err := FromSource(m, built)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("SERVICE_TYPE=%q: got %v, want an error containing %q", tc.value, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("SERVICE_TYPE=%q: %v", tc.value, err)
			continue
		}
		if strings.Join(c.Components, ",") != strings.Join(tc.want, ",") {
			t.Errorf("SERVICE_TYPE=%q: got %v, want %v", tc.value, c.Components, tc.want)
		}
	}
}

func TestSamePortRefused(t *testing.T) {
	_, err := FromSource(Map{"PROXY_PORT": "9000", "MANAGEMENT_PORT": "9000"}, built)
	if err == nil || !strings.Contains(err.Error(), "MANAGEMENT_PORT: must differ from PROXY_PORT") {
		t.Fatalf("got %v, want MANAGEMENT_PORT refused", err)
	}
	// A component that does not run here may share a port number.
	if _, err := FromSource(Map{"PROXY_PORT": "9000", "COMPLIANCE_PORT": "9000"}, built); err != nil {
		t.Fatalf("got %v, want no error for a component that does not run", err)
	}
}

func TestUnknownFileSettingsRefused(t *testing.T) {
	path := filepath.Join(t.TempDir(), "svc.yaml")
	body := "PROXY_PROT: 9001\nGROQ_API_KEY: gsk-1\nSEMANTIC_CACHE_TRESHOLD: 0.8\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SVC_CONFIG", path)
	_, err := Load(built)
	if err == nil {
		t.Fatal("got no error, want the unknown settings refused")
	}
	for _, want := range []string{
		"PROXY_PROT: unknown setting in SVC_CONFIG (did you mean PROXY_PORT?)",
		"SEMANTIC_CACHE_TRESHOLD: unknown setting in SVC_CONFIG (did you mean SEMANTIC_CACHE_THRESHOLD?)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want it to say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), "GROQ_API_KEY") {
		t.Errorf("a provider setting was refused: %v", err)
	}
}

func TestCacheScope(t *testing.T) {
	for _, tt := range []struct{ value, want string }{{"", "caller"}, {"caller", "caller"}, {"Team", "team"}} {
		m := Map{}
		if tt.value != "" {
			m["SEMANTIC_CACHE_SCOPE"] = tt.value
		}
		c, err := FromSource(m, built)
		if err != nil {
			t.Fatal(err)
		}
		if c.Cache.Scope != tt.want {
			t.Errorf("SEMANTIC_CACHE_SCOPE=%q: got %q, want %q", tt.value, c.Cache.Scope, tt.want)
		}
	}
	if _, err := FromSource(Map{"SEMANTIC_CACHE_SCOPE": "everyone"}, built); err == nil || !strings.Contains(err.Error(), "SEMANTIC_CACHE_SCOPE:") {
		t.Errorf("SEMANTIC_CACHE_SCOPE=everyone: got %v, want an error naming it", err)
	}
}

// TestTraceContent: prompt and completion text stays out of spans unless
// SVC_TRACE_CONTENT says otherwise; a value that is no boolean is refused.
func TestTraceContent(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  bool
	}{{"", false}, {"true", true}, {"false", false}} {
		c, err := FromSource(Map{"SVC_TRACE_CONTENT": tc.value}, built)
		if err != nil {
			t.Fatalf("%q: %v", tc.value, err)
		}
		if c.TraceContent != tc.want {
			t.Errorf("SVC_TRACE_CONTENT=%q: got %v, want %v", tc.value, c.TraceContent, tc.want)
		}
	}
	if _, err := FromSource(Map{"SVC_TRACE_CONTENT": "sometimes"}, built); err == nil || !strings.Contains(err.Error(), "SVC_TRACE_CONTENT:") {
		t.Errorf("SVC_TRACE_CONTENT=sometimes: got %v, want a refusal naming it", err)
	}
}

func TestAlertSettings(t *testing.T) {
	c, err := FromSource(Map{}, built)
	if err != nil {
		t.Fatal(err)
	}
	want := AlertSettings{Enabled: true, Dedup: 10 * time.Minute, ErrorRate: 0.25, Window: 5 * time.Minute, Slow: 30 * time.Second}
	if c.Alerts != want {
		t.Errorf("defaults = %+v, want %+v", c.Alerts, want)
	}
	c, err = FromSource(Map{"SVC_ALERTS_ENABLED": "false", "SVC_SLACK_WEBHOOK_URL": "https://hooks.slack.com/services/T/B/X",
		"SVC_DISCORD_WEBHOOK_URL": "http://127.0.0.1:9/hook", "SVC_ALERT_DEDUP": "1h", "SVC_ALERT_ERROR_RATE": "1",
		"SVC_ALERT_WINDOW": "30s", "SVC_ALERT_SLOW_MS": "1500"}, built)
	if err != nil {
		t.Fatal(err)
	}
	want = AlertSettings{SlackURL: "https://hooks.slack.com/services/T/B/X", DiscordURL: "http://127.0.0.1:9/hook",
		Dedup: time.Hour, ErrorRate: 1, Window: 30 * time.Second, Slow: 1500 * time.Millisecond}
	if c.Alerts != want {
		t.Errorf("read %+v, want %+v", c.Alerts, want)
	}

	secret := "http://hooks.example.com/services/T/B/SECRET"
	_, err = FromSource(Map{"SVC_ALERTS_ENABLED": "sometimes", "SVC_SLACK_WEBHOOK_URL": secret,
		"SVC_TEAMS_WEBHOOK_URL": "ftp://x/y", "SVC_DISCORD_WEBHOOK_URL": "discord.com/api/webhooks/1/x",
		"SVC_ALERT_DEDUP": "48h", "SVC_ALERT_ERROR_RATE": "0", "SVC_ALERT_WINDOW": "1s", "SVC_ALERT_SLOW_MS": "0"}, built)
	if err == nil {
		t.Fatal("bad alert settings were accepted")
	}
	for _, name := range []string{"SVC_ALERTS_ENABLED", "SVC_SLACK_WEBHOOK_URL", "SVC_TEAMS_WEBHOOK_URL", "SVC_DISCORD_WEBHOOK_URL",
		"SVC_ALERT_DEDUP", "SVC_ALERT_ERROR_RATE", "SVC_ALERT_WINDOW", "SVC_ALERT_SLOW_MS"} {
		if !strings.Contains(err.Error(), name+":") {
			t.Errorf("error does not name %s:\n%v", name, err)
		}
	}
	if strings.Contains(err.Error(), "SECRET") {
		t.Errorf("the error quotes a webhook URL (a credential):\n%v", err)
	}
	for _, rate := range []string{"1.5", "-0.1", "x"} {
		if _, err := FromSource(Map{"SVC_ALERT_ERROR_RATE": rate}, built); err == nil || !strings.Contains(err.Error(), "SVC_ALERT_ERROR_RATE") {
			t.Errorf("SVC_ALERT_ERROR_RATE=%s: got %v, want an error naming it", rate, err)
		}
	}
}

func TestHeartbeatInterval(t *testing.T) {
	for _, tc := range []struct {
		value string
		want  time.Duration // 0: refused
	}{
		{"", 5 * time.Second},
		{"1s", time.Second},
		{"10", 10 * time.Second},
		{"1m", time.Minute},
		{"999ms", 0},
		{"61s", 0},
		{"often", 0},
	} {
		c, err := FromSource(Map{"SVC_HEARTBEAT_INTERVAL": tc.value}, built)
		switch {
		case tc.want == 0 && (err == nil || !strings.Contains(err.Error(), "SVC_HEARTBEAT_INTERVAL:")):
			t.Errorf("%q: got %v, want an error naming SVC_HEARTBEAT_INTERVAL", tc.value, err)
		case tc.want != 0 && err != nil:
			t.Errorf("%q: %v", tc.value, err)
		case tc.want != 0 && c.HeartbeatInterval != tc.want:
			t.Errorf("%q: interval %v, want %v", tc.value, c.HeartbeatInterval, tc.want)
		}
	}
}

// TestSSOSettings: the sso.* file settings read like every other setting
// (the parser's boolean, list and prefixes), and bad ones are named.
func TestSSOSettings(t *testing.T) {
	kt := filepath.Join(t.TempDir(), "svc.keytab")
	c, err := FromSource(Map{"sso.kerberos.enabled": "on", "sso.kerberos.service_principal": "HTTP/svc@CORP",
		"sso.kerberos.keytab_path": kt, "sso.kerberos.admin_groups": "IT-Admins, ops",
		"sso.trusted_proxy_cidrs": "10.0.0.0/8, 192.168.1.7"}, built)
	if err != nil {
		t.Fatal(err)
	}
	s := c.SSO
	if !s.KerberosEnabled || s.KerberosKeytabPath != kt || len(s.KerberosAdminGroups) != 2 || s.KerberosAdminGroups[1] != "ops" ||
		len(s.TrustedProxyCIDRs) != 2 || s.TrustedProxyCIDRs[1].Bits() != 32 {
		t.Errorf("settings %+v", s)
	}
	if c, _ := FromSource(Map{}, built); c.SSO.KerberosAdminGroups != nil || c.SSO.KerberosEnabled {
		t.Errorf("unset: %+v, want Kerberos off and no admin groups of its own", c.SSO)
	}
	_, err = FromSource(Map{"sso.kerberos.enabled": "maybe", "sso.trusted_proxy_cidrs": "10.0.0.0/33"}, built)
	if err == nil || !strings.Contains(err.Error(), "sso.kerberos.enabled") || !strings.Contains(err.Error(), "sso.trusted_proxy_cidrs") {
		t.Errorf("bad sso settings: %v, want both named", err)
	}
}
