package alerts

import (
	"github.com/svc-gateway/svc/internal/egress"

	"fmt"
	"net/url"
	"strings"
)

// CheckWebhookURL checks the webhook URL of setting (its name, for the
// message): an https:// URL with a host, or an http:// URL to a loopback
// address (localhost, 127.0.0.0/8, ::1: local receivers and tests). ""
// (the platform is off) is valid. The message never quotes the URL: a
// webhook URL is a credential.
func CheckWebhookURL(setting, raw string) error {
	if raw == "" {
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || u.Opaque != "" {
		return fmt.Errorf("%s: must be an https:// URL with a host (http:// only to a loopback address)", setting)
	}
	if u.User != nil {
		return fmt.Errorf("%s: must not carry a user or password", setting)
	}
	switch strings.ToLower(u.Scheme) {
	case "https":
		return nil
	case "http":
		if egress.IsLoopbackHost(u.Hostname()) {
			return nil
		}
		return fmt.Errorf("%s: http:// is allowed only to a loopback address (localhost, 127.0.0.1, ::1); use https://", setting)
	}
	return fmt.Errorf("%s: must be an https:// URL, got scheme %q", setting, u.Scheme)
}
