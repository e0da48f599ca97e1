package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestDefaults(t *testing.T) {
	c, err := FromSource(Map{})
	if err != nil {
		t.Fatal(err)
	}
	if c.ProxyPort != 7775 || c.ManagementPort != 7778 || c.DataDir != "./data" || c.LogHotTTL != 2*time.Hour || c.MaxBodyBytes != 50<<20 || c.UpstreamTransport != "std" {
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

		"SVC_UPSTREAM_TRANSPORT": "carrier-pigeon",
	})
	var ce *Error
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want *config.Error", err)
	}
	msg := err.Error()
	for _, name := range []string{"PROXY_PORT", "MANAGEMENT_PORT", "SVC_LOG_HOT_TTL", "SERVICE_TYPE", "OPENAI_API_BASE", "GROQ_ENABLED", "DATABASE_URL", "SVC_LOG_LEVEL", "ADMIN_API_KEY", "KEYSTORE_REDIS_URL", "SVC_UPSTREAM_TRANSPORT"} {
		if !strings.Contains(msg, name+":") {
			t.Errorf("error does not name %s:\n%s", name, msg)
		}
	}
}

func TestSplitNeedsSharedStores(t *testing.T) {
	if _, err := FromSource(Map{"SERVICE_TYPE": "proxy"}); err == nil || !strings.Contains(err.Error(), "KEYSTORE_REDIS_URL") || !strings.Contains(err.Error(), "DATABASE_URL") {
		t.Fatalf("got %v, want refusal of in-process stores", err)
	}
	if _, err := FromSource(Map{"SERVICE_TYPE": "proxy", "REDIS_URL": "redis://127.0.0.1:6379/0", "DATABASE_URL": "postgres://u@h/db"}); err == nil || !strings.Contains(err.Error(), "SVC_MASTER_KEY") {
		t.Fatalf("got %v, want SVC_MASTER_KEY required with a shared database", err)
	}
	c, err := FromSource(Map{"SERVICE_TYPE": "proxy", "REDIS_URL": "redis://127.0.0.1:6379/0", "DATABASE_URL": "postgres://u@h/db", "SVC_MASTER_KEY": "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Split() || c.RedisURL != "redis://127.0.0.1:6379/0" {
		t.Errorf("got %+v", c)
	}
	if _, err := FromSource(Map{"SERVICE_TYPE": "proxy, api-server"}); err != nil {
		t.Errorf("both components in one process: %v", err)
	}
}

func TestProviders(t *testing.T) {
	c, err := FromSource(Map{"OPENAI_API_KEY": "sk-1", "OPENAI_API_BASE": "http://127.0.0.1:9/v1/", "GROQ_ENABLED": "true", "ADMIN_API_KEY": "0123456789abcdef0123"})
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
	c, err := FromSource(layered{Map{"PROXY_PORT": "9100"}, file})
	if err != nil {
		t.Fatal(err)
	}
	if c.ProxyPort != 9100 || c.ManagementPort != 9002 || c.LogLevel != "debug" {
		t.Errorf("got proxy %d mgmt %d level %s; want env 9100 to win over file, file values otherwise", c.ProxyPort, c.ManagementPort, c.LogLevel)
	}
	if err := os.WriteFile(path, []byte("PROXY_PORT: [1,2]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), "PROXY_PORT") {
		t.Errorf("got %v, want an error naming PROXY_PORT", err)
	}
}

func TestCacheScope(t *testing.T) {
	for _, tt := range []struct{ value, want string }{{"", "caller"}, {"caller", "caller"}, {"Team", "team"}} {
		m := Map{}
		if tt.value != "" {
			m["SEMANTIC_CACHE_SCOPE"] = tt.value
		}
		c, err := FromSource(m)
		if err != nil {
			t.Fatal(err)
		}
		if c.Cache.Scope != tt.want {
			t.Errorf("SEMANTIC_CACHE_SCOPE=%q: got %q, want %q", tt.value, c.Cache.Scope, tt.want)
		}
	}
	if _, err := FromSource(Map{"SEMANTIC_CACHE_SCOPE": "everyone"}); err == nil || !strings.Contains(err.Error(), "SEMANTIC_CACHE_SCOPE:") {
		t.Errorf("SEMANTIC_CACHE_SCOPE=everyone: got %v, want an error naming it", err)
	}
}
