package deploytest

import (
	"context"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/wire"
)

var (
	composeDir = filepath.Join(repoRoot, "deploy", "compose")
	nginxConf  = filepath.Join(repoRoot, "deploy", "nginx", "svc.conf")
)

// composeSecrets stand in for the secrets compose.scaled.yaml requires.
var composeSecrets = map[string]string{
	"ADMIN_API_KEY":     "a-real-admin-key-0123456789",
	"SVC_MASTER_KEY":    strings.Repeat("cd", 32),
	"POSTGRES_PASSWORD": "pg-secret",
}

// composeOptional stand in for the credentials compose.scaled.yaml passes
// from .env to every svc container when they are set.
var composeOptional = map[string]string{
	"SVC_SLACK_WEBHOOK_URL":   "https://hooks.slack.example/services/T0/B0/x",
	"SVC_TEAMS_WEBHOOK_URL":   "https://teams.example/webhook/x",
	"SVC_DISCORD_WEBHOOK_URL": "https://discord.example/api/webhooks/1/x",
	"SVC_AUDIT_CHAIN_KEY":     strings.Repeat("ef", 32),
}

// loadCompose loads a compose file as `docker compose config` does, through
// the Compose Specification's loader: its schema (unknown keys are errors),
// interpolation of env (only env: not the process environment, not a .env
// file), merges and relative paths resolved.
func loadCompose(t *testing.T, file string, env map[string]string) (*types.Project, error) {
	t.Helper()
	var list []string
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	opts, err := cli.NewProjectOptions([]string{filepath.Join(composeDir, file)}, cli.WithEnv(list), cli.WithResolvedPaths(true))
	if err != nil {
		t.Fatal(err)
	}
	return opts.LoadProject(context.Background())
}

// svcServices are the project's services that run svc's image.
func svcServices(p *types.Project) map[string]types.ServiceConfig {
	out := map[string]types.ServiceConfig{}
	for name, s := range p.Services {
		if s.Image == "svc:latest" {
			out[name] = s
		}
	}
	return out
}

// environment is a service's environment; a name passed through from the
// shell (no value) gets a placeholder.
func environment(s types.ServiceConfig) map[string]string {
	env := map[string]string{}
	for k, v := range s.Environment {
		env[k] = "from-the-shell"
		if v != nil {
			env[k] = *v
		}
	}
	return env
}

// checkBuild: the service builds the repository's Dockerfile.
func checkBuild(t *testing.T, name string, s types.ServiceConfig) {
	t.Helper()
	root, _ := filepath.Abs(repoRoot)
	if s.Build == nil || s.Build.Context != root {
		t.Errorf("%s builds %+v, want the repository root %s", name, s.Build, root)
	}
}

// checkLoopbackOnly: the ports of targets are published on the host's
// loopback only (spec rule 3).
func checkLoopbackOnly(t *testing.T, name string, s types.ServiceConfig, targets ...uint32) {
	t.Helper()
	for _, p := range s.Ports {
		if slices.Contains(targets, p.Target) && p.HostIP != "127.0.0.1" {
			t.Errorf("%s publishes port %d on %q, want 127.0.0.1 only: it must not be exposed publicly", name, p.Target, p.HostIP)
		}
	}
}

func TestComposeSingleContainer(t *testing.T) {
	p, err := loadCompose(t, "compose.yaml", nil)
	if err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	svcs := svcServices(p)
	s, ok := svcs["svc"]
	if len(p.Services) != 1 || !ok {
		t.Fatalf("services %v, want svc alone", slices.Sorted(maps.Keys(p.Services)))
	}
	checkBuild(t, "svc", s)
	if !slices.ContainsFunc(s.Volumes, func(v types.ServiceVolumeConfig) bool { return v.Type == "volume" && v.Target == "/data" }) {
		t.Errorf("volumes %+v, want a named volume on /data (SVC_DATA_DIR: the database and the generated keys)", s.Volumes)
	}
	published := map[uint32]bool{}
	for _, port := range s.Ports {
		published[port.Target] = true
	}
	// Every built component runs in it (SERVICE_TYPE all): each port
	// published, all but the proxy's on loopback only.
	var backend []uint32
	for _, c := range wire.Components() {
		port, _ := componentPort(c)
		if !published[uint32(port)] {
			t.Errorf("published ports %+v, want %s's %d too", s.Ports, c, port)
		}
		if c != config.Proxy {
			backend = append(backend, uint32(port))
		}
	}
	checkLoopbackOnly(t, "svc", s, backend...)
	if problems := loadSettings(t, environment(s)); len(problems) > 0 {
		t.Errorf("its settings do not load: %q", problems)
	}
	if s.StopGracePeriod == nil || time.Duration(*s.StopGracePeriod) <= 30*time.Second {
		t.Errorf("stop_grace_period %v, want more than SVC_SHUTDOWN_TIMEOUT's 30s", s.StopGracePeriod)
	}
}

func TestComposeScaled(t *testing.T) {
	for name := range composeSecrets {
		t.Run("needs "+name, func(t *testing.T) {
			env := map[string]string{}
			for k, v := range composeSecrets {
				env[k] = v
			}
			delete(env, name)
			if _, err := loadCompose(t, "compose.scaled.yaml", env); err == nil || !strings.Contains(err.Error(), name) {
				t.Errorf("without %s: got %v, want an error naming it", name, err)
			}
		})
	}
	p, err := loadCompose(t, "compose.scaled.yaml", composeSecrets)
	if err != nil {
		t.Fatalf("compose.scaled.yaml: %v", err)
	}
	withOptional := maps.Clone(composeSecrets)
	maps.Copy(withOptional, composeOptional)
	q, err := loadCompose(t, "compose.scaled.yaml", withOptional)
	if err != nil {
		t.Fatalf("compose.scaled.yaml with the webhooks and the chain key set: %v", err)
	}
	for name, s := range svcServices(q) {
		env := environment(s)
		for k, v := range composeOptional {
			if env[k] != v {
				t.Errorf("%s: %s = %q with it set in .env, want it passed through", name, k, env[k])
			}
		}
		if problems := loadSettings(t, env); len(problems) > 0 {
			t.Errorf("%s with the webhooks and the chain key set: its settings do not load: %q", name, problems)
		}
	}
	components := map[string][]string{}
	for name, s := range svcServices(p) {
		env := environment(s)
		components[env["SERVICE_TYPE"]] = append(components[env["SERVICE_TYPE"]], name)
		if _, built := componentPort(env["SERVICE_TYPE"]); !built {
			t.Errorf("%s: SERVICE_TYPE %q is not a component this build provides", name, env["SERVICE_TYPE"])
		}
		checkBuild(t, name, s)
		if problems := loadSettings(t, env); len(problems) > 0 {
			t.Errorf("%s: its settings do not load: %q", name, problems)
		}
		for _, store := range []string{"DATABASE_URL", "KEYSTORE_REDIS_URL"} {
			u, err := url.Parse(env[store])
			if err != nil || p.Services[u.Hostname()].Name == "" {
				t.Errorf("%s: %s %q does not name a service of the file", name, store, env[store])
				continue
			}
			dep, ok := s.DependsOn[u.Hostname()]
			if !ok || dep.Condition != types.ServiceConditionHealthy || p.Services[u.Hostname()].HealthCheck == nil {
				t.Errorf("%s: does not wait for %s to be healthy (depends_on %+v)", name, u.Hostname(), s.DependsOn)
			}
		}
		if len(s.Ports) > 0 {
			t.Errorf("%s publishes %+v: the components are reached through nginx", name, s.Ports)
		}
		if env["SERVICE_TYPE"] == config.Proxy && !slices.ContainsFunc(s.Volumes, func(v types.ServiceVolumeConfig) bool {
			return v.Type == "volume" && v.Source != "" && v.Target == "/data"
		}) {
			// The audit spool: what a killed proxy left there is forwarded
			// by its next start, if the data dir is still there.
			t.Errorf("%s: volumes %+v, want a named volume on /data (the audit spool)", name, s.Volumes)
		}
	}
	if len(components["proxy"]) != 2 || len(components["api-server"]) != 1 {
		t.Errorf("services per component %v, want two proxies and one api-server", components)
	}
	for _, c := range wire.Components() {
		// The bridge too: without one, the audit log never leaves Redis.
		if len(components[c]) == 0 {
			t.Errorf("services per component %v, want at least one for each built component %v", components, wire.Components())
			break
		}
	}
	checkNginx(t, p)
}

// upstreamServer matches an upstream's `server host:port;` in svc.conf.
var upstreamServer = regexp.MustCompile(`(?m)^\s*server\s+([\w.-]+):(\d+)\s*;`)

// checkNginx: nginx runs deploy/nginx/svc.conf, publishes the public server
// and keeps the internal one on loopback, and every upstream of svc.conf is
// a service of the file (on its component's port) or, for the components
// not built yet, an alias of nginx's.
func checkNginx(t *testing.T, p *types.Project) {
	t.Helper()
	ng, ok := p.Services["nginx"]
	if !ok {
		t.Fatal("no nginx service")
	}
	conf, _ := filepath.Abs(nginxConf)
	if !slices.ContainsFunc(ng.Volumes, func(v types.ServiceVolumeConfig) bool {
		return v.Source == conf && v.Target == "/etc/nginx/conf.d/default.conf" && v.ReadOnly
	}) {
		t.Errorf("nginx volumes %+v, want %s read-only as /etc/nginx/conf.d/default.conf", ng.Volumes, conf)
	}
	checkLoopbackOnly(t, "nginx", ng, 8081)
	if !slices.ContainsFunc(ng.Ports, func(pc types.ServicePortConfig) bool { return pc.Target == 80 }) {
		t.Errorf("nginx ports %+v, want the public server's 80 published", ng.Ports)
	}
	var aliases []string
	for _, n := range ng.Networks {
		if n != nil {
			aliases = append(aliases, n.Aliases...)
		}
	}
	b, err := os.ReadFile(nginxConf)
	if err != nil {
		t.Fatal(err)
	}
	servers := upstreamServer.FindAllStringSubmatch(string(b), -1)
	if len(servers) < 6 {
		t.Fatalf("found %d upstream servers in %s, want every component's", len(servers), nginxConf)
	}
	reached := map[string]bool{}
	for _, m := range servers {
		host, port := m[1], m[2]
		s, isService := svcServices(p)[host]
		switch {
		case isService && slices.Contains(aliases, host):
			t.Errorf("%s is a service and an alias of nginx: remove the alias (nginx would send half its requests to itself)", host)
		case isService:
			component := environment(s)["SERVICE_TYPE"]
			reached[component] = true
			if want, _ := componentPort(component); strconv.Itoa(want) != port {
				t.Errorf("svc.conf sends to %s:%s, but %s runs %s on %d", host, port, host, component, want)
			}
		case slices.Contains(aliases, host):
			if want := plannedPort(host); strconv.Itoa(want) != port {
				t.Errorf("svc.conf sends to %s:%s, want the port of the component %s, %d", host, port, host, want)
			}
		default:
			t.Errorf("svc.conf sends to %s, which is neither a service of compose.scaled.yaml nor an alias of its nginx", host)
		}
	}
	for _, c := range wire.Components() {
		if !reached[c] {
			t.Errorf("no upstream of svc.conf reaches the %s services", c)
		}
	}
}

// plannedPort is the default port of the component name (or one of its
// aliases) names; 0 if none.
func plannedPort(name string) int {
	for _, c := range config.Components {
		if c.Name == name || slices.Contains(c.Aliases, name) {
			return c.DefaultPort
		}
	}
	return 0
}
