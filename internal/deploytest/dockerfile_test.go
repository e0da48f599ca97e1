package deploytest

import (
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/svc-gateway/svc/internal/config"
	"github.com/svc-gateway/svc/internal/wire"
)

// instruction is one Dockerfile instruction, its continuation lines joined.
type instruction struct{ cmd, args string }

// readDockerfile parses the repository's Dockerfile into its instructions
// (comments dropped, `\` continuations joined as Docker joins them).
func readDockerfile(t *testing.T) []instruction {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var out []instruction
	var cur strings.Builder
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		if rest, ok := strings.CutSuffix(line, "\\"); ok {
			cur.WriteString(rest)
			continue
		}
		cur.WriteString(line)
		if s := strings.TrimSpace(cur.String()); s != "" {
			cmd, args, _ := strings.Cut(s, " ")
			out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
		}
		cur.Reset()
	}
	return out
}

// find returns the args of every instruction cmd, in order.
func find(ins []instruction, cmd string) []string {
	var out []string
	for _, in := range ins {
		if in.cmd == cmd {
			out = append(out, in.args)
		}
	}
	return out
}

// TestDockerfile checks the image's recipe statically (no container engine
// here): a static build with the Go go.mod asks for, a non-root final
// stage with the data dir on a volume, the components' ports and a health
// check.
func TestDockerfile(t *testing.T) {
	ins := readDockerfile(t)
	froms := find(ins, "FROM")
	if len(froms) != 2 || !strings.HasPrefix(froms[0], "golang:") || !strings.HasSuffix(froms[0], " AS build") || !strings.HasPrefix(froms[1], "alpine:") {
		t.Errorf("FROM %q, want a golang build stage and an alpine final stage", froms)
	}
	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	goVersion := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	if goVersion == nil || !slices.Contains(find(ins, "ARG"), "GO_VERSION="+string(goVersion[1])) {
		t.Errorf("ARGs %q: want GO_VERSION=%s, the Go of go.mod", find(ins, "ARG"), goVersion[1])
	}
	build := strings.Join(find(ins, "RUN"), "\n")
	for _, want := range []string{"CGO_ENABLED=0", `go build -trimpath -ldflags "-s -w"`, "./cmd/svc", "ca-certificates"} {
		if !strings.Contains(build, want) {
			t.Errorf("the RUN steps do not contain %q", want)
		}
	}
	final := ins[slices.IndexFunc(ins, func(in instruction) bool { return in.cmd == "FROM" && strings.HasPrefix(in.args, "alpine:") }):]
	users := find(final, "USER")
	if len(users) != 1 || users[0] == "root" || strings.HasPrefix(users[0], "0") {
		t.Errorf("final stage USER %q, want one non-root user", users)
	}
	if env := find(final, "ENV"); !slices.Contains(env, "SVC_DATA_DIR=/data") {
		t.Errorf("ENV %q, want SVC_DATA_DIR=/data", env)
	}
	if vol := find(final, "VOLUME"); !slices.Contains(vol, `["/data"]`) {
		t.Errorf("VOLUME %q, want [\"/data\"]", vol)
	}
	var want []string
	for _, c := range config.Components {
		want = append(want, strconv.Itoa(c.DefaultPort))
	}
	slices.Sort(want)
	exposed := strings.Fields(strings.Join(find(final, "EXPOSE"), " "))
	slices.Sort(exposed)
	if !slices.Equal(exposed, want) {
		t.Errorf("EXPOSE %v, want the components' ports %v", exposed, want)
	}
	if ep := find(final, "ENTRYPOINT"); len(ep) != 1 || !strings.Contains(ep[0], "/usr/local/bin/svc") || !strings.Contains(build+strings.Join(find(final, "COPY"), " "), "/usr/local/bin/svc") {
		t.Errorf("ENTRYPOINT %q, want the svc binary the final stage copies", ep)
	}
}

// TestDockerfileHealthCheck runs the image's HEALTHCHECK command with sh and
// wget (busybox's in the image, GNU's here: the same flags) against a
// server standing in for svc's /health, for each layout it tells apart.
func TestDockerfileHealthCheck(t *testing.T) {
	hc := find(readDockerfile(t), "HEALTHCHECK")
	if len(hc) != 1 {
		t.Fatalf("HEALTHCHECK %q, want one", hc)
	}
	_, cmd, ok := strings.Cut(hc[0], "CMD ")
	if !ok || !strings.Contains(cmd, "/health") {
		t.Fatalf("HEALTHCHECK %q, want a CMD that asks /health", hc[0])
	}
	if _, err := exec.LookPath("wget"); err != nil {
		t.Skip("wget is not on PATH: cannot run the health check's command")
	}
	var status atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(int(status.Load()))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	run := func(env ...string) error {
		c := exec.Command("sh", "-c", cmd)
		c.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
		return c.Run()
	}
	type layout struct {
		name string
		env  []string
	}
	layouts := []layout{{"all components: the proxy's port", []string{"PROXY_PORT=" + port}}}
	for _, c := range wire.Components() {
		// Each built component alone: its own port, the others' closed.
		l := layout{name: c + " alone", env: []string{"SERVICE_TYPE=" + c}}
		for _, spec := range config.Components {
			p := "1"
			if spec.Name == c {
				p = port
			}
			l.env = append(l.env, spec.PortSetting+"="+p)
		}
		layouts = append(layouts, l)
	}
	for _, tc := range layouts {
		t.Run(tc.name, func(t *testing.T) {
			status.Store(http.StatusOK)
			if err := run(tc.env...); err != nil {
				t.Errorf("healthy: the check failed: %v", err)
			}
			status.Store(http.StatusServiceUnavailable)
			if err := run(tc.env...); err == nil {
				t.Error("/health answering 503: the check passed")
			}
		})
	}
}

// TestDockerContextBuilds builds ./cmd/svc as the Dockerfile does, from only
// the files .dockerignore lets into the build context, so a file the build
// needs (an embedded one) cannot be left out of the image.
func TestDockerContextBuilds(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	rules := dockerignore(t)
	dir := t.TempDir()
	n := 0
	err := filepath.WalkDir(repoRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if d.Name() == ".git" && d.IsDir() {
			return filepath.SkipDir
		}
		if d.IsDir() || !inContext(rules, filepath.ToSlash(rel)) {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		dst := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		return os.WriteFile(dst, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"go.mod", "go.sum", "cmd/svc/main.go"} {
		if _, err := os.Stat(filepath.Join(dir, must)); err != nil {
			t.Errorf(".dockerignore leaves %s out of the build context", must)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "cmd/svc/main_test.go")); err == nil {
		t.Error(".dockerignore sends test files into the build context")
	}
	cmd := exec.Command("go", "build", "-trimpath", "-o", filepath.Join(t.TempDir(), "svc"), "./cmd/svc")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("go build in the build context (%d files) failed: %v\n%s", n, err, out)
	}
}

// ignoreRule is one line of .dockerignore: a pattern, and whether it puts
// paths back in (!).
type ignoreRule struct {
	re      *regexp.Regexp
	include bool
}

// dockerignore reads .dockerignore's rules. Patterns are Docker's: `*` and
// `?` within a path element, `**` across elements; a pattern matches a path
// or any directory above it; the last matching rule decides.
func dockerignore(t *testing.T) []ignoreRule {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(repoRoot, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	var rules []ignoreRule
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		r := ignoreRule{}
		if rest, ok := strings.CutPrefix(line, "!"); ok {
			line, r.include = rest, true
		}
		line = strings.TrimSuffix(strings.TrimPrefix(line, "/"), "/")
		var re strings.Builder
		for i := 0; i < len(line); i++ {
			switch {
			case strings.HasPrefix(line[i:], "**/"):
				re.WriteString("(.*/)?")
				i += 2
			case strings.HasPrefix(line[i:], "**"):
				re.WriteString(".*")
				i++
			case line[i] == '*':
				re.WriteString("[^/]*")
			case line[i] == '?':
				re.WriteString("[^/]")
			default:
				re.WriteString(regexp.QuoteMeta(line[i : i+1]))
			}
		}
		r.re = regexp.MustCompile("^" + re.String() + "$")
		rules = append(rules, r)
	}
	return rules
}

// inContext reports whether the build context holds path.
func inContext(rules []ignoreRule, path string) bool {
	in := true
	for _, r := range rules {
		for p := path; ; {
			if r.re.MatchString(p) {
				in = r.include
				break
			}
			i := strings.LastIndexByte(p, '/')
			if i < 0 {
				break
			}
			p = p[:i]
		}
	}
	return in
}
