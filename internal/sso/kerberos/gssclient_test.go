package kerberos

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/sso/kerberos/kdctest"
)

// The framing of MIT's gss-sample programs (src/appl/gss-sample/gss-misc.h):
// a flags byte, a 4-byte big-endian length, the token.
const (
	gssTokenNoop        = 1 << 0
	gssTokenContext     = 1 << 1
	gssTokenContextNext = 1 << 4
)

// testGSSClient runs MIT's reference GSS-API initiator, gss-client
// (Debian's krb5-gss-samples), against an acceptor built on Verify. It asks
// for mutual authentication and completes its context only when our answer
// token holds an AP-REP it decrypts with its session key and that echoes
// its authenticator's time: with SPNEGO and with bare Kerberos. An answer
// made for another client's authenticator must make it fail.
func testGSSClient(t *testing.T, k *kdctest.KDC, v *Verifier) {
	gssClient, err := exec.LookPath("gss-client")
	if err != nil {
		t.Skip("no gss-client: apt-get install krb5-gss-samples")
	}
	env := k.Kinit(t, testUser, testPassword)
	for _, spnego := range []bool{true, false} {
		if out, err := runGSSClient(t, gssClient, env, v, spnego, nil); err != nil {
			t.Errorf("gss-client (spnego %v): %v\n%s", spnego, err, out)
		}
	}

	other := k.Client(t, testUser, testPassword)
	tkt, key, err := other.GetServiceTicket(testService)
	if err != nil {
		t.Fatal(err)
	}
	tok, _ := clientToken(t, tkt, key, testRealm, other.Credentials.CName(), reqOpts{mutual: true})
	_, wrong, err := v.Verify(context.Background(), tok)
	if err != nil {
		t.Fatal(err)
	}
	if out, err := runGSSClient(t, gssClient, env, v, true, func(string) string { return wrong }); err == nil {
		t.Errorf("gss-client accepted an answer made for another authenticator:\n%s", out)
	}
}

// runGSSClient serves one gss-client connection and runs gss-client for
// the service HTTP@localhost; mangle, when set, replaces the answer token.
func runGSSClient(t *testing.T, gssClient string, env []string, v *Verifier, spnego bool, mangle func(string) string) (string, error) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	served := make(chan error, 1)
	go func() { served <- gssAcceptOne(l, v, mangle) }()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	args := []string{"-port", port, "-mcount", "0"}
	if spnego {
		args = append(args, "-spnego")
	}
	cmd := exec.CommandContext(ctx, gssClient, append(args, "127.0.0.1", "HTTP@localhost", "hello")...)
	cmd.Env = env
	out, runErr := cmd.CombinedOutput()
	l.Close()
	if err := <-served; err != nil && runErr == nil {
		return string(out), fmt.Errorf("acceptor: %w", err)
	}
	return string(out), runErr
}

// gssAcceptOne accepts one gss-client connection: the context token is
// verified with v and the answer sent back as the context reply.
func gssAcceptOne(l net.Listener, v *Verifier, mangle func(string) string) error {
	c, err := l.Accept()
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	r := bufio.NewReader(c)
	if flags, _, err := readGSSToken(r); err != nil || flags != gssTokenNoop|gssTokenContextNext {
		return fmt.Errorf("first token: flags %#x, %v", flags, err)
	}
	flags, tok, err := readGSSToken(r)
	if err != nil || flags != gssTokenContext {
		return fmt.Errorf("context token: flags %#x, %v", flags, err)
	}
	id, answer, err := v.Verify(context.Background(), base64.StdEncoding.EncodeToString(tok))
	if err != nil {
		return err
	}
	if id.Username != testUser || answer == "" {
		return fmt.Errorf("got user %q and answer %q, want %q and an answer (gss-client asks for mutual authentication)", id.Username, answer, testUser)
	}
	if mangle != nil {
		answer = mangle(answer)
	}
	b, err := base64.StdEncoding.DecodeString(answer)
	if err != nil {
		return err
	}
	if err := writeGSSToken(c, gssTokenContext, b); err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, r) // gss-client's closing no-op, then EOF
	return nil
}

func readGSSToken(r *bufio.Reader) (byte, []byte, error) {
	var hdr [5]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[1:])
	if n > MaxTokenBytes {
		return 0, nil, fmt.Errorf("token of %d bytes", n)
	}
	b := make([]byte, n)
	_, err := io.ReadFull(r, b)
	return hdr[0], b, err
}

func writeGSSToken(w io.Writer, flags byte, tok []byte) error {
	hdr := []byte{flags, 0, 0, 0, 0}
	binary.BigEndian.PutUint32(hdr[1:], uint32(len(tok)))
	_, err := w.Write(append(hdr, tok...))
	return err
}
