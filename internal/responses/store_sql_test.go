package responses_test

import (
	"testing"

	"github.com/svc-gateway/svc/internal/responses"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// TestSQLStoreConformance runs storetest.ExerciseResponseStore on the SQL
// store, on SQLite and (with SVC_TEST_DATABASE_URL) PostgreSQL.
func TestSQLStoreConformance(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		storetest.ExerciseResponseStore(t, responses.NewSQLStore(db))
	})
}
