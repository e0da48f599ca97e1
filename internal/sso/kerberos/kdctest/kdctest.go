// Package kdctest runs a real MIT Kerberos KDC (Debian's krb5-kdc) for
// tests: a realm in a temp dir on a free loopback port, a service
// principal with its keytab, users with passwords, and SPNEGO tokens made
// for them with gokrb5's client. It serves the tests of
// internal/sso/kerberos and svc's end-to-end sign-in tests. Start skips the
// test when the MIT binaries are absent or the KDC cannot start.
package kdctest

import (
	"bytes"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The realm Start makes.
const (
	// Realm is the realm's name.
	Realm = "TEST.SVC"
	// User and Password are the user every realm has (Users holds all).
	User     = "alice"
	Password = "alice-Pw-1"
	// Service is the service principal (without the realm) whose keys
	// KeytabPath holds; curl and gss-client name it HTTP@localhost.
	Service = "HTTP/localhost"
	// OtherService is a service principal of the realm whose keys are in
	// no keytab: its tickets are for another service.
	OtherService = "HTTP/other.host"
)

// users are the realm's users and their passwords.
var users = map[string]string{User: Password, "bob": "bob-Pw-2"}

// KDC is a running KDC and the files of its realm. It stops when the test
// that started it ends.
type KDC struct {
	// Realm is the realm's name (the constant Realm).
	Realm string
	// Dir holds the realm's database, configuration, keytabs and log.
	Dir string
	// Conf is the krb5.conf text (for gokrb5 and the MIT tools); ConfPath
	// the file holding it.
	Conf     string
	ConfPath string
	// Env is the environment of the MIT tools: KRB5_CONFIG and
	// KRB5_KDC_PROFILE on top of the process's.
	Env []string
	// KeytabPath is the keytab of ServicePrincipal.
	KeytabPath string
	// ServicePrincipal is Service@Realm, as svc's
	// sso.kerberos.service_principal names it.
	ServicePrincipal string
	// Users maps each user the realm has to their password.
	Users map[string]string
	// Addr is the KDC's address (TCP and UDP), 127.0.0.1:port.
	Addr string
}

// tools are the MIT programs Start needs.
var tools = []string{"krb5kdc", "kdb5_util", "kadmin.local"}

// Start makes the realm and starts krb5kdc in the foreground; the test is
// skipped, with the reason, when the binaries are missing or the KDC does
// not start.
func Start(t testing.TB) *KDC {
	t.Helper()
	paths := map[string]string{}
	for _, name := range tools {
		p, err := mitTool(name)
		if err != nil {
			t.Skipf("no MIT KDC (%v): apt-get install krb5-kdc krb5-admin-server to run the Kerberos tests", err)
		}
		paths[name] = p
	}
	var lastErr error
	for range 3 { // a free port can be taken between the probe and the KDC's bind
		k, err := tryStart(t, paths)
		if err == nil {
			return k
		}
		lastErr = err
	}
	t.Skipf("the MIT KDC could not start: %v", lastErr)
	return nil
}

// mitTool finds an MIT Kerberos program on PATH or in /usr/sbin.
func mitTool(name string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	p := filepath.Join("/usr/sbin", name)
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("%s not found on PATH or in /usr/sbin", name)
	}
	return p, nil
}

func tryStart(t testing.TB, paths map[string]string) (*KDC, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	dir := t.TempDir()
	k := &KDC{Realm: Realm, Dir: dir, ConfPath: filepath.Join(dir, "krb5.conf"), KeytabPath: filepath.Join(dir, "svc.keytab"),
		ServicePrincipal: Service + "@" + Realm, Users: maps.Clone(users), Addr: fmt.Sprintf("127.0.0.1:%d", port)}
	k.Conf = krb5Conf(port)
	kdcConf := filepath.Join(dir, "kdc.conf")
	if err := os.WriteFile(k.ConfPath, []byte(k.Conf), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(kdcConf, []byte(kdcConfText(dir, port)), 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "kadm5.acl"), nil, 0o600); err != nil {
		return nil, err
	}
	k.Env = append(os.Environ(), "KRB5_CONFIG="+k.ConfPath, "KRB5_KDC_PROFILE="+kdcConf)
	if _, err := k.run(paths["kdb5_util"], "", "create", "-s", "-P", "master-Pw-1", "-r", Realm); err != nil {
		return nil, err
	}
	cmds := []string{"addprinc -randkey " + Service, "addprinc -randkey " + OtherService, "ktadd -k " + k.KeytabPath + " " + Service}
	for u, pw := range users {
		cmds = append(cmds, "addprinc -pw "+pw+" "+u)
	}
	if err := k.admin(paths["kadmin.local"], cmds...); err != nil {
		return nil, err
	}
	if err := k.serve(t, paths["krb5kdc"]); err != nil {
		return nil, err
	}
	return k, nil
}

// krb5Conf is the client configuration: TCP only, no DNS, localhost in the
// realm (for curl's HTTP@localhost).
func krb5Conf(port int) string {
	return fmt.Sprintf(`[libdefaults]
 default_realm = %[1]s
 dns_lookup_kdc = false
 dns_lookup_realm = false
 dns_canonicalize_hostname = false
 rdns = false
 udp_preference_limit = 1
 default_tkt_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
 default_tgs_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
 permitted_enctypes = aes256-cts-hmac-sha1-96 aes128-cts-hmac-sha1-96
[realms]
 %[1]s = {
  kdc = 127.0.0.1:%[2]d
 }
[domain_realm]
 localhost = %[1]s
`, Realm, port)
}

// kdcConfText is the KDC's profile: loopback only, everything in dir.
func kdcConfText(dir string, port int) string {
	return fmt.Sprintf(`[kdcdefaults]
 kdc_listen = 127.0.0.1:%[2]d
 kdc_tcp_listen = 127.0.0.1:%[2]d
[realms]
 %[3]s = {
  database_name = %[1]s/principal
  key_stash_file = %[1]s/stash
  acl_file = %[1]s/kadm5.acl
  max_life = 1h
  supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
 }
[logging]
 kdc = FILE:%[1]s/kdc.log
`, dir, port, Realm)
}

// freePort is a TCP and UDP port free on 127.0.0.1 at the time of asking.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		return 0, err
	}
	u.Close()
	return port, nil
}

// run runs an MIT tool with the realm's environment and stdin.
func (k *KDC) run(tool, stdin string, args ...string) (string, error) {
	cmd := exec.Command(tool, args...)
	cmd.Env, cmd.Dir = k.Env, k.Dir
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s %s: %v: %s", filepath.Base(tool), strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// admin runs kadmin.local commands (one -q takes one command; stdin takes
// several) and fails on any error line.
func (k *KDC) admin(tool string, cmds ...string) error {
	out, err := k.run(tool, strings.Join(cmds, "\n")+"\n", "-r", Realm)
	if err != nil {
		return err
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "while ") || strings.Contains(line, "rror") {
			return fmt.Errorf("kadmin.local: %s", out)
		}
	}
	return nil
}

// Kadmin runs kadmin.local commands on the realm ("addprinc -randkey
// HTTP/x", "ktadd -k path HTTP/x"); the test fails on any error.
func (k *KDC) Kadmin(t testing.TB, cmds ...string) {
	t.Helper()
	tool, err := mitTool("kadmin.local")
	if err != nil {
		t.Fatal(err)
	}
	if err := k.admin(tool, cmds...); err != nil {
		t.Fatal(err)
	}
}

// serve starts krb5kdc -n and waits until it accepts TCP connections.
func (k *KDC) serve(t testing.TB, tool string) error {
	var out bytes.Buffer
	cmd := exec.Command(tool, "-n", "-r", Realm)
	cmd.Env, cmd.Dir = k.Env, k.Dir
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		select {
		case err := <-exited:
			kdcLog, _ := os.ReadFile(filepath.Join(k.Dir, "kdc.log"))
			return fmt.Errorf("krb5kdc exited (%v): %s %s", err, out.String(), kdcLog)
		default:
		}
		if c, err := net.DialTimeout("tcp", k.Addr, 200*time.Millisecond); err == nil {
			c.Close()
			t.Cleanup(stop)
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	return fmt.Errorf("krb5kdc did not listen on %s within 5s: %s", k.Addr, out.String())
}

// Kinit gets user a ticket cache with MIT's kinit, for MIT's GSS-API
// clients (curl --negotiate, gss-client), and returns their environment
// (Env with KRB5CCNAME); the test is skipped without kinit (Debian's
// krb5-user).
func (k *KDC) Kinit(t testing.TB, user, password string) []string {
	t.Helper()
	kinit, err := exec.LookPath("kinit")
	if err != nil {
		t.Skip("no kinit: apt-get install krb5-user")
	}
	env := append(append([]string{}, k.Env...), "KRB5CCNAME=FILE:"+filepath.Join(k.Dir, user+".ccache"))
	cmd := exec.Command(kinit, user+"@"+Realm)
	cmd.Env, cmd.Stdin = env, strings.NewReader(password+"\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kinit: %v: %s", err, out)
	}
	return env
}
