package route_test

import (
	"testing"

	"github.com/svc-gateway/svc/internal/route"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// TestSQLConfigStoreConformance runs storetest.ExerciseRoutingStore on the SQL store, on SQLite and (with
// SVC_TEST_DATABASE_URL) PostgreSQL.
func TestSQLConfigStoreConformance(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		storetest.ExerciseRoutingStore(t, route.NewSQLConfigStore(db))
	})
}
