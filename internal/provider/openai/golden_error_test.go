package openai_test

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/svc-gateway/svc/internal/apierr"
)

// This file holds the error half of TestGolden: want_error.json and the
// checks that no credential reaches the caller.

// keyLike finds credentials in a provider's answer.
var keyLike = regexp.MustCompile(`(sk|pk|rk)-[A-Za-z0-9_\-]{6,}`)

// checkNoLeak checks that no credential in the provider's answer reaches the
// caller, and that on 401 and 403 the provider's message is not relayed at
// all (providers echo parts of the key in it).
func checkNoLeak(t *testing.T, status int, body []byte, e *apierr.Error) {
	t.Helper()
	sent := string(apierr.JSON(e)) + "\n" + e.Error()
	for _, k := range keyLike.FindAll(body, -1) {
		if strings.Contains(sent, string(k)) {
			t.Errorf("the provider's %q reaches the caller or the log: %s", k, sent)
		}
	}
	if status != http.StatusUnauthorized && status != http.StatusForbidden {
		return
	}
	var b struct {
		Error struct {
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &b) == nil && b.Error.Message != "" && strings.Contains(sent, b.Error.Message) {
		t.Errorf("HTTP %d: the provider's message %q is relayed: %s", status, b.Error.Message, sent)
	}
}
