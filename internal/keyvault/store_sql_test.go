package keyvault_test

import (
	"testing"

	"github.com/svc-gateway/svc/internal/keyvault"
	"github.com/svc-gateway/svc/internal/store/sqlstore"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// TestSQLStoreConformance runs storetest.ExerciseProviderKeyStore on the SQL store, on SQLite and (with
// SVC_TEST_DATABASE_URL) PostgreSQL.
func TestSQLStoreConformance(t *testing.T) {
	storetest.EachSQL(t, func(t *testing.T, db *sqlstore.DB) {
		storetest.ExerciseProviderKeyStore(t, keyvault.NewSQLStore(db))
	})
}
