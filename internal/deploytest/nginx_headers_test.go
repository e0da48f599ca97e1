package deploytest

import (
	"os"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/sso"
)

// TestNginxClearsIdentityHeaders: deploy/nginx/svc.conf clears every header
// sign-in trusts from an authenticating proxy, so a client cannot set one
// through it — the list in svc.conf is checked against sso's own.
func TestNginxClearsIdentityHeaders(t *testing.T) {
	b, err := os.ReadFile(nginxConf)
	if err != nil {
		t.Fatal(err)
	}
	conf := string(b)
	for _, h := range sso.TrustedHeaders() {
		if !strings.Contains(conf, "proxy_set_header "+h+` "";`) {
			t.Errorf("svc.conf does not clear %s: a client could sign in as anyone through nginx", h)
		}
	}
}
