package sqlstore_test

import (
	"testing"

	"github.com/svc-gateway/svc/internal/store/storetest"
)

func TestRoutingStoreConformance(t *testing.T) {
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			storetest.ExerciseRoutingStore(t, open(t, b.url(t)))
		})
	}
}
