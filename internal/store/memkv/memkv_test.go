package memkv_test

import (
	"testing"

	"github.com/svc-gateway/svc/internal/store/memkv"
	"github.com/svc-gateway/svc/internal/store/storetest"
)

// open is a new, empty KV; the suites close it.
func open(*testing.T) *memkv.KV { return memkv.New() }

func TestValues(t *testing.T)   { storetest.ExerciseValues(t, open) }
func TestCounters(t *testing.T) { storetest.ExerciseCounters(t, open) }
func TestLogs(t *testing.T)     { storetest.ExerciseLogs(t, open) }
func TestBus(t *testing.T)      { storetest.ExerciseBus(t, open) }
