package keyvault

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/secret"
)

// recognisable is a provider key whose every appearance is easy to spot.
const recognisable = "sk-proj-RECOGNISABLE-0123456789-RECOGNISABLE-0123456789"

// The clear key appears nowhere but in Key's answer: not in the stored
// record, not in any error, not in any printed or logged form of the types
// that held it.
func TestClearKeyNeverLeaks(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	kv := &pubsubKV{buffer: 4}
	v := New(st, testSealer(1), kv, nil)

	var outputs []string
	check := func(what string, vals ...any) {
		t.Helper()
		for _, val := range vals {
			var logged bytes.Buffer
			slog.New(slog.NewTextHandler(&logged, nil)).Info("x", "v", val)
			slog.New(slog.NewJSONHandler(&logged, nil)).Info("x", "v", val)
			js, _ := json.Marshal(val)
			for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%d"} {
				outputs = append(outputs, what+" "+verb+": "+fmt.Sprintf(verb, val))
			}
			outputs = append(outputs, what+" json: "+string(js), what+" log: "+logged.String())
			if err, ok := val.(error); ok {
				outputs = append(outputs, what+" Error: "+err.Error())
			}
		}
	}

	rec, err := v.Put(ctx, "openai", recognisable)
	if err != nil {
		t.Fatal(err)
	}
	check("Put record", rec, &rec)
	if got, err := v.Key(ctx, "openai"); err != nil || got != recognisable {
		t.Fatalf("Key: got (%q, %v), want the key", got, err)
	}
	check("Vault with the key cached", v)

	stored, err := st.ProviderKey(ctx, "openai")
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored.Sealed, []byte("RECOGNISABLE")) {
		t.Errorf("sealed bytes contain the clear key")
	}
	check("stored record", stored, &stored)

	list, err := v.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	check("List", list)

	// Validation errors of keys that contain the recognisable part.
	for _, bad := range []string{recognisable + "\n", " " + recognisable, recognisable + "\x00", recognisable + strings.Repeat("x", MaxKeyLen)} {
		_, err := v.Put(ctx, "openai", bad)
		if err == nil {
			t.Fatalf("Put of an invalid key: got nil, want an error")
		}
		check("validation error", err)
	}
	_, err = v.Put(ctx, "Bad Name", recognisable)
	check("provider validation error", err)

	// Errors opening the key: wrong master key, and a record moved to another
	// provider.
	wrongKey := New(st, testSealer(9), kv, nil)
	_, err = wrongKey.Key(ctx, "openai")
	if !errors.Is(err, secret.ErrDecrypt) {
		t.Fatalf("wrong master key: got %v, want secret.ErrDecrypt", err)
	}
	check("wrong master key error", err)
	moved := stored
	moved.Provider = "anthropic"
	if err := st.PutProviderKey(ctx, moved); err != nil {
		t.Fatal(err)
	}
	_, err = v.Key(ctx, "anthropic")
	if !errors.Is(err, secret.ErrDecrypt) {
		t.Fatalf("record moved to another provider: got %v, want secret.ErrDecrypt", err)
	}
	check("moved record error", err)

	// Publish failure after a successful store.
	kv.publishErr = errors.New("kv down")
	_, err = v.Put(ctx, "openai", recognisable)
	if !errors.Is(err, ErrNotPublished) {
		t.Fatalf("Put with the KV down: got %v, want ErrNotPublished", err)
	}
	check("publish error", err)

	for _, out := range outputs {
		for _, needle := range []string{recognisable, "RECOGNISABLE", fmt.Sprintf("%x", "RECOGNISABLE")} {
			if strings.Contains(strings.ToUpper(out), strings.ToUpper(needle)) {
				t.Errorf("%s", out)
			}
		}
	}
}
