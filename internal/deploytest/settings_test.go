package deploytest

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/wire"
)

// repoRoot is the repository root, from this package's directory.
const repoRoot = "../.."

// loadSettings loads env as svc's settings, the way svc reads an SVC_CONFIG
// file (a name svc does not know is refused), and returns the problems
// config reports (none: nil).
func loadSettings(t *testing.T, env map[string]string) []string {
	t.Helper()
	_, problems := load(t, env)
	return problems
}

// loadConfig is the Config svc makes of env; a problem fails the test.
func loadConfig(t *testing.T, env map[string]string) *config.Config {
	t.Helper()
	c, problems := load(t, env)
	if len(problems) > 0 {
		t.Fatalf("settings do not load: %q", problems)
	}
	return c
}

// load is loadSettings with the Config (nil on a problem).
func load(t *testing.T, env map[string]string) (*config.Config, []string) {
	t.Helper()
	b, err := yaml.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	f := filepath.Join(t.TempDir(), "settings.yaml")
	if err := os.WriteFile(f, b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SVC_CONFIG", f)
	c, err := config.Load(wire.Components())
	var ce *config.Error
	switch {
	case err == nil:
		return c, nil
	case errors.As(err, &ce):
		return nil, ce.Problems
	}
	t.Fatalf("settings do not load: %v", err)
	return nil, nil
}

// unknownNames are the problems of loadSettings that name a setting svc
// does not know.
func unknownNames(problems []string) []string {
	var out []string
	for _, p := range problems {
		if strings.Contains(p, "unknown setting") {
			out = append(out, p)
		}
	}
	return out
}

// componentPort is the default port of the component SERVICE_TYPE names, and
// whether this build provides it.
func componentPort(serviceType string) (int, bool) {
	built := map[string]bool{}
	for _, b := range wire.Components() {
		built[b] = true
	}
	for _, c := range config.Components {
		if c.Name == serviceType {
			return c.DefaultPort, built[c.Name]
		}
	}
	return 0, false
}

func TestLoadSettingsRefusesUnknownNames(t *testing.T) {
	problems := loadSettings(t, map[string]string{"PROXY_PROT": "7775"})
	if got := unknownNames(problems); len(got) != 1 || !strings.Contains(got[0], "PROXY_PROT") {
		t.Errorf("a misspelt setting: got problems %q, want PROXY_PROT refused as unknown", problems)
	}
}
