package memkv_test

import (
	"testing"

	"github.com/svc-gateway/svc/internal/store"
	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

func TestKV(t *testing.T) {
	storetest.ExerciseKV(t, func(t *testing.T) store.KV { return memkv.New() })
}
