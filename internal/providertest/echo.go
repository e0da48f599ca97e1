package providertest

import (
	"net/http"
	"strconv"
	"strings"
)

// HeaderEchoKey makes a fake answer one request with the status it names
// (400 to 599) and its provider's error body echoing the credential the
// request carried, as misbehaving providers do: in the message, and in the
// param and code where the provider's errors have them (OpenAI). Every fake
// (OpenAI, Anthropic, Gemini and Vertex AI, Cohere, Bedrock) honours it on
// every endpoint, after checking the credential (a wrong one is still 401).
// It is the upstream of the tests that check no provider key reaches a
// caller, a log or the audit log.
const HeaderEchoKey = "X-Fake-Echo-Key"

// echoStatus reads HeaderEchoKey: 0 without it; ok is false for a value that
// is not a status from 400 to 599.
func echoStatus(h http.Header) (status int, ok bool) {
	v := h.Get(HeaderEchoKey)
	if v == "" {
		return 0, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 400 || n > 599 {
		return 0, false
	}
	return n, true
}

// badEchoHeader is the message for a HeaderEchoKey value echoStatus refuses.
func badEchoHeader(h http.Header) string {
	return "providertest: bad " + HeaderEchoKey + " header " + strconv.Quote(h.Get(HeaderEchoKey)) + ": want a status from 400 to 599"
}

// receivedKey is the credential r carries: a bearer token, an api-key,
// x-api-key or x-goog-api-key header, a key query parameter, or a SigV4
// signature's access key id.
func receivedKey(r *http.Request) string {
	h := r.Header
	if tok, ok := bearer(h); ok {
		return tok
	}
	for _, k := range []string{"Api-Key", "X-Api-Key", "X-Goog-Api-Key"} {
		if v := h.Get(k); v != "" {
			return v
		}
	}
	if v := r.URL.Query().Get("key"); v != "" {
		return v
	}
	if cred, ok := strings.CutPrefix(h.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="); ok {
		id, _, _ := strings.Cut(cred, "/")
		return id
	}
	return ""
}

// echoMessage is an error message quoting key.
func echoMessage(key string) string {
	return "Invalid value for 'api_key': '" + key + "' is not a valid key for this request."
}
