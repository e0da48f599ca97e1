package kerberos

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/apierr"
	"github.com/svc-gateway/svc/internal/sso/kerberos/kdctest"
)

// negotiateHandler is the sign-in a route does with this package: the
// challenge without a token, Verify, the answer token, the username.
// answered counts the answer tokens sent.
func negotiateHandler(v *Verifier, answered *atomic.Int32) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok, ok := TokenFromAuthorization(r.Header.Get("Authorization"))
		if !ok {
			Challenge(w)
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		id, answer, err := v.Verify(r.Context(), tok)
		if err != nil {
			ae := apierr.From(err)
			ae.SetHeaders(w.Header())
			http.Error(w, ae.Code, ae.Status())
			return
		}
		if answer != "" {
			answered.Add(1)
		}
		SetResponseToken(w, answer)
		fmt.Fprint(w, id.Username)
	})
}

// testCurl signs in with curl --negotiate, whose GSS-API is MIT's: the
// AP-REQ of a kinit ticket verifies and curl asks for mutual
// authentication. (curl does not check the answer token of a 200; gss-client
// does, in testGSSClient.)
func testCurl(t *testing.T, k *kdctest.KDC, v *Verifier) {
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl")
	}
	if out, err := exec.Command(curl, "-V").Output(); err != nil || !strings.Contains(string(out), "SPNEGO") {
		t.Skip("curl has no SPNEGO support")
	}
	env := k.Kinit(t, testUser, testPassword)
	var answered atomic.Int32
	body, err := runCurl(t, curl, env, negotiateHandler(v, &answered))
	if err != nil {
		t.Fatalf("curl --negotiate: %v", err)
	}
	if body != testUser {
		t.Errorf("curl got %q, want the username %q", body, testUser)
	}
	if answered.Load() != 1 {
		t.Errorf("answer tokens sent: got %d, want 1 (curl asks for mutual authentication)", answered.Load())
	}
}

// runCurl serves h on 127.0.0.1 and fetches it as http://localhost (the
// service HTTP/localhost) with curl --negotiate.
func runCurl(t *testing.T, curl string, env []string, h http.Handler) (string, error) {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, curl, "-sS", "--fail", "--negotiate", "-u", ":", "http://localhost:"+port+"/")
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return string(out), errors.New(err.Error() + ": " + stderr.String())

	}
	return string(out), nil
}
