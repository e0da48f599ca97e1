package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestUsage(t *testing.T) {
	for _, tc := range []struct {
		args        []string
		code        int
		out, errOut string
	}{
		{[]string{"serve", "--help"}, 0, "usage: svc serve", ""},
		{[]string{"serve", "-h"}, 0, "usage: svc serve", ""},
		{[]string{"serve", "--no-such-flag"}, 2, "", "flag provided but not defined: -no-such-flag"},
		{[]string{"serve", "extra"}, 2, "", `unexpected argument "extra"`},
		{[]string{"help"}, 0, "usage: svc <command>", ""},
		{[]string{"-h"}, 0, "usage: svc <command>", ""},
		{[]string{"launch"}, 2, "", `unknown command "launch"`},
		{[]string{"version"}, 0, "svc ", ""},
		{[]string{"version", "x"}, 2, "", `unexpected argument "x"`},
	} {
		var out, errOut bytes.Buffer
		code := run(tc.args, &out, &errOut)
		if code != tc.code || !strings.Contains(out.String(), tc.out) || !strings.Contains(errOut.String(), tc.errOut) {
			t.Errorf("svc %s: exit %d, stdout %q, stderr %q; want exit %d, stdout with %q, stderr with %q",
				strings.Join(tc.args, " "), code, out.String(), errOut.String(), tc.code, tc.out, tc.errOut)
		}
	}
}

func TestVersionFromBuildInfo(t *testing.T) {
	v := version()
	// Test binaries carry build information with the toolchain's version.
	if !strings.HasPrefix(v, "svc ") || !strings.Contains(v, "go1.") {
		t.Errorf("version() = %q, want the module version and the Go version", v)
	}
}

// TestStartFailures: a start that cannot complete says why and exits 1,
// without a panic and without leaving anything running.
func TestStartFailures(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)
	file := filepath.Join(t.TempDir(), "a-file")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		env  map[string]string
		want string
	}{
		{"taken port", map[string]string{"PROXY_PORT": port}, "listen 127.0.0.1:" + port},
		{"data dir not writable", map[string]string{"SVC_DATA_DIR": filepath.Join(file, "data")}, "SVC_DATA_DIR"},
		{"database unreachable", map[string]string{"DATABASE_URL": "postgres://svc@127.0.0.1:1/svc?connect_timeout=2",
			"SVC_MASTER_KEY": strings.Repeat("ab", 32), "ADMIN_API_KEY": "0123456789abcdef0123"}, "DATABASE_URL"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("SVC_DATA_DIR", t.TempDir())
			t.Setenv("SVC_HOST", "127.0.0.1")
			t.Setenv("PROXY_PORT", "0")
			t.Setenv("MANAGEMENT_PORT", "0")
			t.Setenv("BRIDGE_PORT", "0")
			t.Setenv("COMPLIANCE_PORT", "0")
			t.Setenv("POLICY_PORT", "0")
			t.Setenv("SVC_CONFIG", "")
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			var out, errOut bytes.Buffer
			code := run([]string{"serve"}, &out, &errOut)
			if code != 1 || !strings.Contains(errOut.String(), tc.want) || strings.Contains(errOut.String(), "panic") {
				t.Errorf("exit %d, stderr %q; want exit 1 naming %s", code, errOut.String(), tc.want)
			}
		})
	}
}
