package main

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCommittedSetsAreGenerated: the files in ../testdata are what the
// generator writes, byte for byte (run `go generate` in
// internal/compliance/quality after changing it).
func TestCommittedSetsAreGenerated(t *testing.T) {
	files, err := build(injDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 9 {
		t.Errorf("generator writes %d files, want 9", len(files))
	}
	for name, want := range files {
		got, err := os.ReadFile(filepath.Join("..", "testdata", name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("testdata/%s differs from the generator's output; run go generate", name)
		}
	}
}

func TestValueHelpers(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"luhn 4111111111111111", luhnValid("4111111111111111")},
		{"iban GB82WEST12345698765432", ibanValid("GB82WEST12345698765432")},
		{"iban DE89370400440532013000", ibanValid("DE89370400440532013000")},
		{"not luhn 4111111111111112", !luhnValid("4111111111111112")},
		{"not iban GB83WEST12345698765432", !ibanValid("GB83WEST12345698765432")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.ok {
				t.Errorf("%s: got the wrong answer", tt.name)
			}
		})
	}
}

// TestTemplates: every placeholder of every template renders (none is left
// in braces) and every provider a split names has a key shape.
func TestTemplates(t *testing.T) {
	presTune, presHeld := presidioTemplates()
	for _, sp := range []struct {
		s         *split
		templates []template
	}{{tuneSplit(), append(tuneTemplates, presTune...)}, {heldOutSplit(), append(heldOutTemplates, presHeld...)}} {
		for _, p := range sp.s.providers {
			if apiKeys[p] == nil {
				t.Errorf("%s: provider %q has no key shape", sp.s.name, p)
			}
		}
		g := &gen{r: rand.New(rand.NewPCG(1, 2)), s: sp.s}
		for _, tm := range sp.templates {
			text, _ := g.render(tm.text)
			for tag := range typesOf(text) {
				t.Errorf("%s template %q: placeholder of %s left in %q", sp.s.name, tm.text, tag, text)
			}
			if strings.Contains(text, "{KEY") || strings.Contains(text, "{PERSON") {
				t.Errorf("%s template %q: placeholder left in %q", sp.s.name, tm.text, text)
			}
		}
	}
}
