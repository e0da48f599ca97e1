package access

import (
	"errors"
	"testing"
	"time"

	"github.com/svc-gateway/svc/internal/store/storetest"
)

// Following reports whether g's Run is subscribed to the change channel
// (tests only).
func Following(g *Grants) bool { return g.trust.Following() }

// Running runs g.Run until the test ends and waits until it follows the
// bus, so that it caches (tests only).
func Running(t *testing.T, g *Grants) *Grants {
	t.Helper()
	storetest.Background(t, g.Run)
	storetest.Eventually(t, 5*time.Second, func() error {
		if !g.trust.Following() {
			return errors.New("Run has not subscribed")
		}
		return nil
	})
	return g
}
