package main

import (
	"bytes"
	"testing"

	"github.com/svc-gateway/svc/internal/compliance"
	"github.com/svc-gateway/svc/internal/compliance/model"
)

// TestEmbeddedModelIsUpToDate: the embedded weights and held-out set are
// what training on the quality sets with svc's detectors gives today, byte
// for byte. A change to the sets, the detectors or the trainer fails it
// until `go generate ./internal/compliance/model` is run.
func TestEmbeddedModelIsUpToDate(t *testing.T) {
	eng, err := compliance.NewDefault()
	if err != nil {
		t.Fatal(err)
	}
	res, err := model.Train(TrainConfig("../../quality/testdata", eng))
	if err != nil {
		t.Fatal(err)
	}
	weights, heldout := model.Embedded()
	if !bytes.Equal(res.Weights, weights) {
		t.Errorf("weights.bin is not what training gives now: run go generate ./internal/compliance/model")
	}
	if !bytes.Equal(res.Heldout, heldout) {
		t.Errorf("heldout.bin is not what training gives now: run go generate ./internal/compliance/model")
	}
}
