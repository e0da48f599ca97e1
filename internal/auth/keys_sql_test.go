package auth_test

import (
	"testing"

	"github.com/svc-gateway/svc/internal/auth"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// TestSQLKeyStoreConformance runs storetest.ExerciseKeyStore on the SQL store, on SQLite and (with
// SVC_TEST_DATABASE_URL) PostgreSQL.
func TestSQLKeyStoreConformance(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		storetest.ExerciseKeyStore(t, auth.NewSQLKeyStore(db))
	})
}
